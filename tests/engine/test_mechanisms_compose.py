"""compose_mechanisms against independent references: lower <= exact <= upper, width <= eta.

delta(eps) of a composition is decreasing in eps, so "lower <= exact root <= upper" is checked as
delta_exact(upper) <= delta_g <= delta_exact(lower), with delta_exact from mpmath: the closed form
for Gaussians, and numerical integration over the Laplace loss (two atoms and a density) otherwise.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpplanner.engine import EpsDelta, Gaussian, Laplace, compose_mechanisms

mpmath.mp.dps = 30
SET = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
deltas = st.sampled_from([1e-3, 1e-6, 1e-9])


def gauss_delta(mu, x):
    mu, x = mpmath.mpf(mu), mpmath.mpf(x)
    return mpmath.ncdf(mu / 2 - x / mu) - mpmath.exp(x) * mpmath.ncdf(-mu / 2 - x / mu)


def laplace_delta(a, x):
    """delta(x) of one Laplace loss with a = 1/m, for every real x."""
    a, x = mpmath.mpf(a), mpmath.mpf(x)
    if x >= a:
        return mpmath.mpf(0)
    if x >= -a:
        return 1 - mpmath.exp((x - a) / 2)
    return 1 - mpmath.exp(x)


def with_laplace(a, inner, x):
    """delta(x) of Laplace(a) composed with a release whose delta function is ``inner``."""
    a, x = mpmath.mpf(a), mpmath.mpf(x)
    atoms = inner(x - a) / 2 + mpmath.exp(-a) / 2 * inner(x + a)
    pts = sorted({-a, a} | {p for p in (x - 10, x, x + 10) if -a < p < a})
    dens = mpmath.quad(lambda l: mpmath.exp(-(a - l) / 2) / 4 * inner(x - l), pts)
    return atoms + dens


def assert_brackets(r, delta_fn, delta_g, eta):
    assert r.epsilon_lower <= r.epsilon
    assert r.epsilon - r.epsilon_lower <= eta or "width" in r.detail
    assert delta_fn(r.epsilon) <= delta_g
    if r.epsilon_lower > 0:
        assert delta_fn(r.epsilon_lower) >= delta_g


@SET
@given(st.lists(st.floats(0.3, 30.0), min_size=1, max_size=5), deltas)
def test_all_gaussian_against_the_closed_form(ms, delta_g):
    mu = math.sqrt(math.fsum(1 / m ** 2 for m in ms))
    r = compose_mechanisms([Gaussian(m) for m in ms], delta_g)
    assert "closed form" in r.detail
    assert_brackets(r, lambda x: gauss_delta(mu, x), delta_g, 1e-9)


@SET
@given(st.floats(0.05, 20.0), deltas)
def test_one_laplace_against_its_delta_function(m, delta_g):
    r = compose_mechanisms([Laplace(m)], delta_g)
    assert_brackets(r, lambda x: laplace_delta(1 / m, x), delta_g, 1e-3)


@pytest.mark.slow
@SET
@given(st.floats(0.3, 10.0), st.floats(0.3, 10.0), deltas)
def test_two_laplace_against_mpmath_integration(m1, m2, delta_g):
    r = compose_mechanisms([Laplace(m1), Laplace(m2)], delta_g)
    assert_brackets(r, lambda x: with_laplace(1 / m1, lambda y: laplace_delta(1 / m2, y), x), delta_g, 1e-3)


@pytest.mark.slow
@SET
@given(st.floats(0.3, 10.0), st.floats(0.5, 10.0), deltas)
def test_laplace_and_gaussian_against_mpmath_integration(m1, m2, delta_g):
    r = compose_mechanisms([Laplace(m1), Gaussian(m2)], delta_g)
    assert_brackets(r, lambda x: with_laplace(1 / m1, lambda y: gauss_delta(1 / m2, y), x), delta_g, 1e-3)


def test_eps_delta_release_moves_its_delta_into_the_target():
    # RR(eps) with delta_i: exact eps at delta_g solves delta_RR(x) = 1 - (1 - delta_g)/(1 - delta_i)
    r = compose_mechanisms([EpsDelta(0.7, 1e-7), Laplace(2.0)], 1e-6)
    bar = 1 - (1 - mpmath.mpf(1e-6)) / (1 - mpmath.mpf(1e-7))

    def rr_delta(y):
        e, y = mpmath.mpf(0.7), mpmath.mpf(y)
        p = 1 / (1 + mpmath.exp(-e))
        return p * max(0, 1 - mpmath.exp(y - e)) + (1 - p) * max(0, 1 - mpmath.exp(y + e))

    assert_brackets(r, lambda x: with_laplace(0.5, rr_delta, x), bar, 1e-3)


def test_issue_example_runs_and_is_tighter_than_generic_releases():
    r = compose_mechanisms([Laplace(2.0), Gaussian(5.0), EpsDelta(0.1, 1e-7)], 1e-6, eta=1e-3,
                           multiplicities=[10, 3, 1])
    assert r.theorem == "pld" and r.delta == 1e-6
    assert 0 < r.epsilon - r.epsilon_lower <= 1e-3
    assert r.epsilon < 10 * 0.5 + 0.1 + 3  # far below the sum of the releases' own epsilons


def test_multiplicities_equal_repetition():
    a = compose_mechanisms([Laplace(3.0), Gaussian(4.0)], 1e-6, multiplicities=[4, 2])
    b = compose_mechanisms([Laplace(3.0)] * 4 + [Gaussian(4.0)] * 2, 1e-6)
    assert (a.epsilon, a.epsilon_lower) == (b.epsilon, b.epsilon_lower)


def test_delta_zero():
    r = compose_mechanisms([Laplace(2.0), Laplace(4.0), EpsDelta(0.1)], 0.0)
    assert r.epsilon == pytest.approx(0.85, rel=1e-12) and r.epsilon >= 0.85 >= r.epsilon_lower
    g = compose_mechanisms([Laplace(2.0), Gaussian(4.0)], 0.0)
    assert g.epsilon == math.inf and "delta_g > 0" in g.reason


def test_infeasible_deltas_say_why():
    r = compose_mechanisms([EpsDelta(0.1, 1e-5), Laplace(1.0)], 1e-6)
    assert r.epsilon == math.inf and "too small" in r.reason


@pytest.mark.parametrize("args, match", [
    (([], 1e-6), "at least one"),
    (([Laplace(1.0)], 1.5), "delta_g"),
    (([Laplace(1.0)], 1e-6, 0.0), "eta"),
    ((["laplace"], 1e-6), "not allowed"),
    (([Laplace(1.0)], 1e-6, 1e-3, [0]), "multiplicit"),
    (([Laplace(1.0)], 1e-6, 1e-3, [1, 2]), "one multiplicity per release"),
])
def test_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        compose_mechanisms(*args)


@pytest.mark.parametrize("make, match", [
    (lambda: Laplace(0.0), "finite number > 0"),
    (lambda: Gaussian(math.inf), "finite number > 0"),
    (lambda: Gaussian(True), "not a number"),
    (lambda: EpsDelta(-1.0, 0.0), ">= 0"),
    (lambda: EpsDelta(1.0, 1.0), r"\[0, 1\)"),
])
def test_bad_releases(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_root_at_zero_with_a_gaussian():
    # so much noise that delta(0) is already below delta_g: the exact epsilon is 0
    r = compose_mechanisms([Laplace(50.0), Gaussian(50.0)], 0.1)
    assert r.epsilon_lower == 0.0 and 0.0 <= r.epsilon <= 1e-6
    assert with_laplace(1 / 50.0, lambda y: gauss_delta(1 / 50.0, y), 0.0) <= 0.1


def test_a_repeated_bracket_is_remembered_not_recomputed(monkeypatch):
    """One edit asks for the same bracket up to three times (allocation check, totals, curve): the
    second ask is answered from memory with the very same numbers, and the memory stays bounded."""
    import dpplanner.engine.mechanisms.ladder as bracket_mod

    computed = []
    real = bracket_mod._bracket
    monkeypatch.setattr(bracket_mod, "_bracket", lambda *a: computed.append(1) or real(*a))
    bracket_mod._BRACKETS.clear()
    releases = [Laplace(3.0), Gaussian(7.0), EpsDelta(0.05, 1e-8)]
    first = compose_mechanisms(releases, 1e-6, eta=1e-3, multiplicities=[4, 2, 1])
    again = compose_mechanisms(releases, 1e-6, eta=1e-3, multiplicities=[4, 2, 1])
    assert len(computed) == 1
    assert (again.epsilon, again.epsilon_lower, again.detail) == (first.epsilon, first.epsilon_lower, first.detail)
    compose_mechanisms(releases, 1e-6, eta=2e-3, multiplicities=[4, 2, 1])  # another eta: computed
    assert len(computed) == 2
    for i in range(bracket_mod._BRACKETS_MAX + 5):
        compose_mechanisms([Laplace(3.0 + i / 64)], 1e-6, eta=1e-2)
    assert len(bracket_mod._BRACKETS) == bracket_mod._BRACKETS_MAX


def test_a_group_a_hair_below_a_small_multiple_still_sits_on_the_lattice():
    """1/400.0000000000005 is a quarter of 1/100 to 1e-15 but below it. The lattice used to be laid
    under 1/100 only, so each of these 300 releases lost a whole step in the lower twin (width 5e-4
    on a lattice 32x finer); laid under both, the first lattice is tight."""
    r = compose_mechanisms([Laplace(100.0), Laplace(400.0000000000005)], 1e-7, eta=1e-3,
                           multiplicities=[300, 300])
    assert r.epsilon - r.epsilon_lower <= 1e-4
    assert r.extra["step"] >= 5e-4


def test_a_group_rounded_to_nine_digits_still_sits_on_the_lattice():
    """Multipliers from a plan are rounded to ~9 digits: synthetic-1000's a of equal epsilons differ
    by 9e-9 of themselves. Such a group counts as a multiple of the heaviest one (ALIGN_TOLERANCE):
    it used to stay off the lattice, each release losing up to a step in the lower twin, and the
    bracket climbed to a lattice 64 times finer."""
    r = compose_mechanisms([Laplace(100.0), Laplace(400.0 * (1 + 9e-9)), Gaussian(300.0)], 1e-7, eta=1e-3,
                           multiplicities=[300, 300, 50])
    assert r.epsilon - r.epsilon_lower <= 1e-4
    assert r.extra["rung"] == 0


def test_forget_drops_what_was_remembered(monkeypatch):
    import dpplanner.engine.mechanisms.ladder as bracket_mod
    from dpplanner.engine.mechanisms import forget, gaussian

    computed = []
    real = bracket_mod._bracket
    monkeypatch.setattr(bracket_mod, "_bracket", lambda *a: computed.append(1) or real(*a))
    gaussian.gaussian_multiplier(0.5, 1e-6)
    compose_mechanisms([Laplace(2.0), Gaussian(3.0)], 1e-6)
    forget()
    assert not gaussian._KNOWN
    again = compose_mechanisms([Laplace(2.0), Gaussian(3.0)], 1e-6)
    assert len(computed) == 2 and math.isfinite(again.epsilon)


@pytest.mark.parametrize("make, match", [
    (lambda: Gaussian(1e-300), "too small"),        # mu = 1e300: mu^2 is beyond doubles
    (lambda: Gaussian(1e-200), "too small"),
    (lambda: Laplace(5e-324), "too small"),         # a = 1/m overflows
    (lambda: Laplace(10 ** 400), r"too large: it must be a finite double \(at most 1\.8e\+308\)"),
    (lambda: Laplace(-(10 ** 400)), "too large"),
    (lambda: EpsDelta(10 ** 400, 0.0), "too large"),
    (lambda: Gaussian(Fraction(1, 10 ** 400)), "not allowed"),   # rounds to 0.0
])
def test_a_multiplier_beyond_floating_point_is_refused_with_the_reason(make, match):
    """Issue 23.12: these raised OverflowError or 'math domain error' (or gave inf); a release whose
    privacy loss floating point cannot hold is refused where it is made, with a clear message."""
    with pytest.raises(ValueError, match=match):
        make()


def test_gaussians_whose_total_is_beyond_floating_point_give_inf_with_the_reason():
    """Each Gaussian fits, their sum of 1/m^2 does not: inf is the honest (valid) upper bound, with
    the reason, and no RuntimeWarning escapes."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = compose_mechanisms([Laplace(1.0), Gaussian(2.0 ** -509)], 1e-6, multiplicities=[1, 2 ** 40])
    assert r.epsilon == math.inf and r.reason
    assert 0.999 < r.epsilon_lower < 1.0        # the Laplace release's own epsilon, certified


