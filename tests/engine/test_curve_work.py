"""curve() does the work its answer needs and no more, counted in calls (never time): an upper-only
curve reads no lower side, plots read on coarser lattices, read-outs scan only the atoms near each
root, a release is hashed once, not once per query."""

from __future__ import annotations

import numpy as np
import pytest

from dpplanner.engine import THEOREMS, curve


def test_upper_only_curve_has_the_same_uppers_and_skips_the_lower_sides(monkeypatch):
    """The window's plot asks for upper bounds only: the same numbers (up to the last digits of the
    optimal read-out, which no longer starts at the previous lower bound; pld: see the next test),
    while pld reads no lower twin, the optimal prefix curve builds none of its lower side and kov
    reads no lower root (a third of an edit's kov curve)."""
    import dpplanner.engine.mechanisms.curves as pld_curves
    import dpplanner.engine.optimal.exact as exact
    import dpplanner.engine.optimal.prefix as prefix

    eps, delta, mult = [0.2, 0.05, 0.3, 0.1, 0.07], [0.0, 1e-8, 0.0, 0.0, 1e-9], [2, 1, 3, 14, 5]
    mech = ["laplace", "gaussian", "eps-delta", "laplace", "eps-delta"]
    both = curve(eps, delta, 1e-6, multiplicities=mult, mechanisms=mech, theorems=THEOREMS)
    sides, lower_sides = [], []
    real_read = pld_curves._read
    monkeypatch.setattr(pld_curves, "_read",
                        lambda *args, **kw: sides.append(args[5]) or real_read(*args, **kw))
    monkeypatch.setattr(prefix._SecondOrderLower, "extend", lambda *args: lower_sides.append(args))
    homogeneous = []
    real_atoms = exact.homogeneous_atoms
    monkeypatch.setattr(exact, "homogeneous_atoms", lambda eps, k, upper, *a: homogeneous.append(upper)
                        or real_atoms(eps, k, upper, *a))
    upper_only = curve(eps, delta, 1e-6, multiplicities=mult, mechanisms=mech, theorems=THEOREMS, lower=False)
    assert sides and all(sides)  # every read-out was of the upper twin
    assert not lower_sides
    assert homogeneous and all(homogeneous)     # (kov's points: the first two queries are equal)
    for name in THEOREMS:
        assert upper_only.lower[name] is None
        if name == "pld":       # read on a coarser lattice (the next test): within eta
            assert np.all(upper_only.upper[name] <= both.upper[name] + 1e-2)
        else:
            np.testing.assert_allclose(upper_only.upper[name], both.upper[name], rtol=1e-12)
        if both.lower[name] is not None:
            lower = np.asarray(both.lower[name], dtype=float)
            assert np.all(~(upper_only.upper[name] < lower))
    with pytest.raises(ValueError, match="lower"):
        curve(eps, delta, 1e-6, lower="no")


def test_upper_only_optimal_curve_of_a_typed_plan_runs_no_lower_lattice(monkeypatch):
    """The window's plot of a 100-query plan of typed decimals (synthetic-100, prefix curve of 100
    points) takes the optimal prefix curve's exact common lattice: upper-only, it runs no second,
    rounded-down lattice beside it (more than half that curve's work), and its uppers are the
    both-sides curve's."""
    import dpplanner.engine.optimal.prefix as prefix
    from dpplanner.model import files
    from dpplanner.model.engine_inputs import composition_inputs
    from dpplanner.model.examples import example_path

    plan = files.load_plan(example_path("synthetic-100"))
    inputs = composition_inputs(plan.budget, plan.statistics)
    args = (list(inputs.epsilons), list(inputs.deltas), inputs.delta_g)
    kw = dict(multiplicities=list(inputs.multiplicities), mechanisms=list(inputs.mechanisms), eta=inputs.eta,
              theorems=("optimal",), points=100)
    both = curve(*args, **kw)
    sides = []
    real_side = prefix._LatticeLower
    monkeypatch.setattr(prefix, "_LatticeLower", lambda lat, e, want_lower=True: sides.append(want_lower)
                        or real_side(lat, e, want_lower))
    monkeypatch.setattr(prefix._SecondOrderLower, "extend", lambda *a: sides.append("second-order lower"))
    upper_only = curve(*args, **kw, lower=False)
    assert sides == [False]
    np.testing.assert_allclose(upper_only.upper["optimal"], both.upper["optimal"], rtol=1e-12)


