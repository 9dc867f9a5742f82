"""engine.offload.both: the second computation goes to the runner, the first stays here."""

from __future__ import annotations

import pytest

from dpplanner.engine import offload


def _add(a, b, cancel):
    return a + b


def test_the_second_goes_to_the_runner_and_both_values_come_back(monkeypatch):
    taken = []

    def runner(fn, args, cancel):
        taken.append(args)
        value = fn(*args, cancel)
        return lambda: value

    monkeypatch.setattr(offload, "_runner", runner)
    assert offload.both((_add, (1, 2)), (_add, (10, 20))) == (3, 30)
    assert taken == [(10, 20)]


def test_without_a_taker_both_are_computed_here(monkeypatch):
    monkeypatch.setattr(offload, "_runner", lambda fn, args, cancel: None)
    assert offload.both((_add, (1, 2)), (_add, (10, 20))) == (3, 30)
    monkeypatch.setattr(offload, "_runner", None)
    assert offload.both((_add, (1, 2)), (_add, (10, 20))) == (3, 30)


def test_a_failure_here_waits_for_the_part_elsewhere_and_is_raised(monkeypatch):
    waited = []

    def runner(fn, args, cancel):
        return lambda: waited.append(1) or fn(*args, cancel)

    def fails(cancel):
        raise ValueError("here")

    monkeypatch.setattr(offload, "_runner", runner)
    with pytest.raises(ValueError, match="here"):
        offload.both((fails, ()), (_add, (1, 2)))
    assert waited == [1]


def test_a_bracket_hands_its_lower_twin_over(monkeypatch):
    """The pld bracket's two ends on one rung are independent compositions where the lower end is
    not the hybrid bound's: the lower one is offered, and the answer is the same."""
    import numpy as np

    from dpplanner.engine.mechanisms import bracket, forget, ladder, spectral
    from dpplanner.engine.mechanisms.composition import twins

    offered = []

    def runner(fn, args, cancel):
        offered.append(fn)
        value = fn(*args, cancel)
        return lambda: value

    forget()
    r, _ = twins(bracket.laplace_params(np.array([3.0, 7.0])), np.array([4, 9]),
                 (np.array([9.0]), np.array([9.0])), np.array([2]), np.zeros(0), np.zeros(0),
                 np.zeros(0, dtype=np.int64), 1e-6)
    assert not spectral.hybrid_applies(r)
    alone = ladder._bracket(r, 1e-3, None, None)
    monkeypatch.setattr(offload, "_runner", runner)
    forget()        # (the bracket keeps each rung's upper end: composed again, both ends)
    assert ladder._bracket(r, 1e-3, None, None) == alone
    assert offered and all(fn is spectral.lower_end for fn in offered)