def test_laplace_releases_whose_a_underflows_compose():
    """a = 5e-324 rounds down to 0 in the lower twin: no group to align the lattice to (a 0/0 ratio
    gave "cannot convert float NaN to integer")."""
    from dpplanner import engine

    r = engine.compose([5e-324], [0.0], 1e-6, theorem="pld", mechanisms=["laplace"])
    assert r.epsilon_lower == 0.0 <= r.epsilon <= 1e-300


def test_a_tiny_laplace_epsilon_next_to_a_gaussian_composes():
    """pld's lattice is laid under a 1e-12 Laplace release; the cheap floor on "optimal" counted the
    Gaussian (eps_i = 0.05) as a Laplace release on 4x that lattice and asked for 186 GiB."""
    from dpplanner import engine

    eps = [1e-12, 2e-12, 0.05, 1e-12, 3e-12]
    deltas = [1e-9, 0.0, 1e-8, 0.0, 0.0]
    mech = ["gaussian", "laplace", "gaussian", "laplace", "eps-delta"]
    r = engine.compose(eps, deltas, 1e-6, theorem="pld", multiplicities=[3, 10, 4, 7, 2], mechanisms=mech)
    generic = engine.compose(eps, deltas, 1e-6, theorem="optimal", multiplicities=[3, 10, 4, 7, 2])
    assert 0 < r.epsilon_lower <= r.epsilon <= generic.epsilon
    assert r.epsilon - r.epsilon_lower <= 1e-3


