"""The second-order (split) lower bound: its error bound against exact enumeration, and the whole
bracket against an independent fine-grid bracket."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpplanner.engine.optimal import hybrid_error, refine, split
from dpplanner.engine.optimal.lattice import convolve
from dpplanner.engine.optimal.pld import pld_side, plan_pmf, upper_kernel


def _reference(e, m, delta_bar, step):
    """Independent bracket on one grid: connect-the-dots above, epsilons rounded down below."""
    m = m.astype(np.int64)
    return pld_side(e, m, step, True, delta_bar), pld_side(e, m, step, False, delta_bar)


def _rr_atoms(eps: float) -> list[tuple[float, float]]:
    p = 1.0 / (1.0 + math.exp(-eps))
    return [(-eps, 1.0 - p), (eps, p)]


def _ctd_atoms(eps: float, step: float) -> list[tuple[float, float]]:
    ker = upper_kernel(eps, step)
    return [(ker.offset + i * step, float(q)) for i, q in enumerate(ker.p) if q > 0]


def _delta(parts: list[list[tuple[float, float]]], x: float) -> float:
    """E[(1 - e^{x - L})^+] for the sum of independent finite losses, by enumeration."""
    terms = []
    for combo in itertools.product(*parts):
        loss = math.fsum(a for a, _ in combo)
        if loss > x:
            terms.append(math.prod(q for _, q in combo) * -math.expm1(x - loss))
    return math.fsum(terms)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.floats(0.05, 1.5), min_size=0, max_size=3),
    st.lists(st.floats(0.05, 1.5), min_size=1, max_size=4),
    st.integers(2, 6),
    st.floats(0.0, 4.0),
)
def test_error_bound_covers_the_connect_the_dots_error(smooth_eps, rest_eps, log2_inv_step, x0):
    """Err(x) >= delta(R_S, C_rest)(x) - delta(R_S, T_rest)(x), both sides enumerated exactly.

    Coarse steps make the connect-the-dots error large; the tilt is chosen at each x, so a window
    placed off by a fraction of a step would show up as a violation."""
    step = 2.0 ** -log2_inv_step
    es = np.array(smooth_eps, dtype=float)
    er = np.array(rest_eps, dtype=float)
    ms = np.ones(es.size, dtype=np.int64)
    mr = np.ones(er.size, dtype=np.int64)
    e_lo = np.floor(2.0 * es / step) * step / 2.0
    smooth_parts = [_rr_atoms(float(v)) for v in e_lo if v > 0]
    _, _, pg = hybrid_error.group_terms(er, mr, step, np.zeros(1))
    blocks = split._blocks(np.argsort(pg, kind="stable"))
    prefixes = []
    for b in blocks:
        c = plan_pmf(er[b], mr[b], step, True, 1e-9)
        prefixes.append(c if not prefixes else convolve(prefixes[-1], c, 0.0, 0.0))
    if es.size:
        s_lo = plan_pmf(es, ms, step, False, 1e-9)
    else:
        s_lo = hybrid_error.LatticePMF(step, 0, np.ones(1), 0.0, False)
    true_parts = smooth_parts + [_rr_atoms(float(v)) for v in er]
    ctd_parts = smooth_parts + [_ctd_atoms(float(v), step) for v in er]
    thetas = np.concatenate([[0.0], np.geomspace(1e-3, 300.0, 200)])
    rows = hybrid_error.chain_rows(s_lo, prefixes, blocks, er, mr, e_lo, ms, step, thetas, 1e-9)
    for x in np.linspace(x0, x0 + 2.0, 41):
        # as SplitComposition.error does, with each block's tilt chosen at this x
        tilts, coefs = hybrid_error.block_terms(thetas, rows[0], rows[1], rows[2], float(x))
        err = hybrid_error.ErrorSum(tilts, coefs, rows[3])
        actual = _delta(ctd_parts, float(x)) - _delta(true_parts, float(x))
        assert actual <= err(float(x)) + 1e-13, (x, actual, err(float(x)))


def test_blocks_partition_the_rest_in_order():
    order = np.arange(1000)[::-1]
    blocks = split._blocks(order)
    assert np.array_equal(np.concatenate(blocks), order)
    sizes = [b.size for b in blocks]
    assert sizes[-1] >= 400 and sizes[0] <= 1000 // 64 + 1


def test_smoothing_choice_stays_within_its_budget():
    rng = np.random.default_rng(3)
    e = np.sort(rng.uniform(0.001, 0.2, 500))
    m = np.ones(e.size, dtype=np.int64)
    step = 2.0 ** -10
    budget = 1e-4
    take = split.choose_smoothing(e, m, 1e-6, step, budget)
    a = split._split_offsets(e, step)
    cost = m * a / 2 * split._sensitivity(e, m, 1e-6)
    assert take.any() and float(np.sum(cost[take])) <= budget


@pytest.mark.parametrize("seed", [pytest.param(s, marks=pytest.mark.slow) if s in (0, 3, 4, 5) else s
                                  for s in range(6)])
@pytest.mark.slow
def test_split_bracket_overlaps_an_independent_fine_grid_bracket(seed):
    """Random-double plans, k = 20..300: the second-order bracket is tight, so if its error bound
    were too small its lower bound would rise above the fine first-order bracket's upper bound."""
    rng = np.random.default_rng(1000 + seed)
    k = int(rng.integers(20, 300))
    eps = rng.uniform(0.001, rng.uniform(0.05, 0.6), k)
    # (below ~1e-9 the charged FFT rounding error, not the lower bound, limits the width)
    delta_bar = 10.0 ** rng.uniform(-8, -3)
    e, m = np.unique(eps, return_counts=True)
    new = refine.split_bracket(e, m.astype(np.int64), delta_bar, 1e-4)
    # the reference's upper side (connect-the-dots on a 2^-15 grid) is within ~1e-6 of the truth
    ref_up, ref_lo = _reference(e, m, delta_bar, 2.0 ** -15)
    assert new.lower <= ref_up, (new, ref_up)
    assert ref_lo <= new.upper, (new, ref_lo)
    assert new.upper - new.lower <= 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_prefix_curve_second_order_path_is_sound(seed):
    """Random doubles (no common lattice): every prefix's bracket holds the exact value for short
    prefixes (oracle) and overlaps an independent fine-grid bracket for long ones."""
    from dpplanner.engine.optimal import optimal_prefix_curve
    from oracle import Oracle

    rng = np.random.default_rng(2000 + seed)
    k = 300
    eps = rng.uniform(0.001, rng.uniform(0.05, 0.4), k)
    delta_bar = 10.0 ** rng.uniform(-8, -3)
    dbs = np.full(k, delta_bar)
    ks = np.arange(1, k + 1)
    up, lo = optimal_prefix_curve(eps, dbs, ks, 1e-2)
    assert np.all(lo <= up)
    for n in (1, 5, 12, 13):
        exact = float(Oracle(eps[:n]).opt_comp(delta_bar))
        assert lo[n - 1] <= exact <= up[n - 1], (n, lo[n - 1], exact, up[n - 1])
    for n in (20, 65, 300):
        # the reference's upper side (connect-the-dots at 2^-14) is within ~1e-6 of the truth
        e, m = np.unique(eps[:n], return_counts=True)
        ref_up, ref_lo = _reference(e, m, delta_bar, 2.0 ** -14)
        assert lo[n - 1] <= ref_up and ref_lo <= up[n - 1], (n, lo[n - 1], up[n - 1], ref_up, ref_lo)
        assert up[n - 1] - lo[n - 1] <= 1e-2


