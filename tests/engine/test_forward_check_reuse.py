"""An allocation's forward check composes the plan its search composed last: the grouped releases,
the cheap bounds and first rung, and the upper end's saddle point are remembered from that
composition (theorems._RELEASES, ladder._STARTS, spectral._UPPERS), not made again, and the
allocation is the same to the bit without those memories."""

from __future__ import annotations

import importlib

import numpy as np

from dpplanner.engine.memo import forget


def _edited_example():
    """synthetic-100 after a window edit: one statistic pinned 5 % higher."""
    from dpplanner.model import files
    from dpplanner.model.engine_inputs import allocation_request
    from dpplanner.model.examples import example_path

    plan = files.load_plan(example_path("synthetic-100"))
    stats = list(plan.statistics)
    stats[7] = stats[7].replace(epsilon=stats[7].epsilon * 1.05, held=True)
    return allocation_request(plan.budget, stats)


def _counted(monkeypatch) -> dict:
    """Calls of each piece of work a composition makes, counted while the test runs."""
    spectral = importlib.import_module("dpplanner.engine.mechanisms.spectral")
    ladder = importlib.import_module("dpplanner.engine.mechanisms.ladder")
    theorems = importlib.import_module("dpplanner.engine.mechanisms.theorems")
    counts = {}
    for module, name in ((spectral, "upper_end"), (spectral, "saddle_tilt"), (ladder, "_started"),
                         (theorems, "plan_releases")):
        real = getattr(module, name)
        counts[name] = 0

        def call(*args, _real=real, _name=name, **kwargs):
            counts[_name] += 1
            return _real(*args, **kwargs)
        monkeypatch.setattr(module, name, call)
    return counts


def test_the_forward_check_makes_none_of_its_search_steps_work_again(monkeypatch):
    request = _edited_example()
    counts = _counted(monkeypatch)
    forget()
    warm = request.run()
    uppers = counts["upper_end"]
    assert uppers >= 2
    # one of each per upper end the search composed; the forward check's bracket takes the last one's
    assert counts == {"upper_end": uppers, "saddle_tilt": uppers, "_started": uppers, "plan_releases": uppers}

    for name in ("theorems._RELEASES", "ladder._STARTS", "spectral._UPPERS"):
        module, memo = name.split(".")
        monkeypatch.setattr(getattr(importlib.import_module(f"dpplanner.engine.mechanisms.{module}"), memo),
                            "get", lambda key: None)
    forget()
    counts.update({name: 0 for name in counts})
    cold = request.run()
    assert counts["upper_end"] == uppers
    # (and the rung the search starts on is read from its first plan's releases and start once more)
    assert counts["saddle_tilt"] == uppers + 1 and counts["_started"] == counts["plan_releases"] == uppers + 2
    assert np.array_equal(cold.epsilons, warm.epsilons) and cold.scale == warm.scale
    assert cold.composition.epsilon == warm.composition.epsilon
    assert cold.composition.epsilon_lower == warm.composition.epsilon_lower


def test_the_new_state_s_pld_total_is_the_forward_check_s(monkeypatch):
    """After a redistribution the window composes the new state's totals from its statistics
    (composition_inputs): the pld row is the forward check's whole total of the same releases, to
    the bit (theorems._TOTALS), so no pld work is done again: no composition, grouping, start,
    tilt or lattice."""
    from dpplanner import engine
    from dpplanner.model import files
    from dpplanner.model.engine_inputs import composition_inputs
    from dpplanner.model.examples import example_path
    from dpplanner.model.redistribution import allocated

    plan = files.load_plan(example_path("synthetic-100"))
    stats = list(plan.statistics)
    stats[7] = stats[7].replace(epsilon=stats[7].epsilon * 1.05, held=True)
    counts = _counted(monkeypatch)
    for module, name in (("spectral", "rung"), ("spectral", "lower_end"), ("theorems", "_pld_composition")):
        module = importlib.import_module(f"dpplanner.engine.mechanisms.{module}")
        real = getattr(module, name)
        counts[name] = 0
        monkeypatch.setattr(module, name, lambda *a, _real=real, _name=name, **k:
                            counts.__setitem__(_name, counts[_name] + 1) or _real(*a, **k))
    forget()
    done, allocation = allocated(plan.budget, stats)
    assert counts["rung"] == 1 and counts["_pld_composition"] >= 3
    counts.update({name: 0 for name in counts})
    inputs = composition_inputs(plan.budget, done)
    totals = engine.compose_all(list(inputs.epsilons), list(inputs.deltas), inputs.delta_g, eta=inputs.eta,
                                multiplicities=list(inputs.multiplicities), mechanisms=list(inputs.mechanisms),
                                theorems=("pld",))
    assert set(counts.values()) == {0}
    assert totals["pld"].epsilon == allocation.composition.epsilon
    assert totals["pld"].epsilon_lower == allocation.composition.epsilon_lower