@pytest.mark.parametrize("upper", [True, False])
def test_the_read_out_of_many_atoms_is_as_tight_as_a_bisection(upper):
    """Newton starts on merged atoms when there are many; the certified read-out must still be the
    root of the directed bound to ~1e-9, like a plain bisection of that bound."""
    import numpy as np

    from dpplanner.engine.mechanisms.bracket import composed_pmf, laplace_params
    from dpplanner.engine.mechanisms.composition import twins
    from dpplanner.engine.mechanisms.readout import COARSE_ATOMS, mixed_delta, mixed_root

    m = np.array([3.0, 7.0, 11.0, 20.0])
    r, _ = twins(laplace_params(m), np.array([5, 8, 3, 20]), (np.array([9.0]), np.array([9.0])),
                 np.array([4]), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), 1e-6)
    atoms = composed_pmf(r, 2.0 ** -11, upper).atoms()
    assert atoms.p.size > 4 * COARSE_ATOMS
    mu, db = (r.mu_up, r.delta_bar) if upper else (r.mu_lo, r.delta_bar_hi)
    x = mixed_root(atoms, mu, db, upper)
    lo, hi = 0.0, 20.0          # bisection of the same directed bound: delta(lo) > db >= delta(hi)
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if mixed_delta(atoms, mu, [mid], upper)[0] <= db else (mid, hi)
    if upper:
        assert mixed_delta(atoms, mu, [x], True)[0] <= db and hi <= x <= hi * (1 + 1e-9)
    else:
        assert mixed_delta(atoms, mu, [x], False)[0] > db and lo * (1 - 1e-9) <= x <= lo


