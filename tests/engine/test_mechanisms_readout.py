"""The batched read-out (readout.mixed_roots): a batch gives each read-out what it gets alone,
certified, in a few passes over all their atoms; and the certification compares delta itself."""

from __future__ import annotations

import numpy as np
import pytest

from dpplanner.engine.mechanisms import mixed_search, readout
from dpplanner.engine.mechanisms.atom_sets import AtomSets, window
from dpplanner.engine.mechanisms.bracket import composed_pmf, laplace_params
from dpplanner.engine.mechanisms.composition import twins


def _prefix_atoms(upper: bool, sizes=(1, 2, 3, 5, 8, 13, 21)):
    """Atoms of growing prefixes of one Laplace plan (as a curve reads them), with mu and delta."""
    out = []
    for n in sizes:
        r, _ = twins(laplace_params(np.array([4.0, 9.0])), np.array([n, 2 * n]),
                     (np.array([12.0]), np.array([12.0])), np.array([n]), np.zeros(0), np.zeros(0),
                     np.zeros(0, dtype=np.int64), 1e-6)
        mu, db = (r.mu_up, r.delta_bar) if upper else (r.mu_lo, r.delta_bar_hi)
        out.append((composed_pmf(r, 2.0 ** -10, upper).atoms(), mu, db))
    return out


@pytest.mark.parametrize("upper", [True, False])
def test_a_batch_reads_each_prefix_as_it_would_be_read_alone(upper):
    items = _prefix_atoms(upper)
    atoms, mus, dbs = zip(*items)
    together = readout.mixed_roots(list(atoms), mus, dbs, upper)
    alone = [readout.mixed_root(a, mu, db, upper) for a, mu, db in items]
    assert np.allclose(together, alone, rtol=1e-9, atol=0)
    bounds = readout.mixed_deltas(list(atoms), mus, together, upper)
    assert np.all(bounds <= np.array(dbs)) if upper else np.all(bounds > np.array(dbs))


def test_a_batch_is_certified_in_one_pass_over_all_its_atoms(monkeypatch):
    """One evaluation of the directed bound serves the whole batch (the pld curve made one per
    prefix, ~0.2 ms of numpy overhead each)."""
    items = _prefix_atoms(True)
    calls = []
    real = readout.log_delta_bound
    monkeypatch.setattr(readout, "log_delta_bound", lambda *a: calls.append(1) or real(*a))
    atoms, mus, dbs = zip(*items)
    readout.mixed_roots(list(atoms), mus, dbs, True)
    assert len(calls) == 1


def test_a_big_batch_is_gathered_in_parts(monkeypatch):
    """Many read-outs of one long pmf (a privacy profile's points) gather at most about
    BATCH_ATOMS atoms at a time, and the parts give the same numbers."""
    (a, mu, _db), = _prefix_atoms(True, sizes=(21,))
    xs = np.linspace(0.0, 3.0, 40)
    whole = readout.mixed_delta(a, mu, xs, True)
    monkeypatch.setattr(readout, "BATCH_ATOMS", a.p.size * 3)
    sizes = []
    real = AtomSets.gather
    monkeypatch.setattr(AtomSets, "gather", lambda sets, sel, js, stops=None: sizes.append(int(np.sum(
        (sets.size[sel] if stops is None else stops) - js))) or real(sets, sel, js, stops))
    parts = readout.mixed_delta(a, mu, xs, True)
    assert len(sizes) > 1 and max(sizes) <= a.p.size * 3
    assert np.allclose(whole, parts, rtol=1e-12, atol=0)    # (sums in another order)


def test_the_upper_certificate_compares_delta_not_its_log(monkeypatch):
    """A bound a hair above delta_bar (log(d) rounds to log(delta_bar)) certifies nothing: the
    read-out must move on to where the bound is at most delta_bar."""
    (a, mu, db), = _prefix_atoms(True, sizes=(3,))
    honest = readout.mixed_root(a, mu, db, True)
    hair = np.nextafter(np.nextafter(db, 1.0), 1.0)
    assert np.log(hair) == np.log(db)
    far = honest * (1 + 1e-6)

    def bound(sets, books, mus, xs, upper, zs=None):
        return np.where(np.asarray(xs) < far, hair, db / 2)

    monkeypatch.setattr(readout, "_deltas", bound)
    assert readout.mixed_root(a, mu, db, True) >= far


