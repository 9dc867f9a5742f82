"""curve(): incremental totals against k equal independent compose() calls at sampled k."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpplanner.engine import THEOREMS, CancelToken, Cancelled, compose, curve

PLAN_EPS = [0.1, 0.1, 0.1, 0.3, 0.05]
PLAN_DELTA = [0.0, 0.0, 0.0, 1e-7, 1e-8]
PLAN_MULT = [3, 1, 2, 4, 6]


def test_ks_sampling_includes_the_end():
    c = curve([0.1], [0.0], 1e-6, mode="repeat", k_max=1000, points=7, theorems=("basic",))
    assert c.ks[0] == 1 and c.ks[-1] == 1000 and 6 <= c.ks.size <= 8
    assert (np.diff(c.ks) > 0).all()
    full = curve([0.1], [0.0], 1e-6, mode="repeat", k_max=5, theorems=("basic",))
    assert full.ks.tolist() == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("theorems", [("basic", "advanced", "filter"), THEOREMS])
def test_prefix_curve_equals_compose_at_every_k(theorems):
    c = curve(PLAN_EPS, PLAN_DELTA, 1e-5, mode="prefix", theorems=theorems, eta=1e-2, multiplicities=PLAN_MULT)
    eps_seq = np.repeat(PLAN_EPS, PLAN_MULT)
    delta_seq = np.repeat(PLAN_DELTA, PLAN_MULT)
    assert c.ks.tolist() == list(range(1, eps_seq.size + 1))
    for j, k in enumerate(c.ks):
        for name in theorems:
            got = c.upper[name][j]
            if name == "kov" and k > 6:  # the first 6 queries are all (0.1, 0)
                assert math.isnan(got)
                continue
            ref = compose(eps_seq[:k].tolist(), delta_seq[:k].tolist(), 1e-5, name, eta=1e-2)
            if name in ("optimal", "concurrent", "pld"):
                # eta-accurate brackets of the same exact value (pld's, of generic releases, is optimal's)
                assert got >= ref.epsilon_lower - 1e-12 and ref.epsilon >= c.lower[name][j] - 1e-12
                assert abs(got - ref.epsilon) <= 1e-2 * (1 + 1e-9)
            else:
                assert got == pytest.approx(ref.epsilon, rel=1e-9), (name, k)


def test_repeat_curve_equals_compose():
    c = curve([0.2, 99.0], [1e-7, 0.5], 1e-5, mode="repeat", k_max=60, points=12, eta=1e-3)
    for j, k in enumerate(c.ks):
        for name in c.upper:
            ref = compose([0.2], [1e-7], 1e-5, name, eta=1e-3, multiplicities=[int(k)])
            if name in ("optimal", "concurrent", "kov"):
                assert c.lower[name][j] <= ref.epsilon and ref.epsilon_lower <= c.upper[name][j]
                assert abs(c.upper[name][j] - ref.epsilon) <= 1e-3
            else:
                assert c.upper[name][j] == pytest.approx(ref.epsilon, rel=1e-9), (name, k)


def test_curve_marks_infeasible_prefixes():
    c = curve([0.1], [4e-7], 1e-6, mode="repeat", k_max=4, theorems=("basic", "advanced", "optimal"))
    assert np.isfinite(c.upper["basic"][:2]).all() and np.isinf(c.upper["basic"][2:]).all()
    assert np.isinf(c.upper["optimal"][3])
    assert c.lower["basic"] is None


def test_curve_closed_forms_are_monotone_in_k():
    c = curve([0.02, 0.3, 0.001], [0.0, 1e-9, 0.0], 1e-6, mode="prefix", multiplicities=[300, 20, 1000],
              theorems=("basic", "advanced", "filter"))
    for name in ("basic", "advanced", "filter"):
        assert (np.diff(c.upper[name]) >= 0).all(), name


def test_curve_cancel():
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        curve([0.1], [0.0], 1e-6, mode="repeat", k_max=50, theorems=("kov",), cancel=token)


def test_curve_progress_is_monotone_and_ends_at_one():
    seen = []
    curve([0.1, 0.1, 0.2], [0.0] * 3, 1e-6, mode="prefix", eta=1e-2, multiplicities=[30, 5, 10],
          progress=seen.append)
    assert seen and seen[-1] == 1.0
    assert all(0.0 <= f <= 1.0 for f in seen) and seen == sorted(seen)


def test_a_width_just_above_eta_is_written_with_the_digits_that_show_it():
    from dpplanner.engine.curve import width_notes

    notes = width_notes([0.0100004, 0.5], [0.0, 0.495], 0.01, "why")
    assert notes[0].startswith("width 0.0100004 > eta = 0.01: why")
    assert notes[1] == ""
    assert width_notes([0.062], [0.0], 0.01)[0] == "width 0.062 > eta = 0.01"
