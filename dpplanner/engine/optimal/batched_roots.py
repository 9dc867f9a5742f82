"""``sup_root`` of many read-outs at once, with the same numbers as one at a time.

A prefix curve reads a hundred roots off running pmfs of a few thousand atoms each; one
``sup_root`` costs some thirty numpy calls, whose overhead, not the atoms, was most of the
curve's time. Read-outs whose atoms above the floor fit one window of ``sup_root`` (log-range
WINDOW, delta_bar not near the underflow range: every plan whose epsilons sum to less than a few
hundred) are laid out as the rows of one table, padded on the right with zero probabilities, and
go through ``sup_root``'s single-window arithmetic together: the same operations on the same
operands in the same order (the padding comes after each row's atoms), so every bound
and its rounding argument are those of ``atoms.sup_root``. The others are read one at a time.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from .atoms import SUB, WINDOW, Atoms, U, sum_margin, sup_root

#: Rows of one table hold at most about this many atoms together (memory: a few arrays of it).
TABLE_ATOMS = 1 << 15
#: delta_bar below this takes sup_root's underflow-narrowing path (one read at a time).
TINY_DELTA_BAR = 1e-250


def sup_roots(atoms: Sequence[Atoms], delta_bars, floors) -> np.ndarray:
    """sup_root(atoms[i], delta_bars[i], floors[i]) for every i."""
    out = np.empty(len(atoms))
    tables: dict[bool, list[tuple[int, int]]] = {True: [], False: []}   # by direction: (i, j0)
    for i, a in enumerate(atoms):
        db, floor = float(delta_bars[i]), max(float(floors[i]), 0.0)
        j0 = int(np.searchsorted(a.l, floor, side="right"))
        alone = (a.upper and (a.err + a.inf_mass) * (1 + 4 * U) >= db) or j0 == a.l.size \
            or db < TINY_DELTA_BAR or float(a.l[j0]) < float(a.l[-1]) - WINDOW
        if alone:
            out[i] = sup_root(a, db, floor)
        else:
            tables[a.upper].append((i, j0))
    for rows in tables.values():
        start, size = 0, 0
        for k, (i, j0) in enumerate(rows):
            n = atoms[i].l.size - j0
            if k > start and size + n > TABLE_ATOMS:
                _read_table(atoms, delta_bars, floors, rows[start:k], out)
                start, size = k, 0
            size += n
        if start < len(rows):
            _read_table(atoms, delta_bars, floors, rows[start:], out)
    return out


def _read_table(atoms, delta_bars, floors, rows, out: np.ndarray) -> None:
    """Read-outs in one direction, each within one window, through ``read_rows``.

    Each row holds its atoms from the top down, then zeros: a row's running sums are the suffix
    sums of sup_root. A padding column repeats the lowest atom's location (the shift)."""
    upper = atoms[rows[0][0]].upper
    n_rows = len(rows)
    lens = np.array([atoms[i].l.size - j0 for i, j0 in rows])
    width = int(lens.max())
    L = np.empty((n_rows, width))
    P = np.zeros((n_rows, width))
    k_num, extra, k_den, add_den, db, floor = (np.empty((n_rows, 1)) for _ in range(6))
    for r, (i, j0) in enumerate(rows):
        a, n = atoms[i], int(lens[r])
        L[r, :n], P[r, :n] = a.l[:j0 - 1 if j0 else None:-1], a.p[:j0 - 1 if j0 else None:-1]
        L[r, n:] = a.l[j0]               # the shift: exp(0) times probability 0
        m = sum_margin(a.p.size, a.rel)
        r_den = m + 2 * U * (float(a.l[-1]) - float(a.l[j0]) + 2.0)
        if upper:
            k_num[r], extra[r] = 1 + m + 4 * U, (a.err + a.inf_mass) * (1 + 4 * U)
            k_den[r], add_den[r] = max(1 - r_den - 4 * U, 0.0), 0.0
        else:
            k_num[r], extra[r] = 1 - m - 4 * U, a.err * (1 + 4 * U)
            k_den[r], add_den[r] = 1 + r_den + 4 * U, n * SUB
        db[r], floor[r] = float(delta_bars[i]), max(float(floors[i]), 0.0)
    best = read_rows(upper, L, P, lens, k_num, extra, k_den, add_den, db, floor)
    for r, (i, _j0) in enumerate(rows):
        a, f = atoms[i], float(floor[r, 0])
        x = max(float(best[r]), f)     # no valid candidate: the floor (sup_root's last line)
        out[i] = x + a.lam + 4 * U * abs(x) if a.upper else max(x - a.lam - 4 * U * abs(x), 0.0)


def read_rows(upper: bool, L, P, lens, k_num, extra, k_den, add_den, db, floor) -> np.ndarray:
    """sup_root and _seg_roots row-wise on one table (see there for each bound), every operation
    on the same operands in the same order: each row's largest valid candidate root (-inf: none).

    Row r holds its lens[r] atoms above the floor from the top down (locations L, probabilities
    P), then padding: probability 0 at the lowest atom's location, which repeats that atom's
    sums, location and segment start (the floor), so it never changes the row's maximum. The
    other arguments are (rows, 1) columns: sup_root's factors of the numerator and denominator
    (k_num, extra, k_den, add_den) with the row's delta_bar and floor. L is left as it was; P
    is used up."""
    shift = L[np.arange(L.shape[0]), lens - 1][:, None]
    # in place, on four tables: fresh temporaries of this size cost more than the arithmetic
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        num = np.cumsum(P, axis=1)                      # A
        num *= k_num
        if upper:
            num += extra
        else:
            num -= extra
        num -= db
        num *= (1 + 2 * U) if upper else (1 - 2 * U)
        den = np.subtract(L, shift)
        np.negative(den, out=den)
        np.exp(den, out=den)
        den *= P
        np.cumsum(den, axis=1, out=den)                 # B
        den *= k_den
        if not upper:
            den += add_den
        ok = num > 0
        root = num                                      # num is not needed past this
        np.divide(num, den, out=root, where=ok)
        np.log(root, out=root, where=ok)
        np.copyto(root, -np.inf, where=~ok)
        root += shift
        fin = np.isfinite(root)
        slack = np.abs(root, out=den)                   # 8 u (|root| + |shift| + 1)
        slack += np.abs(shift)
        slack += 1.0
        slack *= 8 * U
        if upper:
            np.add(root, slack, out=root, where=fin)
        else:
            np.subtract(root, slack, out=root, where=fin)
    left = P                                            # each atom's segment starts at the one below
    left[:, :-1] = L[:, 1:]
    # the lowest atom's at the floor (and the padding's after it)
    np.copyto(left, floor, where=np.arange(L.shape[1])[None, :] >= (lens - 1)[:, None])
    ok &= root > left
    np.minimum(root, L, out=root)
    np.copyto(root, -np.inf, where=~ok)
    return root.max(axis=1)
