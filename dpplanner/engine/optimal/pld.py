"""The fast path: privacy-loss distributions on a lattice, upper and lower, refined adaptively.

Write each query's loss as L_i = -eps_i + Y_i with Y_i in {0, 2 eps_i} (RR(eps): Y_i = 2 eps_i with
probability p_i = 1/(1 + e^-eps_i)). Only the Y_i live on the lattice D Z (D a power of two, so
2 eps / D, floors and products n D are exact in floating point); the offsets -eps_i stay real.

UPPER ("connect the dots", Doroshenko-Ghazi-Kamath-Kumar-Manurangsi, PETS 2022): the atom 2 eps,
between grid points g = nD and g + D, is split into masses on g and g + D with the same total mass
and the same E[e^{-Y}]. Soundness: conditionally on the other queries (independent), delta(x) is
E[phi(e^{-Y_i})] with phi(u) = (1 - c u)^+ convex in u (c = e^{x - rest} > 0). The split is a
mean-preserving spread in u, so by Jensen (convex order) E[phi] can only grow; doing it for one
query at a time (conditioning each time) bounds delta(x) for every x. We round the weight of the
upper point up, which moves mass to a larger loss and again only increases delta.

LOWER: each query is replaced by RR(eps_i^-) with eps_i^- = floor(2 eps_i / D) D / 2 <= eps_i, so Y
stays on the lattice. RR(eps^-) is a post-processing of RR(eps) (class inclusion), hence
OptComp(eps^-) <= OptComp(eps) (formulas.md §4.1, monotonicity). Among distributions supported on
the lattice this per-query choice is the largest in the decreasing-convex order, so no per-query
lattice twin does better; its error is first order, about sum_i (eps_i - eps_i^-) eps_i (1 + z/sigma).

Equal epsilons are grouped: m copies are a binomial (lower) or the CTD kernel raised to the m-th
power by repeated squaring (upper). Groups are composed shortest-first (a balanced tree).
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Optional

import numpy as np

from .atoms import U, sup_root
from .binomial import binomial_pmf, log_rr
from .lattice import U_LONG, LatticePMF, compose_all, compose_balanced, power
from .result import Bracket
from .spectral import spectral_pmf
from ..numerics import widen_down, widen_up

#: Largest lattice (number of points of the composed pmf) the adaptive loop will try.
MAX_POINTS = 1 << 23
#: Largest kernel (points) of one query, and the coarsest lattice step: with steps up to 2^1000 no
#: finite epsilon needs a larger kernel on a lattice sized to fit MAX_POINTS.
MAX_KERNEL = 1 << 24
STEP_MAX = 2.0 ** 1000
#: Fraction of delta_bar spent on truncation (each side) and on FFT rounding.
TAIL_FRACTION = 1e-6
FFT_FRACTION = 1e-4
#: Plans of at least this many queries try the spectral path first (below, a tree is as fast).
SPECTRAL_MIN_QUERIES = 1000


def _directed(x: float, upper: bool) -> float:
    return math.nextafter(x, math.inf) if upper else math.nextafter(x, -math.inf)


def _binomial_on_stride(m: int, eps_eff: float, stride: int) -> tuple[np.ndarray, float, float]:
    p, rel, lost = binomial_pmf(m, eps_eff)
    if stride == 0:
        return np.ones(1), 0.0, 0.0
    out = np.zeros(m * stride + 1)
    out[::stride] = p
    return out, rel, lost


def ctd_weight(frac, step: float):
    """Connect-the-dots weight on the upper point g + D of an atom at g + frac (0 <= frac < D):
    the one that keeps E[e^{-Y}], (1 - e^{-frac}) / (1 - e^{-D}), computed to ~3 ulps and rounded
    up (more mass up only increases delta); 0 where frac = 0. Works on arrays, so the split error
    bound's MGFs use exactly the kernels that are composed."""
    frac = np.asarray(frac, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.expm1(-frac) / np.expm1(-step)
    return np.where(frac > 0, np.minimum(1.0, w * (1 + 16 * U) + 1e-300), 0.0)


def kernel_points(eps, step: float):
    """floor(2 eps / step), refused with a clear error beyond MAX_KERNEL (an unbounded allocation);
    an int for a float, an int64 array for an array."""
    t = 2.0 * np.asarray(eps, dtype=float) / step
    bad = ~(t <= MAX_KERNEL)
    if bad.any():
        x = float(np.asarray(eps, dtype=float).reshape(-1)[np.flatnonzero(bad.reshape(-1))[0]])
        raise ValueError(f"epsilon = {x!r} is too large for a lattice step of {float(step)!r} "
                         f"({2.0 * x / step:.3g} points, at most {MAX_KERNEL:,} are allowed); this plan is "
                         "outside what the optimal engine can compute")
    n = np.floor(t).astype(np.int64)
    return int(n) if n.ndim == 0 else n


def kernel_table(eps, step: float, upper: bool):
    """Every query's kernel at once: (n, q, a, b, offset, rel) with Y = 0 w.p. q, n step w.p. a,
    (n + 1) step w.p. b (b = 0 below, and above where 2 eps sits on the lattice).

    UPPER, connect the dots: the atom 2 eps = n step + frac is split into p (1 - w) on n and p w on
    n + 1 (w = ctd_weight, rounded up; frac is exact by Sterbenz, or n = 0); offset -eps.
    LOWER: RR(eps^-) with eps^- = n step / 2 <= eps (exact: n < 2^53, step a power of two).
    rel bounds each mass's relative error (exp and log_rr to a few ulps of their magnitudes).
    """
    eps = np.asarray(eps, dtype=float)
    n = kernel_points(eps, step)
    e_eff = eps if upper else n * step / 2.0
    lp, lq = log_rr(e_eff)
    p, q = np.exp(lp), np.exp(lq)
    if upper:
        w = ctd_weight(2.0 * eps - n * step, step)
        a, b = p * (1.0 - w), p * w
    else:
        a, b = p, np.zeros_like(p)
    rel = 16 * U + 4 * U * (np.abs(lp) + np.abs(lq) + 1)
    return n, q, a, b, -e_eff, rel


def _kernel_taps(n: int, q: float, a: float, b: float) -> list[tuple[int, float]]:
    """The kernel's non-zero (position, mass) pairs (q and a share position 0 where n = 0)."""
    taps = [(0, q + a)] if n == 0 else [(0, q), (n, a)]
    if b > 0:
        taps.append((n + 1, b))
    return [(j, v) for j, v in taps if v != 0.0]


def _kernel_array(n: int, q: float, a: float, b: float) -> np.ndarray:
    ker = np.zeros(n + (2 if b > 0 else 1))
    for j, v in _kernel_taps(n, q, a, b):
        ker[j] = v
    return ker


def _one_kernel(eps: float, step: float, upper: bool) -> LatticePMF:
    n, q, a, b, off, rel = (x.item() for x in kernel_table(np.array([float(eps)]), step, upper))
    return LatticePMF(step, 0, _kernel_array(n, q, a, b), off, upper, rel=rel)


def kernels(eps, step: float, upper: bool) -> dict:
    """{eps: its kernel} for every distinct eps, from one vectorised ``kernel_table`` pass (the
    same numbers as ``upper_kernel`` / ``lower_kernel``, without a table per query)."""
    values = np.unique(np.asarray(eps, dtype=float))
    table = kernel_table(values, step, upper)
    return {x: LatticePMF(step, 0, _kernel_array(n, q, a, b), off, upper, rel=rel)
            for x, n, q, a, b, off, rel in zip(values.tolist(), *(t.tolist() for t in table))}


def upper_kernel(eps: float, step: float) -> LatticePMF:
    """Connect-the-dots pmf of Y for one RR(eps) query on the lattice step * Z (step a power of 2)."""
    return _one_kernel(eps, step, True)


def lower_kernel(eps: float, step: float) -> LatticePMF:
    """RR(eps^-) with eps^- = floor(2 eps / step) step / 2 <= eps: the rounded-down twin."""
    return _one_kernel(eps, step, False)


def _group_pmf(eps: float, m: int, step: float, upper: bool, tail: float, budget: float) -> LatticePMF:
    if upper:
        ker = upper_kernel(eps, step)
        if m == 1:
            return ker
        g = power(ker, m, tail, budget)
        return g
    n = math.floor(2.0 * eps / step)
    eps_lo = n * step / 2.0  # exact: n < 2^53 and step a power of two
    arr, rel, lost = _binomial_on_stride(m, eps_lo, n)
    offset = _directed(-(m * eps_lo), False)
    return LatticePMF(step, 0, arr, offset, False, rel=rel, err=lost)


#: Single queries are composed in batches of up to this many lattice points by shifted adds.
BATCH_POINTS = 4096
BATCH_QUERIES = 64


def batch_pmf(eps: list[float], step: float, upper: bool) -> LatticePMF:
    """Single queries composed one after another by shifted adds: no FFT, so only relative
    rounding errors (gamma_3 per step, Higham §3.1); the kernels are built in one vectorised pass
    (a per-query object cost ~40 us, a third of the time of a 10^5-query plan)."""
    arr = np.ones(1)
    rel = 0.0
    table = kernel_table(np.asarray(eps, dtype=float), step, upper)
    for n, q, a, b, k_rel in zip(*(x.tolist() for x in (table[0], table[1], table[2], table[3], table[5]))):
        taps = _kernel_taps(n, q, a, b)
        size = arr.size
        out = np.zeros(size + n + (1 if b > 0 else 0))
        for j, v in taps:
            out[j:j + size] += v * arr
        g = 1.01 * (len(taps) + 2) * U
        rel = rel + k_rel + rel * k_rel
        rel = rel + g + rel * g
        arr = out
    off = math.fsum(table[4].tolist())  # correctly rounded; one step in the safe direction
    return LatticePMF(step, 0, arr, _directed(off, upper), upper, rel=rel)


def _builders(eps: np.ndarray, mult: np.ndarray, step: float, upper: bool, tail: float, budget: float):
    """Lazy pmf builders and their weights: groups one by one, single queries in batches."""
    builders, weights = [], []
    batch: list[float] = []
    points = 0

    def flush():
        nonlocal batch, points
        if batch:
            builders.append(lambda b=tuple(batch): batch_pmf(list(b), step, upper))
            weights.append(sum(batch) + step)
        batch, points = [], 0

    for e, m in zip(eps.tolist(), mult.tolist()):
        if int(m) == 1:
            size = int(2.0 * e / step) + 2
            if batch and (points + size > BATCH_POINTS or len(batch) >= BATCH_QUERIES):
                flush()
            batch.append(float(e))
            points += size
        else:
            builders.append(lambda e=float(e), m=int(m): _group_pmf(e, m, step, upper, tail, budget))
            weights.append(m * e + step)
    flush()
    return builders, weights


def plan_pmf(eps: np.ndarray, mult: np.ndarray, step: float, upper: bool, delta_bar: float,
             cancel=None) -> LatticePMF:
    """The composed pmf of the whole plan on lattice ``step`` (upper or lower twin): from its
    characteristic function where the plan is large and smooth enough (``spectral``), else by a
    balanced tree of convolutions."""
    pmf = spectral_plan([(eps, mult, upper)], step, upper, delta_bar)
    if pmf is not None:
        return pmf
    n_ops = int(sum(2 * max(1, int(m)).bit_length() for m in mult)) + len(eps) + 2
    tail = TAIL_FRACTION * delta_bar / n_ops
    budget = FFT_FRACTION * delta_bar / n_ops
    builders, weights = _builders(eps, mult, step, upper, tail, budget)
    return compose_balanced(builders, weights, TAIL_FRACTION * delta_bar / 2, FFT_FRACTION * delta_bar / 2,
                            cancel)


def spectral_plan(parts, step: float, upper: bool, delta_bar: float) -> Optional[LatticePMF]:
    """The pmf of several parts composed, each (eps, mult, its kernels' direction), straight from
    the characteristic function (``spectral``); None for a plan too small or too lumpy for it, or
    where its rounding bound (~k ulps of the spectrum) would exceed the share of delta_bar the
    convolution tree keeps to with its long-double FFTs, in double and then in long double."""
    if sum(float(np.sum(m)) for _, m, _ in parts) < SPECTRAL_MIN_QUERIES:
        return None
    cols = [kernel_table(e, step, ku) + (np.asarray(m, dtype=float),) for e, m, ku in parts if np.size(e)]
    n, q, a, b, off, rel, m = (np.concatenate(c) for c in zip(*cols))
    for extended in (False, True) if U_LONG < U else (False,):
        pmf = spectral_pmf(n, q, a, b, off, rel, m, step, upper, FFT_FRACTION * delta_bar / 2,
                           TAIL_FRACTION * delta_bar / 2, extended)
        if pmf is None or pmf.err <= FFT_FRACTION * delta_bar:
            return pmf
    return None


def pld_side(eps, mult, step, upper, delta_bar, cancel=None) -> float:
    return sup_root(plan_pmf(eps, mult, step, upper, delta_bar, cancel).atoms(above=0.0), delta_bar)


def initial_step(eps: np.ndarray, mult: np.ndarray, delta_bar: float, eta: float) -> float:
    """A power of two for which the first-order lower-bound error is about eta / 2."""
    s1 = float(np.sum(mult * eps))
    sigma = math.sqrt(float(np.sum(mult * eps * eps)))
    z = math.sqrt(2.0 * math.log(1.0 / min(delta_bar, 0.5)))
    coef = s1 * (1.0 + z / max(sigma, 1e-12)) / 4.0
    d = 0.5 * eta / max(coef, 1e-300)
    return 2.0 ** min(-4, math.floor(math.log2(max(d, 2.0 ** -60))))


def lattice_points(eps: np.ndarray, mult: np.ndarray, step: float) -> float:
    """Rough size of the composed pmf on this lattice (after truncation to ~ +-8 sigma)."""
    span = 2.0 * float(np.sum(mult * eps))
    with np.errstate(over="ignore"):        # (an inf sigma leaves the span, itself an upper size)
        sigma = math.sqrt(float(np.sum(mult * eps * eps)))
    return min(span, 18.0 * sigma + 4.0 * float(np.max(eps))) / step


def pld_bracket(eps: np.ndarray, mult: np.ndarray, delta_bar: float, eta: float, *,
                cancel=None, progress=None, step: Optional[float] = None,
                max_points: int = MAX_POINTS, delta_bar_hi: Optional[float] = None) -> Bracket:
    """Adaptive grids until upper - lower <= eta (or the lattice would exceed ``max_points``).

    The CTD upper error is second order in the step, so the upper side starts coarse (~0.1
    sqrt(eta)) and is refined (x 1/4) only while that still lowers it by a noticeable share of the
    width. The lower error is first order, so its step is aimed directly at eta / 2 and, if the
    width is still too large, rescaled by the measured ratio (assuming error ~ step).
    """
    d_lo = step if step is not None else initial_step(eps, mult, delta_bar, eta)
    coarse = 2.0 ** min(-6, math.floor(math.log2(0.1 * math.sqrt(eta))))
    d_up = step if step is not None else max(d_lo, coarse)
    while lattice_points(eps, mult, d_lo) > max_points and d_lo < STEP_MAX:
        d_lo *= 2
    up = pld_side(eps, mult, d_up, True, delta_bar, cancel)
    if progress is not None:
        progress(0.1)
    db_hi = delta_bar if delta_bar_hi is None else delta_bar_hi
    lo = pld_side(eps, mult, d_lo, False, db_hi, cancel)
    if progress is not None:
        progress(0.5)
    for _ in range(8):
        width = up - lo
        if width <= eta:
            break
        if d_up > 2.0 ** -40 and lattice_points(eps, mult, d_up / 4) <= max_points:
            new_up = pld_side(eps, mult, d_up / 4, True, delta_bar, cancel)
            gain = up - new_up
            d_up /= 4
            up = min(up, new_up)
            if up - lo <= eta:
                break
            if gain > 0.1 * width:
                continue  # the upper side was the loose one; look again before refining lower
        ratio = 0.7 * eta / max(up - lo, 1e-300)
        new_lo = d_lo * 2.0 ** math.floor(math.log2(max(ratio, 1.0 / 64)))
        new_lo = min(new_lo, d_lo / 2)
        if lattice_points(eps, mult, new_lo) > max_points:
            new_lo = d_lo / 2
            if lattice_points(eps, mult, new_lo) > max_points:
                break
        d_lo = new_lo
        lo = max(lo, pld_side(eps, mult, d_lo, False, db_hi, cancel))
        if progress is not None:
            progress(0.8)
    method = f"pld d_up=2^{int(math.log2(d_up))} d_lo=2^{int(math.log2(d_lo))}"
    return Bracket(widen_up(up), widen_down(lo), method)


# ---- exact common lattice ----------------------------------------------------------------------

def _small_ratios(values, max_den: int):
    """Coprime integers a_g proportional to the values (to ~1e-12), or None if that needs a
    denominator above max_den."""
    fr = []
    for v in values:  # stop at the first value that is not close to a small fraction
        f = v.limit_denominator(max_den)
        if f <= 0 or abs(f - v) > Fraction(1, 10 ** 12) * v:
            return None
        fr.append(f)
    den = math.lcm(*[f.denominator for f in fr])
    num = [f.numerator * (den // f.denominator) for f in fr]
    g = math.gcd(*num)
    a = [n // g for n in num]
    return a if max(a) < 2 ** 40 else None  # such a lattice would be far too fine anyway


def common_lattice(eps: np.ndarray, max_den: int = 10_000):
    """Integers a_g and steps d_up >= (exact) eps_g / a_g >= d_lo, or None if no small lattice.

    Binary doubles are not decimals: 0.3 is not exactly 6 x 0.05. We find small integers a_g from
    the decimals (or from the ratios to the smallest epsilon) and then pick the doubles d_up, d_lo so that a_g d_up >= eps_g >= a_g d_lo hold
    exactly (checked with Fraction on the actual doubles).
    """
    # (generators: a plan of 10^5 random doubles fails at its first value, not after 10^5 Fractions)
    a = _small_ratios((Fraction(float(e)) for e in eps), max_den)
    if a is None:
        # not short decimals, but maybe small rational multiples of one value (a redistribution
        # scales weights such as 1, 2, 0.5 by an arbitrary double)
        base = Fraction(float(min(eps)))
        a = _small_ratios((Fraction(float(e)) / base for e in eps), max_den)
    if a is None:
        return None
    exact = [Fraction(float(e)) for e in eps]
    d_up = max(float(e) / ai for e, ai in zip(eps, a))
    while any(ai * Fraction(d_up) < ex for ai, ex in zip(a, exact)):
        d_up = math.nextafter(d_up, math.inf)
    d_lo = min(float(e) / ai for e, ai in zip(eps, a))
    while any(ai * Fraction(d_lo) > ex for ai, ex in zip(a, exact)):
        d_lo = math.nextafter(d_lo, 0.0)
    return np.array(a, dtype=np.int64), d_up, d_lo


def lattice_pmf(a: np.ndarray, mult: np.ndarray, d: float, upper: bool, delta_bar: float,
                cancel=None) -> LatticePMF:
    """Exact composition of RR(a_g d) groups: binomials on stride a_g of the Y-lattice 2d."""
    n_ops = len(a) + 2
    tail = 1e-9 * delta_bar / n_ops  # "exact": truncation and FFT error stay far below the width
    budget = 1e-9 * delta_bar / n_ops  # (direct sums, or long double, where a double FFT is worse)
    items = []
    for ai, m in zip(a.tolist(), mult.tolist()):
        e_eff = float(Fraction(ai) * Fraction(d))  # the query actually composed is RR(a_g d)
        arr, rel, lost = _binomial_on_stride(int(m), e_eff, int(ai))
        rel += 4 * U * int(m) * e_eff  # e_eff is a_g d rounded: |log p| moves by <= |delta eps|
        items.append(LatticePMF(2 * d, 0, arr, 0.0, upper, rel=rel, err=lost))
    pmf = compose_all(items, tail, budget, cancel)
    total = int(sum(int(ai) * int(m) for ai, m in zip(a.tolist(), mult.tolist())))
    exact_off = -Fraction(total) * Fraction(d)
    off = float(exact_off)
    if upper and Fraction(off) < exact_off:
        off = math.nextafter(off, math.inf)
    if not upper and Fraction(off) > exact_off:
        off = math.nextafter(off, -math.inf)
    return replace(pmf, offset=off)


def lattice_bracket(eps, mult, delta_bar, lat, cancel=None, delta_bar_hi=None) -> Bracket:
    a, d_up, d_lo = lat
    hi = delta_bar if delta_bar_hi is None else delta_bar_hi
    up = sup_root(lattice_pmf(a, mult, d_up, True, delta_bar, cancel).atoms(), delta_bar)
    lo = sup_root(lattice_pmf(a, mult, d_lo, False, delta_bar, cancel).atoms(), hi)
    return Bracket(widen_up(up), widen_down(lo), f"exact (lattice d={d_up:.6g})")