@pytest.mark.slow
@pytest.mark.parametrize("delta_bar", [1e-9, 1e-12])
def test_tiny_delta_brackets_stay_finite_and_sound(delta_bar):
    """Rounding is charged against delta_bar: long-double FFTs and the kernel-shift charge keep
    the bracket finite and tight down to ~1e-12 on a 300-query plan."""
    rng = np.random.default_rng(77)
    e = np.sort(rng.uniform(0.001, 0.2, 300))
    m = np.ones(e.size, dtype=np.int64)
    new = refine.split_bracket(e, m, delta_bar, 1e-3)
    assert math.isfinite(new.upper) and new.upper - new.lower <= 2e-2
    ref_up, ref_lo = _reference(e, m, delta_bar, 2.0 ** -12)
    assert new.lower <= ref_up and ref_lo <= new.upper, (new, ref_up, ref_lo)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.floats(0.05, 1.2), min_size=4, max_size=7), st.integers(2, 4), st.floats(0.0, 3.0))
def test_prefix_error_bound_covers_the_connect_the_dots_error(eps, log2_inv_step, x0):
    """The curve's own bound (head sub-blocks smoothed by twins and true queries, then blocks
    smoothed by running-pmf snapshots) for the whole prefix, against delta(C_all) - delta(T_all)
    enumerated exactly."""
    from dpplanner.engine.optimal import prefix_sides

    step = 2.0 ** -log2_inv_step
    eps = np.array(eps)
    old_head = prefix_sides.EXACT_HEAD
    prefix_sides.EXACT_HEAD = 3  # a short head, so that blocks after it exist in a small plan
    try:
        side = prefix_sides._SecondOrderLower(eps, step, 0.2, 1e-6, 0.0)
        for i, x in enumerate(eps.tolist()):
            side.extend(i, x, 0.0)
    finally:
        prefix_sides.EXACT_HEAD = old_head
    true_parts = [_rr_atoms(v) for v in eps.tolist()]
    ctd_parts = [_ctd_atoms(v, step) for v in eps.tolist()]
    for x in np.linspace(x0, x0 + 2.0, 31):
        err = side._error(eps.size, float(x))
        actual = _delta(ctd_parts, float(x)) - _delta(true_parts, float(x))
        assert actual <= err(float(x)) + 1e-13, (x, actual, err(float(x)))


