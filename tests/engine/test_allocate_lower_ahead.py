"""An allocation's secant step, likely its search's last, has pld compose the lower end of that
scale's bracket beside its upper end where the engine's offload runner takes it (the engine
process's helper, idle during the search): the forward check then reads it instead of composing
it. The allocation is the same to the bit with or without a runner."""

from __future__ import annotations

import importlib

from dpplanner.engine import offload
from dpplanner.engine.memo import forget


def _benchmark_edits(edits: int = 3):
    """synthetic-100's first benchmark edits (statistic 7i pinned at 1.05 / 0.95 of its epsilon),
    each redistributed: the epsilons after each."""
    from dpplanner.model import files
    from dpplanner.model.examples import example_path
    from dpplanner.model.redistribution import allocated

    plan = files.load_plan(example_path("synthetic-100"))
    stats, out = list(plan.statistics), []
    for i in range(edits):
        row = 7 * i % len(stats)
        scaled = stats[row].epsilon * (1.05 if i % 2 == 0 else 0.95)
        stats[row] = stats[row].replace(epsilon=scaled, held=True)
        done, allocation = allocated(plan.budget, stats)
        assert allocation.composition.epsilon <= plan.budget.epsilon
        stats = list(done)
        out.append(tuple(s.epsilon for s in stats))
    return out


def test_the_forward_check_reads_the_lower_end_composed_beside_the_secant_step(monkeypatch):
    spectral = importlib.import_module("dpplanner.engine.mechanisms.spectral")
    real, where, taken = spectral.lower_end, [], []
    inside = [False]

    def lower_end(*args, **kwargs):
        where.append("runner" if inside[0] else "here")
        return real(*args, **kwargs)

    def runner(fn, args, cancel):      # (computed when waited for, as if elsewhere)
        taken.append(fn.__name__)

        def wait():
            inside[0] = True
            try:
                return fn(*args, cancel)
            finally:
                inside[0] = False
        return wait

    monkeypatch.setattr(spectral, "lower_end", lower_end)
    monkeypatch.setattr(offload, "_runner", None)
    forget()
    alone = _benchmark_edits()
    assert where == ["here"] * 3
    where.clear()
    monkeypatch.setattr(offload, "_runner", runner)
    forget()
    assert _benchmark_edits() == alone
    # one lower end an edit, never composed twice: the second and third edits' searches ended on a
    # secant step, whose lower end the runner composed (the first ended on a step along the model
    # of the bend: its verification composed it here)
    assert where == ["here", "runner", "runner"] and taken == ["lower_end"] * 2


def test_a_lower_end_that_fails_ahead_leaves_the_upper_end_and_the_allocation_as_without_it(monkeypatch):
    """A lower end composed ahead that fails (its window too wide, as where the helper failed and
    it was composed here again) is left to the rung: the upper end read first had become inf."""
    spectral = importlib.import_module("dpplanner.engine.mechanisms.spectral")
    tilted = importlib.import_module("dpplanner.engine.mechanisms.tilted")
    monkeypatch.setattr(offload, "_runner", None)
    forget()
    alone = _benchmark_edits()

    def runner(fn, args, cancel):
        def wait():
            raise tilted.WindowTooWide("the look-ahead's window")
        return wait

    monkeypatch.setattr(offload, "_runner", runner)
    forget()
    assert _benchmark_edits() == alone