def test_reads_of_few_atoms_started_far_off_need_no_walk(monkeypatch):
    """Pmfs of at most COARSE_ATOMS atoms (DIRECT_ATOMS read alone) have no merged stage, and in
    a batch they start from the top of their atoms: their search runs until a step is tiny, so the
    certificate passes at once instead of walking up in steps of 1e-10 (a pass over the atoms each)."""
    items = []
    for n in (1, 2, 3, 4, 6, 8, 12, 16):      # (small Laplace and Gaussian losses, as in the examples)
        r, _ = twins(laplace_params(np.array([30.0, 50.0])), np.array([n, n]),
                     (np.array([80.0]), np.array([80.0])), np.array([n]), np.zeros(0), np.zeros(0),
                     np.zeros(0, dtype=np.int64), 1e-7)
        items.append((composed_pmf(r, 2.0 ** -10, True).atoms(), r.mu_up, r.delta_bar))
    assert any(a.p.size <= readout.COARSE_ATOMS for a, _, _ in items)
    walks = []
    real = readout._walk
    monkeypatch.setattr(readout, "_walk", lambda *a: walks.append(a) or real(*a))
    atoms, mus, dbs = zip(*items)
    roots = readout.mixed_roots(list(atoms), mus, dbs, True)
    assert walks == []
    alone = [(a, mu, db) for a, mu, db in items if readout.COARSE_ATOMS < a.p.size <= readout.DIRECT_ATOMS]
    assert alone and all(readout.mixed_root(a, mu, db, True) > 0 for a, mu, db in alone) and walks == []
    assert np.all(readout.mixed_deltas(list(atoms), mus, roots, True) <= np.array(dbs))


@pytest.mark.parametrize("upper", [True, False])
def test_a_search_started_above_atoms_without_mass_comes_down(upper):
    """A truncated pmf can end in atoms of probability 0. A search started above them (the default
    start: the largest atom plus the Gaussian's mean) found no delta there and moved halfway to
    that same point, forever, and the certified answer was that atom, far above the root (0.86
    for 0.25 on a coarse lattice of the census example). It comes down to the atoms with mass."""
    from dpplanner.engine.optimal.atoms import Atoms

    locs = np.linspace(-0.5, 0.9, 141)
    p = np.exp(-0.5 * (locs / 0.08) ** 2)
    p[locs > 0.3] = 0.0                     # the top was cut (its mass moved to inf_mass, or dropped)
    a = Atoms(locs, p / p.sum(), upper)
    mu, db = 0.0134, 1e-6
    tops = []
    real_top = mixed_search._top
    mixed_search._top = lambda atoms: tops.append(1) or real_top(atoms)
    try:
        from_near = readout.mixed_root(a, mu, db, upper, guess=0.3)
        assert not tops             # (the top with mass is looked for only when delta is lost)
        from_default = readout.mixed_root(a, mu, db, upper)
        assert tops
    finally:
        mixed_search._top = real_top
    assert from_default < 0.31
    assert from_default == pytest.approx(from_near, rel=1e-9)


@pytest.mark.parametrize("upper", [True, False])
def test_atoms_far_above_x_are_counted_in_closed_form_on_their_side(upper, monkeypatch):
    """Atoms far above x (x - l below -mu (mu/2 + 15), where both Phi's of delta_G are 1 within
    1e-50) count as -expm1(x - l), without log_ndtr: the bound stays on its side of delta (exact,
    from mpmath) and within 1e-12 of it, with most of the atoms read that way."""
    import mpmath

    from dpplanner.engine.optimal.atoms import Atoms

    locs = np.linspace(-0.5, 2.0, 501)
    p = np.exp(-0.5 * (locs / 0.3) ** 2)
    a = Atoms(locs, p / p.sum(), upper)
    mu, xs = 0.02, np.array([0.1, 0.6, 1.2])
    near = []
    real = readout.log_delta_bound
    monkeypatch.setattr(readout, "log_delta_bound", lambda m, y, up: near.append(np.size(y)) or real(m, y, up))
    got = readout.mixed_delta(a, mu, xs, upper)
    assert sum(near) < 0.5 * sum(a.p.size - window(a.l, mu, x, readout.WINDOW_Z) for x in xs)
    mpmath.mp.dps = 40
    for x, bound in zip(xs.tolist(), got.tolist()):
        exact = mpmath.fsum(
            mpmath.mpf(pi) * (mpmath.ncdf(mu / 2 - (x - mpmath.mpf(li)) / mu)
                              - mpmath.exp(x - mpmath.mpf(li)) * mpmath.ncdf(-mu / 2 - (x - mpmath.mpf(li)) / mu))
            for li, pi in zip(a.l.tolist(), a.p.tolist()))
        assert (bound >= exact) if upper else (bound <= exact)
        assert abs(bound - exact) <= 1e-12 * exact        # (the sum's rounding margin: ~3e-13)


