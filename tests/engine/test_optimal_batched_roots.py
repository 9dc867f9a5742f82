"""sup_roots: many read-outs at once give exactly sup_root's numbers, one at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpplanner.engine.optimal import batched_roots
from dpplanner.engine.optimal.atoms import Atoms, sup_root
from dpplanner.engine.optimal.lattice import LatticePMF


def _atoms(rng, upper: bool, span: float, n: int) -> Atoms:
    """A pmf on a lattice over [-span, span] with the bookkeeping a composition leaves."""
    step = 2 * span / max(n - 1, 1)
    p = rng.dirichlet(np.full(n, 0.3))
    p[rng.random(n) < 0.1] = 0.0
    pmf = LatticePMF(step, -(n // 2), p, float(rng.uniform(-step, step)), upper,
                     rel=float(rng.uniform(0, 1e-12)), err=float(rng.choice([0.0, 1e-15, 1e-9])),
                     inf_mass=float(rng.choice([0.0, 1e-14])) if upper else 0.0)
    cut = rng.choice([None, 0.0, rng.uniform(0, span)])
    return pmf.atoms(above=None if cut is None else float(cut))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_batched_read_outs_equal_single_ones(seed, upper):
    rng = np.random.default_rng(seed)
    atoms, bars, floors = [], [], []
    for _ in range(int(rng.integers(1, 12))):
        # spans past sup_root's window (several windows) and delta_bars down to the underflow path
        span = float(rng.choice([0.05, 1.0, 5.0, 400.0]))
        atoms.append(_atoms(rng, upper, span, int(rng.integers(1, 400))))
        bars.append(float(10.0 ** rng.uniform(-12, -0.5)) if rng.random() < 0.9 else
                    float(rng.choice([1e-300, 1e-9, 0.4])))
        floors.append(float(rng.choice([0.0, -1.0, rng.uniform(0, span)])))
    got = batched_roots.sup_roots(atoms, bars, floors)
    want = [sup_root(a, db, f) for a, db, f in zip(atoms, bars, floors)]
    np.testing.assert_array_equal(got, want)


def test_large_batches_are_split_into_tables(monkeypatch):
    """Read-outs beyond TABLE_ATOMS go through more tables, with the same numbers."""
    rng = np.random.default_rng(1)
    atoms = [_atoms(rng, True, 1.0, 300) for _ in range(20)]
    bars = [1e-6] * 20
    tables = []
    real = batched_roots._read_table
    monkeypatch.setattr(batched_roots, "TABLE_ATOMS", 500)
    monkeypatch.setattr(batched_roots, "_read_table", lambda a, b, f, rows, out: tables.append(
        [a[i].l.size - j0 for i, j0 in rows]) or real(a, b, f, rows, out))
    got = batched_roots.sup_roots(atoms, bars, [0.0] * 20)
    assert len(tables) > 3 and sum(map(len, tables)) == 20
    assert all(sum(t) <= 500 or len(t) == 1 for t in tables)
    np.testing.assert_array_equal(got, [sup_root(a, 1e-6) for a in atoms])
