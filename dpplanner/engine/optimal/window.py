"""Small plans: the bracket from the window of losses near the answer, by shifted adds (no FFT).

delta(x) = E[(1 - e^{x - L})^+] only involves the outcomes whose loss L exceeds x, and the answer x
sits far in the upper tail of L. Both bounds below are computed on that window only, which for a
few hundred queries is a few thousand lattice points instead of the whole loss range.

LOWER (a test set). delta(x) is the hockey-stick divergence sup_S P(S) - e^x Q(S) of the composed
randomized-response pairs (Murtagh-Vadhan Thm 1.5), so EVERY set S of outcomes gives the certified
bound delta(x) >= P(S) - e^x Q(S). Write an outcome as the set T of queries whose loss is -eps_i
(L = sum eps - 2 eps(T)), give query i the integer key a_i = round(eps_i / h) and T the key
a(T) = sum_{i in T} a_i, and take S_s = {T : a(T) <= s}. P(S_s) and Q(S_s) are summed for the TRUE
distributions (only the choice of the set uses the rounded keys) by a knapsack count over the keys
(MV Lemma 5.1): scaled by Z = prod p_i, an outcome T weighs e^{-eps(T)} under P and
e^{-sum eps} e^{eps(T)} under Q. Keys only grow as queries are added, so cutting the count at the
largest key of interest is exact for every key below it. The best S_s misclassifies only outcomes
whose loss is within sum |eps_i - a_i h| of x, where their term P(T)(1 - e^{x - L(T)}) is itself
that small: the bound is off by second order in h (no lattice rounding of the epsilons).

UPPER (connect the dots, as in ``pld``): each query's loss on the lattice D Z by ``pld.kernels``,
composed by shifted adds in the "deficit" coordinate (how far below its largest value the loss
is). An outcome whose deficit already puts its loss below the certified lower bound lo adds
nothing to delta(x) at any x >= lo, and the deficit only grows: such outcomes are dropped and the
pmf is read by ``sup_root`` from the floor lo (the exact root is >= lo).

Floating point: every count is a sum of products of non-negative numbers (relative error gamma_n,
Higham §3.1); the read-outs are rounded as in ``atoms``.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .atoms import U, sup_root
from .lattice import LatticePMF
from .pld import kernels
from .result import Bracket
from ..numerics import widen_down, widen_up

#: Most queries (multiplicities spelled out) this path takes on.
MAX_QUERIES = 4000
#: Most point-operations (queries x window points) of one refinement level.
MAX_WORK = 1 << 24
#: Most refinement levels (each halves the lattice step).
MAX_LEVELS = 12


def window_bracket(e: np.ndarray, m: np.ndarray, delta_bar: float, delta_bar_hi: float, eta: float,
                   cancel=None) -> Optional[Bracket]:
    """lower <= OptComp <= upper from the loss window, refined until the width is <= eta or the
    work cap; None if the plan is too large for this path (0 < delta_bar <= delta_bar_hi < 1)."""
    k = int(np.sum(m))
    if k > MAX_QUERIES or k < 2:
        return None
    eps = np.repeat(np.asarray(e, dtype=float), np.asarray(m, dtype=np.int64))
    total = math.fsum(eps.tolist())
    log_z = -math.fsum(np.log1p(np.exp(-eps)).tolist())
    if log_z < -600 or not math.isfinite(total) or float(np.max(eps)) > 700.0:
        return None                      # Z = prod p_i, or a weight e^{eps_i}, would leave the range
    step = _start_step(eps, eta)
    # a first lower bound from the whole key range on a coarse grid gives the window's floor
    h0 = 2.0 ** math.ceil(math.log2(max(total / 4096.0, 2.0 ** -40)))
    lo = key_set_lower(eps, delta_bar_hi, h0, 0.0, log_z)
    if lo is None:
        return None
    up, method = math.inf, ""
    for level in range(MAX_LEVELS):
        if cancel is not None:
            cancel.check()
        points = (total - lo) / step + 4
        if k * points > MAX_WORK:
            if level == 0:
                return None
            method = f"; width > eta = {eta:.3g}: a finer window would exceed {MAX_WORK:,} point-operations"
            break
        new_lo = key_set_lower(eps, delta_bar_hi, step / 2, lo, log_z)
        lo = max(lo, new_lo if new_lo is not None else 0.0)
        up = min(up, ctd_upper(eps, delta_bar, step, lo))
        if up - lo <= eta:
            method = ""
            break
        step /= 2
    else:
        method = f"; width > eta = {eta:.3g}: stopped after {MAX_LEVELS} refinements"
    if not math.isfinite(up):
        return None
    return Bracket(widen_up(up), widen_down(lo),
                   f"window d=2^{int(math.log2(step))} (connect-the-dots above, a test set below){method}")


def _start_step(eps: np.ndarray, eta: float) -> float:
    """A power of two whose connect-the-dots error is about eta (it grows like k D^2, measured)."""
    d = math.sqrt(max(eta, 1e-300) / eps.size)
    return 2.0 ** min(-6, math.floor(math.log2(max(d, 2.0 ** -40))))


def key_set_lower(eps: np.ndarray, delta_bar_hi: float, h: float, floor: float,
                   log_z: float) -> Optional[float]:
    """The largest x found with P(S_s) - e^x Q(S_s) > delta_bar_hi for some key cut s (module
    doc): a certified lower bound on OptComp. Keys up to the cut that matters for answers >= floor
    are counted (a smaller window only restricts the sets tried). None if the counts overflow."""
    k = eps.size
    a = np.rint(eps / h).astype(np.int64)          # h a power of two: eps / h is exact
    miss = math.fsum(np.abs(eps - a * h).tolist())  # |eps(T) - a(T) h| <= miss for every T
    total = math.fsum(eps.tolist())
    width = int(min(math.ceil((total - floor) / (2 * h) + miss / h) + 4, int(np.sum(a)) + 1))
    n_p = np.zeros(width)
    n_q = np.zeros(width)
    n_p[0] = n_q[0] = 1.0
    w_p = [math.exp(-x) for x in eps.tolist()]      # (libm's exp: within an ulp)
    w_q = [math.exp(x) for x in eps.tolist()]
    with np.errstate(over="ignore", invalid="ignore"):     # an overflow is caught just below
        for i, ai in enumerate(a.tolist()):
            if ai == 0:
                n_p *= 1.0 + w_p[i]
                n_q *= 1.0 + w_q[i]
            elif ai < width:
                n_p[ai:] += w_p[i] * n_p[:width - ai]
                n_q[ai:] += w_q[i] * n_q[:width - ai]
        c_p, c_q = np.cumsum(n_p), np.cumsum(n_q)
    if not (math.isfinite(float(c_p[-1])) and math.isfinite(float(c_q[-1]))):
        return None
    # relative error of every count and running sum: each step one product by a weight (exp: 2 u
    # charged for its ulp), one product and one addition (Higham §3.1; 8 u per step leaves room),
    # then the running sum over the window
    r = 1.01 * (8 * k + width + 8) * U
    # log Z: k terms of a few ulps each, summed correctly rounded (fsum)
    z_err = 4 * U * abs(log_z) + 4 * U * k + U
    z_lo = math.exp(log_z - z_err) * (1 - 4 * U)
    z_hi = math.exp(log_z + z_err) * (1 + 4 * U)
    s_lo = math.nextafter(total, -math.inf)             # e^{x - sum eps} <= e^{x - s_lo}
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        num = (c_p * (z_lo * (1 - r - 4 * U)) - delta_bar_hi) * (1 - 2 * U)
        den = c_q * (z_hi * (1 + r + 4 * U))
        ok = (num > 0) & (den > 0)
        if not ok.any():
            return 0.0
        x = s_lo + np.log(num[ok] / den[ok])
    x = x - 8 * U * (np.abs(x) + abs(s_lo) + 1.0) - 4 * U * abs(s_lo)
    best = float(np.max(x))
    # the set is valid for every x below the one found (P(S) - e^x Q(S) decreases in x)
    return max(0.0, best) if math.isfinite(best) else None


def ctd_upper(eps: np.ndarray, delta_bar: float, step: float, floor: float) -> float:
    """The connect-the-dots upper bound, composed only down to the loss ``floor`` (a certified
    lower bound on OptComp at ``delta_bar``) and read from there."""
    built = kernels(eps, step, True)   # (one table for every distinct epsilon)
    kers = [built[x] for x in eps.tolist()]
    top = sum(ker.p.size - 1 for ker in kers)      # the largest index of the composed lattice
    offset = math.nextafter(math.fsum(ker.offset for ker in kers), math.inf)
    # deficits d >= width have loss offset + (top - d) step <= floor - 2 step (each is exact up to
    # the offset's rounding, which is upward): they add nothing to delta(x) for x >= floor
    width = int(min(math.ceil((offset + top * step - floor) / step) + 2, top + 1))
    width = max(width, 1)
    arr = np.zeros(width)
    arr[0] = 1.0
    rel = 0.0
    taps = {}       # each distinct kernel's non-zero (deficit, mass), deficit j <- index size - 1 - j
    for ker in kers:
        if id(ker) not in taps:
            rev = ker.p[::-1]
            taps[id(ker)] = [(j, v) for j, v in enumerate(rev.tolist()) if v != 0.0]
        nz = taps[id(ker)]
        out = np.zeros(width)
        for j, v in nz:
            if j < width:
                out[j:] += v * arr[:width - j]
        g = 1.01 * (len(nz) + 2) * U
        rel = rel + ker.rel + rel * ker.rel
        rel = rel + g + rel * g
        arr = out
    pmf = LatticePMF(step, top - (width - 1), arr[::-1].copy(), offset, True, rel=rel)
    return sup_root(pmf.atoms(above=floor), delta_bar, floor)