@pytest.mark.parametrize("upper", [True, False])
def test_a_certificate_against_a_delta_bar_reads_a_narrower_window(upper, monkeypatch):
    """Compared with a delta_bar of 1e-7, a bound counts the atoms beyond certify_z (10.4 Gaussian
    sd, not WINDOW_Z's 15) in closed form: log_ndtr on at most 3/4 the atoms, the bound still on its
    side of the exact delta (mpmath) and within 1e-12 of it, and the batch's certified roots those
    of the wide window (the pld curve's read-outs: a quarter of their certification's time)."""
    import mpmath

    from dpplanner.engine.optimal.atoms import Atoms

    locs = np.linspace(-0.5, 2.0, 501)
    p = np.exp(-0.5 * (locs / 0.3) ** 2)
    a = Atoms(locs, p / p.sum(), upper)
    mu, xs = 0.02, np.array([0.4, 0.7, 1.0])
    near = []
    real = readout.log_delta_bound
    monkeypatch.setattr(readout, "log_delta_bound", lambda m, y, up: near.append(np.size(y)) or real(m, y, up))
    wide = readout.mixed_deltas([a] * 3, [mu] * 3, xs, upper)
    wide_atoms, near[:] = sum(near), []
    got = readout.mixed_deltas([a] * 3, [mu] * 3, xs, upper, [1e-7] * 3)
    assert 0 < sum(near) <= 0.75 * wide_atoms
    mpmath.mp.dps = 40
    for x, bound, w in zip(xs.tolist(), got.tolist(), wide.tolist()):
        exact = mpmath.fsum(
            mpmath.mpf(pi) * (mpmath.ncdf(mu / 2 - (x - mpmath.mpf(li)) / mu)
                              - mpmath.exp(x - mpmath.mpf(li)) * mpmath.ncdf(-mu / 2 - (x - mpmath.mpf(li)) / mu))
            for li, pi in zip(a.l.tolist(), a.p.tolist()))
        assert (bound >= exact) if upper else (bound <= exact)
        assert abs(bound - exact) <= 1e-12 * exact and abs(bound - w) <= 1e-12 * w
    items = _prefix_atoms(upper, sizes=(3, 5, 8))
    atoms, mus, dbs = zip(*items)
    narrow = readout.mixed_roots(list(atoms), mus, dbs, upper)
    monkeypatch.setattr(readout, "certify_z", lambda dbs: np.full(np.shape(dbs), readout.WINDOW_Z))
    assert np.array_equal(narrow, readout.mixed_roots(list(atoms), mus, dbs, upper))


@pytest.mark.parametrize("upper", [True, False])
def test_atoms_just_inside_the_window_are_not_counted_in_closed_form(upper):
    """Atoms 6 to 6.5 Gaussian sd above x (inside WINDOW_Z): the closed form -expm1(x - l) would be
    ~2e-11 off each one's delta there (Phi(-z) / z^3), so they are read with log_ndtr: within
    1e-12 of the exact delta (mpmath), on its side."""
    import mpmath

    from dpplanner.engine.optimal.atoms import Atoms

    mu, x = 0.02, 0.3
    locs = x + mu * (mu / 2 + np.linspace(6.0, 6.5, 50))
    a = Atoms(locs, np.full(50, 1 / 50), upper)
    bound = float(readout.mixed_delta(a, mu, np.array([x]), upper)[0])
    mpmath.mp.dps = 40
    exact = mpmath.fsum(
        mpmath.mpf(pi) * (mpmath.ncdf(mu / 2 - (x - mpmath.mpf(li)) / mu)
                          - mpmath.exp(x - mpmath.mpf(li)) * mpmath.ncdf(-mu / 2 - (x - mpmath.mpf(li)) / mu))
        for li, pi in zip(a.l.tolist(), a.p.tolist()))
    assert (bound >= exact) if upper else (bound <= exact)
    assert abs(bound - exact) <= 1e-12 * exact