def _census_curve_args():
    from dpplanner.model import files
    from dpplanner.model.engine_inputs import composition_inputs
    from dpplanner.model.examples import example_path

    plan = files.load_plan(example_path("census"))
    inputs = composition_inputs(plan.budget, plan.statistics)
    args = (list(inputs.epsilons), list(inputs.deltas), inputs.delta_g)
    kw = dict(multiplicities=list(inputs.multiplicities), mechanisms=list(inputs.mechanisms), eta=inputs.eta,
              theorems=("pld",), points=50)
    return args, kw


def test_upper_only_pld_curve_reads_on_a_coarser_lattice(monkeypatch):
    """For the plot, pld's curve is read on a lattice with at most half the points of the one the
    total settles on (a quarter or fewer, down to about 512: census's total is on ~7400), kept
    because its upper for the whole plan is within eta of the bracket's lower end: still
    certified, within eta of the both-sides curve, its last point never above the total's own
    bracket."""
    import dpplanner.engine.mechanisms.curves as pld_curves
    from dpplanner.engine import compose

    args, kw = _census_curve_args()
    steps = []
    real = pld_curves.LatticePMF
    monkeypatch.setattr(pld_curves, "LatticePMF", lambda step, *a, **k: steps.append(step) or real(step, *a, **k))
    both = curve(*args, **kw)
    upper_only = curve(*args, lower=False, **kw)
    assert len(steps) == 3 and steps[0] == steps[1] and 2 * steps[0] <= steps[2] <= 16 * steps[0]
    up, ref_up, ref_lo = upper_only.upper["pld"], both.upper["pld"], both.lower["pld"]
    assert np.all(up >= ref_lo) and np.all(up <= ref_up + kw["eta"]) and np.any(up != ref_up)
    total = compose(*args, "pld", eta=kw["eta"], multiplicities=kw["multiplicities"], mechanisms=kw["mechanisms"])
    assert up[-1] <= total.epsilon


def test_a_plot_lattice_that_misses_eta_is_read_again_on_the_totals(monkeypatch):
    """If the coarser lattice's upper for the whole plan is not within eta of the bracket's lower
    end, the curve is read again on the total's own lattice (the same numbers as both sides'). The
    whole plan is checked first, by one evaluation of its bound at that end plus eta (no search):
    nothing is read on the lattice that missed."""
    import dpplanner.engine.mechanisms.curves as pld_curves

    args, kw = _census_curve_args()
    both = curve(*args, **kw)
    real_check = pld_curves._MixedReads.certifies
    checks = []

    def loose_on_the_coarse(self, j, x):     # the coarse lattice's whole-plan value misses eta
        checks.append(len(steps))
        return real_check(self, j, x) and len(steps) != 1

    monkeypatch.setattr(pld_curves._MixedReads, "certifies", loose_on_the_coarse)
    steps, reads = [], []
    real = pld_curves.LatticePMF
    monkeypatch.setattr(pld_curves, "LatticePMF", lambda step, *a, **k: steps.append(step) or real(step, *a, **k))
    real_roots = pld_curves.mixed_roots
    monkeypatch.setattr(pld_curves, "mixed_roots", lambda atoms, *a: reads.append((len(steps), len(atoms)))
                        or real_roots(atoms, *a))
    upper_only = curve(*args, lower=False, **kw)
    assert len(steps) == 2 and 2 * steps[1] <= steps[0]
    np.testing.assert_array_equal(upper_only.upper["pld"], both.upper["pld"])
    assert checks == [1] and [n for lattice, n in reads if lattice == 1] == []
    assert sum(n for lattice, n in reads if lattice == 2) > 10


