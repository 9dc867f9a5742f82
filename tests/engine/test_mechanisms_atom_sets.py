"""AtomSets: the read-outs of a batch laid end to end, their windows found and gathered at once."""

from __future__ import annotations

import numpy as np

from dpplanner.engine.mechanisms.atom_sets import AtomSets


def _sets(rng):
    """Lattices as LatticePMF.atoms lays them (offset + step * index), irregular sets, one with
    repeated locations, and one of a single atom."""
    out = []
    for n in (5, 40, 300, 1000):
        step, start = float(rng.uniform(1e-4, 0.1)), int(rng.integers(-500, 500))
        out.append((float(rng.uniform(-3, 3)) + step * np.arange(start, start + n, dtype=float), rng.random(n)))
    out.append((np.sort(rng.normal(0.0, 2.0, 200)), rng.random(200)))
    out.append((np.repeat(np.linspace(-1.0, 1.0, 10), 25), rng.random(250)))
    out.append((np.array([0.5]), np.array([1.0])))
    return out


def test_windows_are_exactly_where_searchsorted_puts_them():
    """Each read-out's window starts where searchsorted (side left) on its own atoms says, for
    thresholds below, inside, on and above its atoms, and infinite or nan ones."""
    rng = np.random.default_rng(5)
    sets = _sets(rng)
    batch = AtomSets(sets * 3)      # (more read-outs than the one-at-a-time path takes)
    sel = np.arange(batch.n)
    for _ in range(30):
        picks = [l[int(rng.integers(0, l.size))] for l, _p in sets * 3]
        x = np.array([t + float(rng.choice([0.0, 1e-13, -1e-13, rng.normal(0, 0.5)])) for t in picks])
        x[rng.integers(0, x.size)] = rng.choice([np.inf, -np.inf, np.nan, 1e9, -1e9])
        mu = rng.uniform(0.1, 2.0, x.size)
        z = 15.0
        want = [int(l.searchsorted(xi - m * (m / 2 + z))) for (l, _p), xi, m in zip(sets * 3, x, mu)]
        assert batch.windows(sel, x, mu, z).tolist() == want


def test_a_gather_is_each_windows_atoms_in_order_with_their_sums():
    """gather concatenates the atoms from each window's start on; its segments sum per read-out
    (a read-out with an empty window sums to 0)."""
    rng = np.random.default_rng(6)
    sets = _sets(rng) * 2
    batch = AtomSets(sets)
    sel = np.arange(1, batch.n, 2)
    js = np.array([int(rng.integers(0, sets[i][0].size + 1)) for i in sel.tolist()])
    js[0] = sets[sel[0]][0].size
    locs, p, seg = batch.gather(sel, js)
    np.testing.assert_array_equal(locs, np.concatenate([sets[i][0][j:] for i, j in zip(sel.tolist(), js.tolist())]))
    np.testing.assert_array_equal(p, np.concatenate([sets[i][1][j:] for i, j in zip(sel.tolist(), js.tolist())]))
    sums = seg.sums(p)
    assert sums[0] == 0.0
    np.testing.assert_allclose(sums, [sets[i][1][j:].sum() for i, j in zip(sel.tolist(), js.tolist())], rtol=1e-13)
    below = batch.below(sel[1:], js[1:] + (js[1:] == 0))
    np.testing.assert_allclose(below, [sets[i][1][:max(j, 1)].sum() for i, j in zip(sel[1:].tolist(), js[1:].tolist())],
                               rtol=1e-13)


def test_a_set_shared_by_read_outs_is_stored_once():
    """A privacy profile reads one pmf at many points: its atoms are laid out once, not per point."""
    rng = np.random.default_rng(7)
    (l, p), = _sets(rng)[2:3]
    batch = AtomSets([(l, p)] * 50)
    assert batch.l.size == l.size and batch.n == 50