def test_searches_from_guesses_over_narrow_windows_are_not_merged(monkeypatch):
    """A batch's searches started at guesses pass over the atoms of their windows only (mu (mu/2
    + 15) below the guess and up): with at most DIRECT_ATOMS of them there they search the full
    atoms at once, without the merged stage (a curve's prefixes: ~140 of ~400 atoms each, whose
    merging cost more than it saved), and find the same certified roots."""
    items = []
    for n in (10, 20, 30, 40):     # (a small Gaussian mu: windows of 160-450 of 500-1300 atoms)
        r, _ = twins(laplace_params(np.array([40.0, 90.0])), np.array([n, 2 * n]),
                     (np.array([300.0]), np.array([300.0])), np.array([n]), np.zeros(0), np.zeros(0),
                     np.zeros(0, dtype=np.int64), 1e-6)
        items.append((composed_pmf(r, 2.0 ** -9, True).atoms(), r.mu_up, r.delta_bar))
    atoms, mus, dbs = zip(*items)
    merged = readout.mixed_roots(list(atoms), mus, dbs, True)     # (no guesses: from above every atom)
    guesses = merged * 1.03
    assert all(a.p.size > readout.COARSE_ATOMS and a.p.size - window(a.l, mu, g, readout.WINDOW_Z) <= readout.DIRECT_ATOMS
               for a, mu, g in zip(atoms, mus, guesses))
    coarse = []
    real = readout._coarse
    monkeypatch.setattr(readout, "_coarse", lambda a: coarse.append(a) or real(a))
    direct = readout.mixed_roots(list(atoms), mus, dbs, True, guesses)
    assert coarse == []
    assert np.allclose(direct, merged, rtol=1e-9, atol=0)
    assert np.all(readout.mixed_deltas(list(atoms), mus, direct, True) <= np.array(dbs))


def test_searches_look_at_fewer_atoms_than_the_certificate(monkeypatch):
    """Halley's windows reach search_z Gaussian sd below x (9.8 at delta_bar 1e-7: what they leave
    out moves delta by 1e-14 of delta_bar at most), the certificate's WINDOW_Z = 15: the same
    roots, certified at once (no walk), with a third fewer atoms per search pass."""
    items = _prefix_atoms(True, sizes=(3, 5, 8))
    atoms, mus, dbs = zip(*[(a, mu, 1e-7) for a, mu, _db in items])
    gathered = []
    real_gather, real_walk = AtomSets.gather, readout._walk
    monkeypatch.setattr(AtomSets, "gather", lambda sets, sel, js, stops=None: gathered.append(
        int(np.sum((sets.size[sel] if stops is None else stops) - js))) or real_gather(sets, sel, js, stops))
    walks = []
    monkeypatch.setattr(readout, "_walk", lambda *a: walks.append(a) or real_walk(*a))
    narrow = readout.mixed_roots(list(atoms), mus, dbs, True)
    searched, gathered[:] = gathered[:-1], []          # (the last gather is the certificate's)
    z = mixed_search.search_z(np.log(1e-7))
    monkeypatch.setattr(mixed_search, "search_z", lambda _log_db: readout.WINDOW_Z)
    wide = readout.mixed_roots(list(atoms), mus, dbs, True)
    assert walks == [] and np.allclose(narrow, wide, rtol=1e-11, atol=0)
    assert z < 10 and sum(searched) < 0.8 * sum(gathered[:-1])


def test_a_search_whose_steps_overshoot_is_kept_between_the_points_it_has_seen(monkeypatch):
    """Atoms further apart than the Gaussian's mu make delta nearly kinked: from the curve's start
    ~11% below one prefix's root, Halley's steps went back and forth past it (1.73, 2.43, 1.73,
    ...) until the cap, and the certified read-out was 2.11 for 1.91. Each search keeps the points
    seen below and above its root and halves that interval when a step leaves it: every prefix
    reads the same from the curve's starts as from above every atom."""
    from dpplanner.engine import curve
    from dpplanner.engine.mechanisms import curves as pld_curves

    batches = []
    real = pld_curves.mixed_roots
    monkeypatch.setattr(pld_curves, "mixed_roots", lambda atoms, mus, dbs, upper, guesses: batches.append(
        (atoms, mus, dbs, guesses)) or real(atoms, mus, dbs, upper, guesses))
    curve([0.2, 0.05, 0.3, 0.1, 0.07], [0.0, 1e-8, 0.0, 0.0, 1e-9], 1e-6, multiplicities=[2, 1, 3, 14, 5],
          mechanisms=["laplace", "gaussian", "eps-delta", "laplace", "eps-delta"], theorems=("pld",), lower=False)
    atoms, mus, dbs, guesses = max(batches, key=lambda b: len(b[0]))
    assert len(atoms) > 20 and max(mus) < atoms[-1].l[1] - atoms[-1].l[0]     # (mu below the spacing)
    started = readout.mixed_roots(list(atoms), mus, dbs, True, guesses)
    from_above = [readout.mixed_root(a, mu, db, True) for a, mu, db in zip(atoms, mus, dbs)]
    np.testing.assert_allclose(started, from_above, rtol=1e-9, atol=0)