def test_the_optimal_curve_can_come_from_elsewhere(monkeypatch):
    """The window's evaluation computes the generic optimal curve in a helper process; pld's curve
    (never above it) waits for it instead of computing its own, and only once it needs it."""
    import dpplanner.engine.optimal as optimal_core
    from dpplanner.engine import theorem_inputs

    eps, delta, mult = [0.2, 0.05, 0.3, 0.1], [0.0, 1e-8, 0.0, 1e-9], [2, 1, 3, 4]
    mech = ["laplace", "gaussian", "eps-delta", "eps-delta"]
    here = curve(eps, delta, 1e-6, multiplicities=mult, mechanisms=mech, theorems=("optimal", "pld"), lower=False)
    asked = []

    def given():
        asked.append(1)
        return here.upper["optimal"] * 0.5, np.zeros(here.ks.size)   # smaller: visible in pld's min

    real = optimal_core.optimal_prefix_curve
    computed, cheap = [], []
    monkeypatch.setattr(optimal_core, "optimal_prefix_curve", lambda *a, **k: computed.append(1) or real(*a, **k))
    real_cheap = theorem_inputs.best_cheap
    monkeypatch.setattr(theorem_inputs, "best_cheap", lambda *a: cheap.append(1) or real_cheap(*a))
    got = curve(eps, delta, 1e-6, multiplicities=mult, mechanisms=mech, theorems=("pld",), lower=False,
                optimal_curve=given)
    # (the curve given was met with the cheaper theorems' bounds where it was computed)
    assert asked == [1] and not computed and not cheap
    np.testing.assert_array_equal(got.upper["pld"], np.minimum(here.upper["pld"], here.upper["optimal"] * 0.5))
    again = curve(eps, delta, 1e-6, multiplicities=mult, mechanisms=mech, theorems=("pld",), lower=False,
                  optimal_curve=lambda: None)       # the helper failed: computed here
    assert computed and np.array_equal(again.upper["pld"], here.upper["pld"])
    with pytest.raises(ValueError, match="optimal curve given has 3 points"):
        curve(eps, delta, 1e-6, multiplicities=mult, mechanisms=mech, theorems=("pld",),
              optimal_curve=lambda: (np.ones(3), np.ones(3)))


def test_the_pld_curve_passes_over_its_running_pmf_once_per_point(monkeypatch):
    """Between two sampled k the releases are composed with each other first, then with the long
    running pmf once (1000 releases read at 100 points: 100 passes, not 1000)."""
    import dpplanner.engine.mechanisms.curves as pld_curves

    calls = []
    real = pld_curves.convolve
    monkeypatch.setattr(pld_curves, "convolve", lambda a, b, *r: calls.append(1) or real(a, b, *r))
    eps = [0.01, 0.02, 0.015, 0.03] * 50
    got = curve(eps, [0.0] * 200, 1e-6, mechanisms=["laplace"] * 200, theorems=("pld",), points=10, lower=False)
    assert got.ks.size == 10 and len(calls) == 10
    assert np.all(np.diff(got.upper["pld"]) > 0)


def test_upper_only_optimal_curve_scans_only_the_atoms_near_each_root(monkeypatch):
    """A prefix's root is at least the previous prefix's (the pmf only gains loss): the upper-only
    curve reads its prefixes a group at a time, each group scanning the atoms above 0.9 times the
    previous group's last root, with the same roots as a scan of every atom, one at a time."""
    import dpplanner.engine.optimal.prefix as prefix
    import dpplanner.engine.optimal.prefix_reads as prefix_reads
    from dpplanner.engine.optimal.atoms import sup_root

    monkeypatch.setattr(prefix, "window_prefix_curve", lambda *args: None)     # the running lattices
    rng = np.random.default_rng(7)
    eps = rng.uniform(0.01, 0.08, 60)
    ks = np.arange(1, 61)
    bars = np.full(60, 1e-6)
    groups = []
    real = prefix_reads.sup_roots
    monkeypatch.setattr(prefix_reads, "sup_roots", lambda atoms, *args: groups.append(
        [a.p.size for a in atoms]) or real(atoms, *args))
    near, _ = prefix.optimal_prefix_curve(eps, bars, ks, 1e-3, want_lower=False)
    assert sum(map(len, groups)) == 60 and max(map(len, groups)) == prefix_reads.READ_GROUP
    near_scanned = sum(map(sum, groups))
    groups.clear()
    monkeypatch.setattr(prefix_reads, "sup_roots", lambda atoms, dbs, floors: groups.append(
        [a.p.size for a in atoms]) or np.array([sup_root(a, db, f) for a, db, f in zip(atoms, dbs, floors)]))
    monkeypatch.setattr(prefix_reads, "START_SHARE", 0.0)
    everything, _ = prefix.optimal_prefix_curve(eps, bars, ks, 1e-3, want_lower=False)
    np.testing.assert_allclose(near, everything, rtol=1e-12)
    assert near_scanned < 0.6 * sum(map(sum, groups))
    # a start above the roots (say, delta_bar grew): each group's roots are read again from 0
    monkeypatch.setattr(prefix_reads, "sup_roots", real)
    monkeypatch.setattr(prefix_reads, "START_SHARE", 5.0)
    again, _ = prefix.optimal_prefix_curve(eps, bars, ks, 1e-3, want_lower=False)
    np.testing.assert_allclose(again, everything, rtol=1e-12)