def test_a_read_out_of_many_atoms_passes_over_them_twice(monkeypatch):
    """Newton on merged atoms, then one Halley step on the full atoms (the error is cubed: ~1e-4
    becomes ~1e-12), then the certification: two passes over the full atoms per read-out, not
    five. (A wrong second derivative would leave the step quadratic and cost a third pass.)"""
    import numpy as np

    from dpplanner.engine.mechanisms import readout
    from dpplanner.engine.mechanisms.atom_sets import AtomSets
    from dpplanner.engine.mechanisms.bracket import composed_pmf, laplace_params
    from dpplanner.engine.mechanisms.composition import twins

    m = np.array([3.0, 7.0, 11.0, 20.0])
    r, _ = twins(laplace_params(m), np.array([5, 8, 3, 20]), (np.array([9.0]), np.array([9.0])),
                 np.array([4]), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), 1e-6)
    atoms = composed_pmf(r, 2.0 ** -11, True).atoms()
    from dpplanner.engine.mechanisms import mixed_search

    passes = []
    real = AtomSets.gather      # (a pass gathers the atoms of its window, then evaluates them)
    monkeypatch.setattr(AtomSets, "gather", lambda sets, sel, js, stops=None: passes.append(
        stops is None and sets.size[sel[0]] == atoms.l.size) or real(sets, sel, js, stops))
    lone = mixed_search._lone_terms     # (a lone read-out's search passes over its atoms here)
    monkeypatch.setattr(mixed_search, "_lone_terms", lambda a, *args: passes.append(
        a[0].size == atoms.l.size) or lone(a, *args))
    for guess in (0.0, 1.3):
        passes.clear()
        readout.mixed_root(atoms, r.mu_up, r.delta_bar, True, guess)
        assert sum(passes) == 2