@pytest.mark.parametrize("upper", [True, False])
def test_a_search_from_far_above_every_atom_still_reads_the_root(upper, monkeypatch):
    """A start far above the atoms comes down by halving, more steps than Halley's cap: the search
    is finished by bisection, so the certified read-out is the root as from a near start (it was
    14% above it from 1e9, 9e5 from 1e15; the lower end 0)."""
    (a, mu, db), = _prefix_atoms(upper, sizes=(8,))
    near = readout.mixed_root(a, mu, db, upper, 1.3)
    finished = []
    real = mixed_search._bisect
    monkeypatch.setattr(mixed_search, "_bisect", lambda *args: finished.append(1) or real(*args))
    for guess in (1e9, 1e15, 1e300):
        assert readout.mixed_root(a, mu, db, upper, guess) == pytest.approx(near, rel=1e-9)
    assert len(finished) >= 3
    finished.clear()
    assert readout.mixed_root(a, mu, db, upper, 1.3) == near and not finished


@pytest.mark.parametrize("upper", [True, False])
def test_lattice_pmfs_laid_out_at_once_read_as_their_own_atoms(upper):
    """A batch of lattice pmfs (a curve's running pmfs, one given twice) laid out in one pass has
    the locations, masses and bookkeeping of each pmf's own atoms(), and reads the same roots, bit
    for bit."""
    from dpplanner.engine.optimal.lattice import LatticePMF

    rng = np.random.default_rng(5)
    pmfs = []
    for n in (1, 7, 40, 300):
        p = rng.random(n)
        pmfs.append(LatticePMF(2.0 ** -9, int(rng.integers(-200, 50)), p / p.sum(), float(rng.normal(0, 0.3)),
                               upper, rel=1e-13 * n, err=1e-18 * n, inf_mass=1e-17 * n))
    pmfs.insert(2, pmfs[1])
    batch = readout.LatticeAtoms(pmfs)
    own = [x.atoms() for x in pmfs]
    sets, books = AtomSets([(a.l, a.p) for a in own]), readout._Books.of(own)
    for i, a in enumerate(own):
        l, p = batch.sets.view(i)
        assert l.tobytes() == a.l.tobytes() and p.tobytes() == a.p.tobytes()
    for field in ("rel", "err", "inf_mass", "lam"):
        assert getattr(batch.books, field).tobytes() == getattr(books, field).tobytes()
    mus, dbs = np.full(len(pmfs), 0.3), np.full(len(pmfs), 1e-6)
    assert readout.mixed_roots(batch, mus, dbs, upper).tobytes() == readout.mixed_roots(own, mus, dbs, upper).tobytes()
    assert sets.size.tolist() == batch.sets.size.tolist()


@pytest.mark.parametrize("upper", [True, False])
def test_a_lone_search_finds_the_root_a_batch_finds_for_it(upper):
    """A lone read-out (a bracket's) is searched in floats, a batch in arrays (whose per-set sums
    may differ in the last bits): the same roots, from near them, from far above them (the
    bisection's finish) and from above every atom."""
    items = []
    for n, m in ((13, 200.0), (2, 12.0)):     # (a small Gaussian first: atoms far above its root)
        r, _ = twins(laplace_params(np.array([4.0, 9.0])), np.array([n, 2 * n]), (np.array([m]), np.array([m])),
                     np.array([n]), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), 1e-6)
        items.append((composed_pmf(r, 2.0 ** -10, upper).atoms(), *((r.mu_up, r.delta_bar) if upper else
                                                                   (r.mu_lo, r.delta_bar_hi))))
    (a, mu, db), (b, mu_b, db_b) = items
    for x in (1.3, 0.7, 1e9, 0.0):
        start = x if x > 0 else float(a.l[-1]) + mu * mu / 2
        lone = mixed_search.halley(AtomSets([(a.l, a.p)]), np.array([mu]), np.array([np.log(db)]),
                                   np.array([start]), 1e-6)
        batch = mixed_search.halley(AtomSets([(a.l, a.p), (b.l, b.p)]), np.array([mu, mu_b]),
                                    np.array([np.log(db), np.log(db_b)]), np.array([start, start]), 1e-6)
        assert lone[0] == pytest.approx(batch[0], rel=1e-12)