def test_an_edited_plans_plot_reads_on_a_coarser_lattice_than_its_total(monkeypatch):
    """After an edit the total's bracket settles on one lattice of ~1500 points: the plot's
    curve reads on one 2-4x coarser (its whole-plan upper is within eta of the bracket), so the
    100 read-outs of each edit pass over fewer atoms."""
    import dpplanner.engine.mechanisms.curves as pld_curves
    from dpplanner.engine import compose
    from dpplanner.model import files
    from dpplanner.model.engine_inputs import composition_inputs
    from dpplanner.model.examples import example_path

    plan = files.load_plan(example_path("synthetic-100"))
    inputs = composition_inputs(plan.budget, plan.statistics)
    eps = list(inputs.epsilons)
    for i in (0, 7, 14):
        eps[i] *= 1.05
    args = (eps, list(inputs.deltas), inputs.delta_g)
    kw = dict(multiplicities=list(inputs.multiplicities), mechanisms=list(inputs.mechanisms), eta=inputs.eta)
    total = compose(*args, "pld", **kw)
    steps = []
    real = pld_curves.LatticePMF
    monkeypatch.setattr(pld_curves, "LatticePMF", lambda step, *a, **k: steps.append(step) or real(step, *a, **k))
    c = curve(*args, theorems=("pld",), points=100, lower=False, **kw)
    assert len(steps) == 1 and 2 * total.extra["step"] <= steps[0] <= 16 * total.extra["step"]
    assert c.upper["pld"][-1] <= total.epsilon


def test_the_pld_curve_starts_each_search_near_its_root(monkeypatch):
    """The whole plan is read first (from the total's upper end); the other prefixes' searches
    start at that root scaled as the zCDP total grows with k (or the pure releases' sum with the
    Gaussians' root, if less), within a few per cent of their own roots (from above every atom
    they took three or four Halley steps more each)."""
    import dpplanner.engine.mechanisms.curves as pld_curves
    import dpplanner.engine.mechanisms.readout as readout

    args, kw = _census_curve_args()
    reads = []
    real = pld_curves.mixed_roots

    def recorded(atoms, mus, dbs, upper, guesses):
        out = real(atoms, mus, dbs, upper, guesses)
        reads.extend((a.p.size, g, x) for a, g, x in zip(atoms, guesses, out))
        return out

    monkeypatch.setattr(pld_curves, "mixed_roots", recorded)
    curve(*args, lower=False, **kw)
    long = np.array([(g, x) for n, g, x in reads[1:] if n > readout.COARSE_ATOMS])  # (after the whole plan's)
    assert len(long) > 10 and np.median(np.abs(long[:, 0] - long[:, 1]) / long[:, 1]) < 0.05
    # the short prefixes too (their pure releases' sum shapes them better than zCDP: 7.7% -> 4.4%)
    every = np.array([(g, x) for _n, g, x in reads[1:]])
    assert np.median(np.abs(every[:, 0] - every[:, 1]) / every[:, 1]) < 0.055


@pytest.mark.parametrize("lower", [True, False])
def test_pld_reads_without_gaussians_scan_only_atoms_near_the_root(lower, monkeypatch):
    """Prefixes with no Gaussian are read one at a time: the lower read from the last lower root
    (a certified floor: the loss only grows with k), the upper read from 0.9 times the last upper
    root; the same numbers as scanning every atom, over fewer atoms (an every-k curve of 1000
    repeated queries took 3.4 s, O(k^2) atoms)."""
    import dpplanner.engine.mechanisms.curves as pld_curves
    import dpplanner.engine.optimal.prefix_reads as prefix_reads

    scanned = []
    real = pld_curves.sup_root
    for module in (pld_curves, prefix_reads):      # (lower reads, upper reads)
        monkeypatch.setattr(module, "sup_root", lambda a, *args: scanned.append(a.p.size) or real(a, *args))
    args = ([0.01, 0.02, 0.015], [0.0, 0.0, 0.0], 1e-6)
    kw = dict(multiplicities=[40, 30, 30], mechanisms=["laplace", "eps-delta", "laplace"], theorems=("pld",),
              lower=lower)
    near = curve(*args, **kw)
    near_scanned, scanned[:] = sum(scanned), []
    real_read = pld_curves._read
    monkeypatch.setattr(pld_curves, "_read", lambda *a: real_read(*a[:6]))     # below = 0: every atom
    everything = curve(*args, **kw)
    np.testing.assert_allclose(near.upper["pld"], everything.upper["pld"], rtol=1e-12)
    if lower:
        np.testing.assert_allclose(near.lower["pld"], everything.lower["pld"], rtol=1e-12)
        assert np.all(near.lower["pld"] <= near.upper["pld"])
    assert near_scanned < 0.7 * sum(scanned)


