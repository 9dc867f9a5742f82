"""An allocation's search hands work to the engine's offload runner where it takes it (the
engine process's helper, idle during the search): the second upper end of the pair it starts
with, and the lower end of the bracket at a secant step (likely its last), composed beside that
step's upper end, which the forward check then reads instead of composing it. The allocation is
the same to the bit with or without a runner."""

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


def test_the_pair_s_second_upper_end_and_the_secant_step_s_lower_end_are_composed_by_the_runner(monkeypatch):
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
    # each edit: the pair's second upper end, then the lower end of the step along log total from
    # the pair, the search's last (its forward check composes no lower end of its own)
    assert taken == ["_upper_total", "lower_end"] * 3 and where == ["runner"] * 3