def test_a_prefix_error_bound_read_later_is_the_one_of_its_own_prefix():
    """The curve reads its lower ends a group of prefixes at a time: prefix n's error bound, read
    after later queries were added (from n's snapshot), is the bound of the first n queries."""
    from dpplanner.engine.optimal import prefix_sides

    eps = np.random.default_rng(11).uniform(0.01, 0.2, 60)
    step = 2.0 ** -9
    alone = prefix_sides._SecondOrderLower(eps[:30], step, 1e-2, 1e-6, 0.0)
    for i, x in enumerate(eps[:30].tolist()):
        alone.extend(i, x, 0.0)
    later = prefix_sides._SecondOrderLower(eps, step, 1e-2, 1e-6, 0.0)
    for i, x in enumerate(eps.tolist()):
        later.extend(i, x, 0.0)
        if i == 29:
            snap = later.snapshot()
    for x in (1.0, 2.0, 3.0):
        now, then = alone._error(30, x), later._error(30, x, snap)
        np.testing.assert_array_equal(now.coefs, then.coefs)
        assert now.additive == then.additive


#: 1000 queries in a few large groups (an edited state of the 1000-query example), delta_bar 5e-8.
_GROUPED = (np.array([0.003077, 0.005845, 0.005846, 0.006154, 0.006461, 0.006463, 0.011689, 0.012308,
                      0.01292]), np.array([252, 3, 3, 505, 3, 3, 3, 225, 3]))


def _steps(monkeypatch) -> list:
    steps = []
    side = refine.split_side
    monkeypatch.setattr(refine, "split_side",
                        lambda e, m, db, step, *a: steps.append(step) or side(e, m, db, step, *a))
    return steps


def test_a_large_plan_that_smooths_nothing_starts_one_lattice_finer(monkeypatch):
    """Too large groups to round any down at the model's 2^-10 (2.5e-2 wide there for eta 1e-2):
    one composition, on 2^-11."""
    steps = _steps(monkeypatch)
    b = refine.split_bracket(*_GROUPED, 5e-8, 1e-2)
    assert steps == [2.0 ** -11]
    assert b.upper - b.lower <= 1e-2


def test_a_large_plan_that_misses_eta_is_refined_once_by_the_second_order(monkeypatch):
    """The same plan started on 2^-10 (as if it smoothed): 2.5e-2 wide there, so the second lattice
    is sized for a width ~ D^2 aimed at eta: 2^-11 (6.2e-3), not 2^-12 (2.0e-3 for 1.5x the work)."""
    monkeypatch.setattr(refine, "choose_smoothing", lambda *a: np.ones(1, dtype=bool))
    steps = _steps(monkeypatch)
    b = refine.split_bracket(*_GROUPED, 5e-8, 1e-2)
    assert steps == [2.0 ** -10, 2.0 ** -11]
    assert b.upper - b.lower <= 1e-2