def test_an_infinite_read_out_does_not_start_the_next_group(monkeypatch):
    """A read-out can be infinite (no certified bound at that delta_bar); the next group's scan
    started at 0.9 x it, and LatticePMF.atoms(above=inf) raised OverflowError."""
    import math

    import dpplanner.engine.optimal.prefix as prefix
    import dpplanner.engine.optimal.prefix_reads as prefix_reads

    real = prefix_reads.sup_roots
    groups = []

    def first_group_ends_infinite(atoms, dbs, floors):
        roots = real(atoms, dbs, floors)
        groups.append(1)
        if len(groups) == 1:
            roots[-1] = math.inf
        return roots

    monkeypatch.setattr(prefix_reads, "sup_roots", first_group_ends_infinite)
    monkeypatch.setattr(prefix, "window_prefix_curve", lambda *args: None)     # the running lattices
    eps = np.random.default_rng(1).uniform(0.01, 0.08, 60)
    up, _ = prefix.optimal_prefix_curve(eps, np.full(60, 1e-6), np.arange(1, 61), 1e-2, want_lower=False)
    assert len(groups) >= 6 and np.all(np.isfinite(up[prefix_reads.READ_GROUP:]))


def test_a_discrete_plans_pld_curve_hashes_no_release_per_query(monkeypatch):
    """The pld curve's kernels and continuous twins are looked up by the releases' fields: the
    dataclass's hash builds a tuple at each call, and a lookup per query in each read-out pass
    (~700 an edit of the 100-query example) cost ~0.5 ms. A cold curve hashes a release only for
    its memories' keys (the whole plan's bracket), far fewer times than it has queries."""
    from dpplanner.engine.mechanisms.discrete import DiscreteRelease
    from dpplanner.engine.memo import forget
    from dpplanner.model import files
    from dpplanner.model.engine_inputs import composition_inputs
    from dpplanner.model.examples import example_path

    plan = files.load_plan(example_path("synthetic-100"))
    inputs = composition_inputs(plan.budget, plan.statistics)
    forget()
    hashed = []
    real = DiscreteRelease.__hash__
    monkeypatch.setattr(DiscreteRelease, "__hash__", lambda self: hashed.append(1) or real(self))
    out = curve(list(inputs.epsilons), list(inputs.deltas), inputs.delta_g, multiplicities=list(inputs.multiplicities),
                mechanisms=list(inputs.mechanisms), eta=inputs.eta, theorems=("pld",), points=100, lower=False)
    assert out.ks.size == 100 and np.all(np.isfinite(out.upper["pld"]))
    assert 0 < len(hashed) < 40


def test_the_zcdp_curve_charges_each_distinct_release_once(monkeypatch):
    """Equal rows of a plan are one release object per (eps, delta, noise): zcdp's curve asks each
    for its rho once, not once per query (synthetic-100: ~30 releases for 100 queries)."""
    from dpplanner.engine.mechanisms.discrete import DiscreteRelease
    from dpplanner.model import files
    from dpplanner.model.engine_inputs import composition_inputs
    from dpplanner.model.examples import example_path

    plan = files.load_plan(example_path("synthetic-100"))
    inputs = composition_inputs(plan.budget, plan.statistics)
    args = (list(inputs.epsilons), list(inputs.deltas), inputs.delta_g)
    kw = dict(multiplicities=list(inputs.multiplicities), mechanisms=list(inputs.mechanisms), eta=inputs.eta,
              theorems=("zcdp",), points=100, lower=False)
    before = curve(*args, **kw).upper["zcdp"]
    asked = []
    real = DiscreteRelease.rho
    monkeypatch.setattr(DiscreteRelease, "rho", lambda self: asked.append(self) or real(self))
    np.testing.assert_array_equal(curve(*args, **kw).upper["zcdp"], before)
    assert 0 < len(asked) == len({id(r) for r in asked}) < 60
