"""The prefix curve of a small plan from the loss window's two sides, every prefix at once.

``window`` brackets one plan by connect-the-dots above and a test set below, both composed by
shifted adds in a coordinate that only grows as queries are added (the CTD loss's deficit below
its largest value; the key of the outcome's "-" set). Since nothing is ever cut, the running
arrays after k queries ARE prefix k's arrays: one pass over the queries, a copy of the two arrays
at each requested k, and every prefix read at once (the upper ends by one table of ``sup_root``'s
arithmetic, the lower ends by the test set's formula on 2-D arrays). A hundred prefixes of a
hundred queries cost a few numpy passes over a few thousand points each, where the running-lattice curve
(``prefix_sides``) spent some thirty numpy calls per prefix.

Both ends are second order in the step with no error term to certify, so the coarse grid of
``window._start_step`` serves the whole curve; the prefixes it leaves wider than the width are
computed again, alone, on a grid twice as fine (a function of the plan and the width only).

Soundness is ``window``'s, prefix by prefix:
* ABOVE: prefix k's array is ``window.ctd_upper``'s with no cut, read as ``sup_root`` reads it
  from the floor lo_k <= the exact root (the test set's lower bound at delta_bar_hi >= the exact
  delta_bar): atoms at or below the floor add nothing to delta(x) for x >= floor.
* BELOW: prefix k's counts are ``window.key_set_lower``'s with every key kept (cut at the largest
  key), its bound evaluated row-wise with the same roundings; its sums (Sigma eps, log Z) are
  math.fsum's of the prefix, as there.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .atoms import U, WINDOW, edge_count, sup_root
from .batched_roots import TINY_DELTA_BAR, read_rows
from .lattice import LatticePMF
from .pld import _kernel_taps, kernel_table
from .window import _start_step

#: Most queries (the last requested prefix's length) this path takes on.
MAX_QUERIES = 2000
#: Most point-operations (queries x points of both sides) of one pass.
MAX_WORK = 1 << 23
#: Most stored points (requested prefixes x points of both sides) of one pass.
MAX_STORED = 1 << 22
#: Most passes (each halves the step, for the prefixes still wider than the width).
MAX_LEVELS = 6
#: The test sets tried per prefix: P(S) from delta_bar_hi to this many times it.
BAND_RATIO = 1e4
#: Mass cut from the top of the CTD pmf (to +infinity), all cuts together: this share of delta_bar.
TAIL_SHARE = 1e-6
#: The top is cut only from pmfs longer than this (a scan for a few points costs more than it saves).
CUT_MIN_POINTS = 128
#: Keys of the coarse first pass that places the windows (window.py's first lower bound).
COARSE_KEYS = 512


def window_prefix_curve(eps: np.ndarray, delta_bars: np.ndarray, hi_bars: np.ndarray, ks: np.ndarray,
                        width: float, cancel=None, progress=None) -> Optional[tuple[np.ndarray, np.ndarray]]:
    """(upper, lower) bracketing OptComp(eps[:k], delta_bar) for each k = ks[j] (ascending, every
    0 < delta_bars[j] <= delta_bar <= hi_bars[j] < 1), refined until each width is <= ``width``
    or the caps; None where the plan is beyond this path (too large, or counts out of range).
    ``progress`` hears of each side's pass (the first grid's as the first 90 %)."""
    eps = np.asarray(eps, dtype=float)[: int(ks[-1])]
    if eps.size > MAX_QUERIES or not np.all(eps <= 700.0):   # (a weight e^{eps} stays finite)
        return None
    sums = np.array([math.fsum(part) for part in _prefixes(eps.tolist(), ks)])   # Sigma eps, rounded
    if math.fsum(np.log1p(np.exp(-eps)).tolist()) > 600:     # Z = prod p_i would leave the range
        return None
    step = _start_step(eps, width)
    # OptComp <= the plain sum (rounded up): short prefixes' lumpy lattices often read above it
    upper = np.array([math.nextafter(x, math.inf) for x in sums.tolist()])
    # a first lower bound from every key on a coarse grid places the windows (as in window.py)
    coarse = 2.0 ** math.ceil(math.log2(max(float(sums[-1]) / COARSE_KEYS, 2.0 ** -40)))
    lower = np.zeros(ks.size)
    if coarse > step:
        lower = _key_set_rows(eps, hi_bars, ks, sums, coarse, lower, cancel)
        if lower is None:
            return None
    _tell(progress, 0.1)
    todo = np.arange(ks.size)
    for level in range(MAX_LEVELS):
        k_last = int(ks[todo[-1]])
        # CTD: (sum - floor) / (D / 2) points; keys half as many, two counts each
        points = 4 * float(np.max(sums[todo] - lower[todo])) / step + 8
        if k_last * points > MAX_WORK or todo.size * points > MAX_STORED:
            if level == 0:
                return None
            break
        sub = eps[:k_last]
        lo = _key_set_rows(sub, hi_bars[todo], ks[todo], sums[todo], step, lower[todo], cancel)
        if lo is None:
            return None if level == 0 else (upper, lower)
        lower[todo] = np.maximum(lower[todo], lo)
        _tell(progress, 0.5 if level == 0 else 0.9)
        # connect the dots on a grid twice as fine as the keys': on one grid its error is the
        # larger (~2x the test set's with keys at half the step), and the upper ends are what a
        # plot shows (within ~5e-4 of the exact value at 100 queries to eta = 0.01, not ~2e-3)
        up = _ctd_rows(sub, delta_bars[todo], ks[todo], sums[todo], step / 2, lower[todo], cancel)
        upper[todo] = np.minimum(upper[todo], up)
        _tell(progress, 0.9)
        todo = todo[upper[todo] - lower[todo] > width]
        if not todo.size:
            break
        step /= 2
    return upper, lower


def _tell(progress, fraction: float) -> None:
    if progress is not None:
        progress(fraction)


def _prefixes(plain: list, ks: np.ndarray):
    return (plain[:k] for k in ks.tolist())


def _ctd_rows(eps, delta_bars, ks, sums, step: float, floors, cancel) -> np.ndarray:
    """Upper read-outs of each prefix's connect-the-dots pmf (window.ctd_upper): every deficit
    whose loss can be above some prefix's floor is computed, and read from that floor. As in the
    running lattices (``lattice.truncate``), every 8th query the top entries carrying at most
    TAIL_SHARE of the least delta_bar (8 queries' share) go to +infinity, where they count in full."""
    n, q, a, b, _off, k_rel = kernel_table(eps, step, True)
    top = n + (b > 0)                                 # each kernel's largest index
    tops = np.cumsum(top)[ks - 1]
    # the offset -sum eps, correctly rounded and one step up (window.ctd_upper)
    offsets = np.array([math.nextafter(-x, math.inf) for x in sums.tolist()])
    # deficits d with offset + (top - d) step <= floor - 2 step add nothing at the floor or above
    reach = np.minimum(np.ceil((offsets + tops * step - floors) / step) + 2, tops + 1).astype(np.int64)
    size = max(int(np.max(reach)), 1)
    tail = TAIL_SHARE * float(np.min(delta_bars)) / eps.size * 8
    rows = np.zeros((ks.size, size))
    rels, cuts, infs = np.zeros(ks.size), np.zeros(ks.size, dtype=np.int64), np.zeros(ks.size)
    # each query's shifted adds go straight into the next requested prefix's row (zeros already:
    # nothing to clear, no copy after), or into one of two spare arrays between requested prefixes
    spares = (np.zeros(size), np.zeros(size))
    arr = spares[0]                                   # arr[d]: mass at deficit d below the top
    arr[0] = 1.0
    wanted = ks.tolist()
    c, cur, rel, inf_mass, j = 0, 1, 0.0, 0.0, 0      # entries [c, cur) are live
    known: dict = {}
    for i, (x, ni, qi, ai, bi, ri, ti) in enumerate(zip(eps.tolist(), n.tolist(), q.tolist(), a.tolist(),
                                                        b.tolist(), k_rel.tolist(), top.tolist())):
        if cancel is not None and i % 16 == 0:
            cancel.check()
        in_row = x > 0 and j < len(wanted) and wanted[j] == i + 1
        if x > 0:                                     # (RR(0) is the identity)
            taps = known.get(x)                       # (equal epsilons: equal kernels)
            if taps is None:
                taps = known[x] = _kernel_taps(ni, qi, ai, bi)
            new = min(cur + ti, size)
            if in_row:
                out = rows[j]
            else:
                out = spares[1] if arr is spares[0] else spares[0]
                out[c:new] = 0.0
            for pos, v in reversed(taps):             # position pos is deficit ti - pos (ascending,
                d = ti - pos                          # window.ctd_upper's order of the sums)
                length = min(cur - c, new - c - d)
                if length > 0:
                    out[c + d:c + d + length] += v * arr[c:c + length]
            arr, cur = out, new
            g = 1.01 * (len(taps) + 2) * U            # as in window.ctd_upper
            rel = rel + ri + rel * ri
            rel = rel + g + rel * g
            if i % 8 == 7 and cur - c > CUT_MIN_POINTS:
                cut = min(edge_count(arr[c:cur], tail), cur - c - 1)
                if cut:                               # (lattice.truncate's charge for the top)
                    inf_mass += float(arr[c:c + cut].sum()) * (1 + rel + 1.01 * (cur - c + 2) * U + 4 * U)
                    arr[c:c + cut] = 0.0              # (a row holds its live entries only)
                    c += cut
        while j < len(wanted) and wanted[j] == i + 1:
            if not in_row:
                rows[j, c:cur] = arr[c:cur]
            in_row = False                            # (a repeated k: the row is copied)
            rels[j], cuts[j], infs[j] = rel, c, inf_mass
            j += 1
    return _read_rows(rows, tops, reach, np.minimum(cuts, reach - 1), offsets, rels, infs, step, delta_bars,
                      floors)


def _row_pmf(rows, r: int, tops, reach, cuts, offsets, rels, infs, step: float) -> LatticePMF:
    """Prefix r's connect-the-dots pmf: deficit d (rows[r, d], cuts[r] <= d < reach[r]) at
    offset + (top - d) step, its top's cut mass at +infinity."""
    t, w, cr = int(tops[r]), int(reach[r]), int(cuts[r])
    return LatticePMF(step, t - (w - 1), rows[r, cr:w][::-1], float(offsets[r]), True, rel=float(rels[r]),
                      inf_mass=float(infs[r]))


def _read_rows(rows, tops, reach, cuts, offsets, rels, infs, step: float, delta_bars, floors) -> np.ndarray:
    """sup_root of each prefix's pmf (``_row_pmf``) from its floor, as ``sup_roots`` reads it:
    its table laid out from the 2-D rows at once, every location, factor and bound computed by
    the same operations on the same operands as ``LatticePMF.atoms(above=floor)`` and
    ``batched_roots._read_table`` (elementwise numpy is IEEE arithmetic, as Python's floats).
    The read-outs sup_roots would make alone (beyond one window, mass at +infinity that
    swamps delta_bar, nothing above the floor) are made alone here too."""
    dbs, floors = np.asarray(delta_bars, dtype=float), np.asarray(floors, dtype=float)
    size = reach - cuts                               # each pmf's length
    start = tops - (reach - 1)
    # atoms(above=floor): the pmf's atoms from index j0a on
    j0a = np.clip(np.floor((floors - offsets) / step) - start - 1, 0, size).astype(np.int64)
    floor = np.maximum(floors, 0.0)
    # the pmf's atoms from j0a up, from the top down: deficit cuts + c in column c
    width = max(int(np.max(size - j0a)), 1)
    cols = np.arange(width)[None, :]
    live = cols < (size - j0a)[:, None]
    L = offsets[:, None] + step * ((tops - cuts)[:, None] - cols).astype(float)
    j0 = np.count_nonzero(live & (L <= floor[:, None]), axis=1)    # sup_root's searchsorted
    lens = size - j0a - j0
    top = L[:, 0]
    at = np.arange(rows.shape[0])
    shift = L[at, np.maximum(lens - 1, 0)]
    alone = ((infs * (1 + 4 * U) >= dbs) | (lens == 0) | (dbs < TINY_DELTA_BAR)
             | (shift < top - WINDOW))
    out = np.empty(rows.shape[0])
    for r in np.flatnonzero(alone).tolist():
        pmf = _row_pmf(rows, r, tops, reach, cuts, offsets, rels, infs, step)
        out[r] = sup_root(pmf.atoms(above=float(floors[r])), float(dbs[r]), float(floors[r]))
    go = np.flatnonzero(~alone)
    if not go.size:
        return out
    L, lens, shift = L[go], lens[go], shift[go]
    live = cols < lens[:, None]
    deficits = np.minimum(cuts[go, None] + cols, rows.shape[1] - 1)
    P = np.where(live, np.take_along_axis(rows[go], deficits, axis=1), 0.0)
    np.copyto(L, shift[:, None], where=~live)         # the padding: the lowest atom's location
    rel = rels[go] + 1.01 * (size[go] + 4) * U        # LatticePMF.atoms: the full length's
    n_atoms = (size - j0a)[go]
    gam = 1.01 * (n_atoms + 4) * U                    # sum_margin(n_atoms, rel)
    m = rel + gam + rel * gam + 8 * U
    r_den = m + 2 * U * (top[go] - shift + 2.0)
    k_num = 1 + m + 4 * U
    extra = (0.0 + infs[go]) * (1 + 4 * U)
    k_den = np.maximum(1 - r_den - 4 * U, 0.0)
    best = read_rows(True, L, P, lens, k_num[:, None], extra[:, None], k_den[:, None], np.zeros((go.size, 1)),
                     dbs[go, None], floor[go, None])
    x = np.maximum(best, floor[go])                   # no valid candidate: the floor
    lam = 4 * U * (np.abs(offsets[go]) + step * (np.abs(start[go]) + size[go]))
    out[go] = x + lam + 4 * U * np.abs(x)
    return out


def _key_set_rows(eps, hi_bars, ks, sums, h: float, floors, cancel) -> Optional[np.ndarray]:
    """window.key_set_lower of each prefix at its delta_bar_hi, with the keys up to the cut that
    matters for answers >= its floor; None if the counts overflow."""
    keys = np.rint(eps / h).astype(np.int64)          # h a power of two: eps / h is exact
    plain = eps.tolist()
    miss = np.array([math.fsum(part) for part in _prefixes(np.abs(eps - keys * h).tolist(), ks)])
    widths = np.minimum(np.cumsum(keys)[ks - 1] + 1,
                        np.ceil((sums - floors) / (2 * h) + miss / h).astype(np.int64) + 4)
    size = int(np.max(widths))
    counts = np.zeros((2, size))                      # rows: P (weights e^-eps), Q (e^eps)
    counts[:, 0] = 1.0
    cp, cq = np.zeros((ks.size, size)), np.zeros((ks.size, size))
    # each query's weights (libm's exp: within an ulp), as a column for both counts
    weights = np.array([[[math.exp(-x)], [math.exp(x)]] for x in plain]).reshape(-1, 2, 1)
    cur, j = 1, 0
    with np.errstate(over="ignore", invalid="ignore"):     # (once: ~6 us a time, as much as the adds)
        for i, (x, ai) in enumerate(zip(plain, keys.tolist())):
            if cancel is not None and i % 16 == 0:
                cancel.check()
            if x > 0:                                 # (RR(0) is the identity: its Z factor is 1/2)
                w = weights[i]
                if ai == 0:
                    counts[:, :cur] *= 1.0 + w
                elif ai < size:
                    new = min(cur + ai, size)
                    counts[:, ai:new] += w * counts[:, :new - ai]
                    cur = new
            while j < ks.size and ks[j] == i + 1:
                cp[j, :cur], cq[j, :cur] = counts[0, :cur], counts[1, :cur]
                j += 1
        np.cumsum(cp, axis=1, out=cp)
        np.cumsum(cq, axis=1, out=cq)
    if not (np.all(np.isfinite(cp[:, -1])) and np.all(np.isfinite(cq[:, -1]))):
        return None
    log_z = -np.array([math.fsum(part) for part in
                       _prefixes(np.where(eps > 0, np.log1p(np.exp(-eps)), 0.0).tolist(), ks)])
    kk = ks.astype(float)
    # window.key_set_lower's error terms for each prefix: k queries, a running sum over its keys
    # up to the cut (the zero padding after its largest key repeats that sum exactly)
    r = 1.01 * (8 * kk + widths + 8) * U
    z_err = 4 * U * np.abs(log_z) + 4 * U * kk + U
    z_lo = np.array([math.exp(v) for v in (log_z - z_err).tolist()]) * (1 - 4 * U)
    z_hi = np.array([math.exp(v) for v in (log_z + z_err).tolist()]) * (1 + 4 * U)
    s_lo = np.array([math.nextafter(x, -math.inf) for x in sums.tolist()])
    his = np.asarray(hi_bars, dtype=float)
    keep = z_lo * (1 - r - 4 * U)
    # only the cuts s whose P(S_s) is between delta_bar_hi and BAND_RATIO times it are tried (any
    # set gives a certified bound; the best one was within that band on every plan measured)
    with np.errstate(divide="ignore"):
        need = (his / keep)[:, None]
    first = np.count_nonzero(cp <= need, axis=1)      # (cp rises along each row)
    last = np.count_nonzero(cp <= BAND_RATIO * need, axis=1)
    ends = widths - 1
    first = np.minimum(first, ends)
    last = np.clip(last, first, ends)
    cols = np.minimum(first[:, None] + np.arange(int(np.max(last - first)) + 1)[None, :], last[:, None])
    at = np.arange(ks.size)[:, None]
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        num = (cp[at, cols] * keep[:, None] - his[:, None]) * (1 - 2 * U)
        den = cq[at, cols] * (z_hi * (1 + r + 4 * U))[:, None]
        ok = (num > 0) & (den > 0)
        x = np.full(num.shape, -np.inf)
        np.log(num / den, out=x, where=ok)
        x += s_lo[:, None]
    best = x.max(axis=1)
    # x - 8 u (|x| + |s| + 1) - 4 u |s| grows with x: applied to the row's largest x, as to each
    best = best - 8 * U * (np.abs(best) + np.abs(s_lo) + 1.0) - 4 * U * np.abs(s_lo)
    return np.where(np.isfinite(best), np.maximum(best, 0.0), 0.0)