def test_a_large_plan_that_misses_eta_on_the_finer_lattice_keeps_the_skipped_one(monkeypatch):
    """The same plan at delta_bar 1e-14: the finer first lattice (2^-11) certifies no upper end (its
    rounding charged exceeds delta_bar), so the lattice it skipped (2^-10) is composed last and its
    upper end kept, as before the skip (seed 23's r29: 1017.312453 -> 1017.308857)."""
    steps = _steps(monkeypatch)
    b = refine.split_bracket(*_GROUPED, 1e-14, 1e-2)
    assert steps == [2.0 ** -11, 2.0 ** -10]
    up, _, _ = refine.split_side(*_GROUPED, 1e-14, 2.0 ** -10, split.SMOOTH_SHARE * 1e-2, None, 1e-2 / 4,
                                 None)
    assert math.isfinite(up) and b.upper >= up and b.upper == refine.widen_up(up)
    assert b.lower <= b.upper
    assert b.method.startswith("pld d=2^-10 ")      # (the lattice its upper end is from)


def test_a_skipped_lattice_the_cap_made_the_first_is_composed_once(monkeypatch):
    """With a cap of 5,000 points the finer lattice (2^-11, 8,904 points) does not fit, so the
    refinement starts on the one it skipped (2^-10, 4,452): the bracket still misses eta at
    delta_bar 1e-14, and that lattice is not composed a second time at the end."""
    steps = _steps(monkeypatch)
    b = refine.split_bracket(*_GROUPED, 1e-14, 1e-2, max_points=5000)
    assert steps == [2.0 ** -10]
    assert b.upper - b.lower > 1e-2 and "cap of 5,000 points" in b.method


class _TimeUp:
    """A caller's time limit already reached (deadline.Deadline without its clock)."""

    def check(self):
        raise refine.OutOfTime

    def reason(self):
        return "stopped at the time limit of 1 s"


def test_a_time_limit_reached_composes_no_skipped_lattice_after_it(monkeypatch):
    """The refinement stopped by the caller's time limit returns what it has; the lattice skipped
    at the start (2^-10) is not composed after the limit (it may run long without a check)."""
    steps = _steps(monkeypatch)
    b = refine.split_bracket(*_GROUPED, 1e-14, 1e-2, cancel=_TimeUp())
    assert steps == [2.0 ** -11]
    assert b.method.endswith("stopped at the time limit of 1 s") and b.lower <= b.upper


def test_the_method_names_the_lattice_the_upper_end_is_from(monkeypatch):
    """Refined on 2^-10, 2^-11 then 2^-9 (its width missing eta at delta_bar 3.6e-12), the best
    upper end is 2^-10's: the method names that lattice, not the last one composed."""
    e, m = np.array([0.046413, 0.096303, 0.135666, 0.210157]), np.array([322, 68, 319, 320])
    ends, side = [], refine.split_side

    def recorded(e, m, db, step, *a):
        out = side(e, m, db, step, *a)
        ends.append((out[0], step))
        return out

    monkeypatch.setattr(refine, "split_side", recorded)
    b = refine.split_bracket(e, m, 3.62e-12, 0.00398)
    up, step = min(ends)
    assert len(ends) > 1 and ends[-1][1] != step
    assert b.upper == refine.widen_up(up) and b.method.startswith(f"pld d=2^{int(math.log2(step))} ")


class _TimeUpOnTheSkippedLattice:
    """A caller's time limit, reached while the lattice skipped at the start is composed last."""

    def check(self):
        pass

    def reason(self):
        return "stopped at the time limit of 1 s"


def test_a_time_limit_reached_on_the_skipped_lattice_keeps_the_bracket_found(monkeypatch):
    """The skipped lattice (2^-10) composed last runs into the caller's time limit: the bracket is
    the one the refinement found (2^-11's), and the method says the limit stopped it."""
    steps = []
    side = refine.split_side

    def timed(e, m, db, step, *a):
        steps.append(step)
        if len(steps) == 2:
            raise refine.OutOfTime
        return side(e, m, db, step, *a)

    monkeypatch.setattr(refine, "split_side", timed)
    b = refine.split_bracket(*_GROUPED, 1e-14, 1e-2, cancel=_TimeUpOnTheSkippedLattice())
    assert steps == [2.0 ** -11, 2.0 ** -10]
    up, lo, _ = side(*_GROUPED, 1e-14, 2.0 ** -11, split.SMOOTH_SHARE * 1e-2, None, 1e-2 / 4, None)
    assert (b.upper, b.lower) == (refine.widen_up(up), refine.widen_down(lo))
    assert b.method.endswith("stopped at the time limit of 1 s")