def test_the_curve_finds_the_totals_bracket_in_memory(monkeypatch):
    """The curve composes its last prefix release by release, the total composes plan rows with
    multiplicities: their sums (Gaussians' mu^2, the EpsDelta rows' delta_bar) once differed in
    the last bit, so the curve bracketed the whole plan a second time."""
    import importlib

    import numpy as np

    from dpplanner import engine
    from dpplanner.engine.mechanisms import forget

    bracket_mod = importlib.import_module("dpplanner.engine.mechanisms.ladder")
    computed = []
    real = bracket_mod._bracket
    monkeypatch.setattr(bracket_mod, "_bracket", lambda *a: computed.append(1) or real(*a))
    forget()
    eps = [0.044, 0.173, 0.157, 0.066, 0.109, 0.02]
    deltas = [1e-9, 1e-9, 0.0, 1e-9, 1e-8, 1e-9]
    mult = [5, 17, 2, 30, 28, 3]
    mech = ["gaussian", "gaussian", "laplace", "gaussian", "gaussian", "eps-delta"]
    total = engine.compose(eps, deltas, 1e-6, "pld", multiplicities=mult, mechanisms=mech)
    assert len(computed) == 1
    got = engine.curve(eps, deltas, 1e-6, multiplicities=mult, mechanisms=mech, theorems=("pld",), eta=1e-3)
    assert len(computed) == 1
    assert got.upper["pld"][-1] <= total.epsilon and np.all(got.lower["pld"] <= got.upper["pld"])


def test_a_lattice_too_fine_for_the_releases_is_refused_not_allocated():
    """Whoever asks composed_pmf for a lattice far beyond MAX_POINTS gets a ValueError that says
    so, not a MemoryError after asking for gigabytes (as the optimal floor once did)."""
    import numpy as np

    from dpplanner.engine.mechanisms.bracket import MAX_POINTS, composed_pmf, laplace_params
    from dpplanner.engine.mechanisms.composition import twins

    r, _ = twins(laplace_params(np.array([2.0])), np.array([1]), (np.zeros(0), np.zeros(0)), np.zeros(0),
                 np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), 1e-6)
    with pytest.raises(ValueError, match=f"at most {MAX_POINTS:,} are allowed"):
        composed_pmf(r, 1e-12, False)
    assert composed_pmf(r, 1e-3, False).p.size < MAX_POINTS

