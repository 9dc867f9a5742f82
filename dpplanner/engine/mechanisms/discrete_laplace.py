"""The discrete Laplace mechanism: its calibration and its exact privacy loss on a lattice.

Noise P(x) = (1 - q) / (1 + q) q^|x| on the integers, q = e^{-1/t}; the worst pair is the noise
and the noise shifted by S (discrete_objects.py). The loss log P(x) / P(x - S) is S/t for x <= 0,
-S/t for x >= S and (S - 2x)/t in between, so with i = S - x clipped to [0, S] it is
L_i = -eps + i h (eps = S/t, h = 2/t), i = 0..S, with masses

    i = S: 1 / (1 + q);   i = 0: q^S / (1 + q);   0 < i < S: c q^(S - i), c = (1 - q) / (1 + q)

(they add up to 1). For S = 1 that is randomized response with epsilon 1/t. The interior masses
grow as e^{i/t} = e^{(L_i + eps)/2}: the same tilt as the continuous Laplace density, so any run
of interior atoms has a closed-form mass and mean of u = e^{-L} (geometric sums, log space), and a
run's Jensen point -log E[u | run] is exactly the midpoint of its first and last atoms.

Lattice: offset -eps (rounded to the safe side), points at steps of s; Y = L + eps in [0, 2 eps].
* UPPER (offset >= -eps, positions i h_up >= the exact ones): connect the dots (kernels.py) per
  atom, or per lattice cell in closed form when there are many atoms (S > SPARSE_ATOMS), each
  cell's mass and mean of u kept; the cancellation in the split is bounded per entry.
* LOWER (offset <= -eps, positions <= the exact ones): where h is a whole multiple of s the atoms
  sit on the lattice (exact). Else the bottom atom is at the offset, interior atoms are grouped in
  runs whose midpoint (their Jensen point) is at or just above a lattice point (where atoms are
  sparser than the lattice, runs of one atom: rounded down), each run put on the point below it
  (Jensen, then moving mass to less loss: both lower every E[phi(u)] for decreasing convex phi),
  and the top atom is pooled with the interior atoms just below it so that the pool's Jensen
  point lands at or above a lattice point (as laplace_lower pools the continuous one).
For S = 1 the randomized-response kernels (kernels.py) are used, with 1/t bracketed.
"""

from __future__ import annotations

import functools
import math
import operator
from fractions import Fraction

import numpy as np

from ..optimal.atoms import TINY, U
from ..optimal.lattice import LatticePMF
from ..validation import DISCRETE_RANGE
from .discrete_objects import check_scale, check_shift
from .kernels import KERNEL_ULPS, floor_frac, rr_lower, rr_upper

#: Up to this many atoms a kernel is built atom by atom; above, cell by cell in closed form.
SPARSE_ATOMS = 1 << 17
#: An entry whose computed relative error exceeds this counts its error in ``err`` instead.
MAX_REL = 1e-6


def _real(value, what: str) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{what} = {value!r} is not a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} = {value!r} is not a number") from None


def discrete_laplace_scale(epsilon, shift=1) -> float:
    """The scale t (lattice units) at which discrete Laplace noise with shift S is pure eps-DP:
    t = S / eps, rounded up (so S / t <= eps exactly). The one home of this calibration: the model
    shows and exports what it returns. ValueError outside the ranges of discrete_objects.py."""
    return _scale(_real(epsilon, "epsilon"), check_shift(shift, "discrete Laplace"))


@functools.lru_cache(maxsize=1 << 12)
def _scale(eps: float, s: int) -> float:
    """discrete_laplace_scale of checked arguments (remembered: a plan's releases are calibrated
    several times per edit and per report, most of them at the same few (eps, S))."""
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"epsilon = {eps!r} is not allowed; discrete Laplace noise needs a finite epsilon > 0")
    t = s / eps
    if math.isfinite(t) and Fraction(t) * Fraction(eps) < s:
        t = math.nextafter(t, math.inf)
    if not math.isfinite(t) or not (s * 2.0 ** -10 <= t <= s * 2.0 ** 64):
        raise ValueError(f"epsilon = {eps!r} with shift {s} is outside what discrete Laplace noise can be "
                         f"calibrated for: {DISCRETE_RANGE}")
    return check_scale(t, s, "DiscreteLaplace", "scale")


def discrete_laplace_scales(epsilons, shifts) -> np.ndarray:
    """discrete_laplace_scale of each (epsilon, shift), bit for bit (the same checks, the same
    rounding up), in one pass: t = S / eps is correctly rounded, and t eps >= S is decided exactly
    by Dekker's product (t eps = p + e with p = fl(t eps), e exact: no overflow or underflow at
    these ranges), where discrete_laplace_scale uses rational arithmetic."""
    eps = np.array([_real(e, "epsilon") for e in epsilons], dtype=float)
    S = np.array([check_shift(k, "discrete Laplace") for k in shifts], dtype=float)
    bad = ~((eps > 0) & np.isfinite(eps))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        t = S / eps
        p, e = _two_product(t, eps)
        short = (p < S) | ((p == S) & (e < 0)) | ((p > S) & (p - S < -e))     # t eps < S exactly
    t = np.where(short & np.isfinite(t), np.nextafter(t, np.inf), t)
    out_of_range = bad | ~np.isfinite(t) | ~((S * 2.0 ** -10 <= t) & (t <= S * 2.0 ** 64))
    if out_of_range.any():       # the scalar function raises the right message
        i = int(np.flatnonzero(out_of_range)[0])
        discrete_laplace_scale(float(eps[i]) if not bad[i] else list(epsilons)[i], int(S[i]))
    return t


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p, e) with p = fl(a b) and p + e = a b exactly (Dekker / Veltkamp splitting)."""
    p = a * b
    c = 134217729.0          # 2^27 + 1
    a_hi = a * c - (a * c - a)
    b_hi = b * c - (b * c - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return p, e


@functools.lru_cache(maxsize=1 << 14)
def directed_ratio(num: int, den: float, up: bool) -> float:
    """num / den rounded up (or down), checked in rational arithmetic (remembered: the bracket
    asks for the same ones many times)."""
    v = num / den
    (v_n, v_d), (d_n, d_d) = v.as_integer_ratio(), den.as_integer_ratio()
    # v - num / den = (v_n d_n - num d_d v_d) / (v_d d_n), exactly in integers (Fraction's ~4x cost)
    above = (v_n * d_n - operator.index(num) * d_d * v_d) * (1 if d_n > 0 else -1)
    if up and above < 0:
        return math.nextafter(v, math.inf)
    if not up and above > 0:
        return math.nextafter(v, 0.0)
    return v


def epsilon_bounds(scale: float, shift: int) -> tuple[float, float]:
    """(upper, lower) doubles around the exact S / t (its pure-DP epsilon)."""
    return directed_ratio(shift, scale, True), directed_ratio(shift, scale, False)


def dl_kernel(scale: float, shift: int, step: float, upper: bool) -> LatticePMF:
    """The UPPER (or LOWER) twin of one discrete Laplace release's loss on lattice ``step``."""
    eps_up, eps_lo = epsilon_bounds(scale, shift)
    if shift == 1:
        return rr_upper(eps_up, step) if upper else rr_lower(eps_lo, step)
    t, S = scale, shift
    rel0 = KERNEL_ULPS * U + 16 * U * (eps_up + 4.0)       # one closed-form mass or sum of masses
    if upper:
        p, abs_err = (_upper_atoms if S + 1 <= SPARSE_ATOMS else _upper_cells)(t, S, step, rel0)
        offset = -eps_lo
    else:
        h_lo = directed_ratio(2, t, False)
        whole = round(h_lo / step)
        if whole >= 1 and abs(h_lo / step - whole) <= 1e-9 * whole and Fraction(whole) * Fraction(step) <= \
                Fraction(2) / Fraction(t) and S + 1 <= SPARSE_ATOMS:
            p, abs_err = _on_lattice(t, S, whole, rel0)
        else:
            p, abs_err = _lower_groups(t, S, step, rel0)
        offset = -eps_up
    return _pmf(p, abs_err, step, offset, upper, rel0)


def dl_ctd_lower(scale: float, shift: int, step: float) -> LatticePMF:
    """Connect the dots of a release the discrete Laplace dominates (for the hybrid lower bound,
    hybrid.py): its atoms moved down to positions i h_lo (rounded down) from offset -eps_up <= -eps,
    i.e. to losses at most the exact ones; randomized response at eps_lo for S = 1 (a
    post-processing of RR(1/t)). None above SPARSE_ATOMS atoms (no closed form here)."""
    eps_up, eps_lo = epsilon_bounds(scale, shift)
    if shift == 1:
        return rr_upper(eps_lo, step)
    t, S = scale, shift
    if S + 1 > SPARSE_ATOMS:
        return None
    rel0 = KERNEL_ULPS * U + 16 * U * (eps_up + 4.0)
    i = np.arange(S + 1, dtype=float)
    pos = np.maximum(np.nextafter(i * directed_ratio(2, t, False), 0.0), 0.0)
    return _pmf(*_connected(i, pos, S, t, step, rel0), step, -eps_up, False, rel0)


def _pmf(p: np.ndarray, abs_err: np.ndarray, step: float, offset: float, upper: bool, rel0: float) -> LatticePMF:
    """The LatticePMF of entries p with absolute error bounds abs_err: within MAX_REL relative
    they count in ``rel``, beyond it (a few tiny entries) in ``err``."""
    nz = np.flatnonzero(p)
    j0, j1 = int(nz[0]), int(nz[-1]) + 1
    p, abs_err = p[j0:j1].copy(), abs_err[j0:j1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(abs_err == 0, 0.0, np.where(p > 0, abs_err / p, np.inf))
    good = ratio <= MAX_REL
    rel = max(float(np.max(ratio[good], initial=0.0)), rel0)
    err = float(np.sum(abs_err[~good])) * (1 + 1e-9) + (j1 - j0) * TINY
    return LatticePMF(step, j0, p, offset, upper, rel=rel, err=err)


def _log_masses(i: np.ndarray, S: int, t: float) -> np.ndarray:
    """log P(atom i) for atoms i (floats holding whole numbers in [0, S])."""
    inv_t = 1.0 / t
    log1p_q = math.log1p(math.exp(-inv_t))
    out = math.log(-math.expm1(-inv_t)) - log1p_q - (S - i) / t
    out = np.where(i == S, -log1p_q, out)
    return np.where(i == 0, -S / t - log1p_q, out)


def ctd(pos: np.ndarray, mass: np.ndarray, step: float):
    """Connect the dots of atoms at pos >= 0 (exact doubles): (lattice index of the lower end,
    mass to it, mass to the next point); each share exact to a few ulps."""
    frac = np.fmod(pos, step)
    n = np.rint((pos - frac) / step).astype(np.int64)          # exact while n < 2^50 (floor_frac)
    den = -math.expm1(-step)
    with np.errstate(under="ignore"):
        hi = mass * -np.expm1(-frac) / den
        lo = mass * np.exp(-frac) * -np.expm1(-(step - frac)) / den
    return n, lo, hi


def _upper_atoms(t: float, S: int, step: float, rel0: float):
    """Connect the dots atom by atom, at positions i h_up (one ulp up: >= the exact i h)."""
    h_up = directed_ratio(2, t, True)
    i = np.arange(S + 1, dtype=float)
    pos = np.nextafter(i * h_up, np.inf)
    pos[0] = 0.0
    return _connected(i, pos, S, t, step, rel0)


def _connected(i: np.ndarray, pos: np.ndarray, S: int, t: float, step: float, rel0: float):
    """Atoms i (of shift S, scale t) at positions pos, connected onto the lattice: the entries p
    and their absolute error bounds (each entry a sum of at most ``terms`` rounded shares)."""
    with np.errstate(under="ignore"):
        m = np.exp(_log_masses(i, S, t))
    n, lo, hi = ctd(pos, m, step)
    size = int(n[-1]) + 2
    p = np.bincount(n, lo, minlength=size) + np.bincount(n + 1, hi, minlength=size)
    terms = np.bincount(n, minlength=size) + np.bincount(n + 1, minlength=size)
    return p, p * (rel0 + 1.01 * (terms + 2) * U)


def _on_lattice(t: float, S: int, whole: int, rel0: float):
    """Atom i at i * whole steps (whole * step <= h exactly: every atom moved down, or not at all)."""
    i = np.arange(S + 1, dtype=float)
    with np.errstate(under="ignore"):
        m = np.exp(_log_masses(i, S, t))
    p = np.zeros(S * whole + 1)
    p[::whole] = m
    return p, p * rel0


def _upper_cells(t: float, S: int, step: float, rel0: float):
    """Connect the dots cell by cell: the interior atoms in [n s, (n + 1) s] (positions i h_up,
    moved up together by their rounding) keep their mass M and their mean of u, E, in closed form;
    the cell's top end gets (M - E) / (1 - e^-s), its bottom end (E - e^-s M) / (1 - e^-s) (E is
    relative to the cell's bottom). The error of log E - log M is carried through both splits."""
    h_up = directed_ratio(2, t, True)
    inv_t = 1.0 / t
    top = math.nextafter(S * h_up, math.inf)
    N = math.floor(top / step) + 2
    nn = np.arange(N, dtype=float)
    beta = (nn + 1) * step / h_up                    # atoms i <= beta lie at or below the cell's top
    b = np.clip(np.floor(beta - (16 * U * (beta + S) + 1e-9)), 0, S - 1)
    b = np.maximum.accumulate(b)
    a = np.concatenate([[1.0], b[:-1] + 1])
    full = b >= a
    a, K, n = a[full], (b - a + 1)[full], nn[full]
    log_ma = _log_masses(a, S, t)
    with np.errstate(divide="ignore", under="ignore"):
        geo_m = np.log(np.expm1(K * inv_t)) - math.log(math.expm1(inv_t))
        rho = inv_t - h_up                                          # < 0
        geo_e = np.log(-np.expm1(K * rho)) - math.log(-math.expm1(rho))
        d = np.maximum(a * h_up - n * step + 4 * U * (a * h_up + n * step) + TINY, 0.0)
        log_m, log_e = log_ma + geo_m, log_ma - d + geo_e
        x = np.minimum(log_e - log_m, 0.0)
        dx = 32 * U * (np.abs(log_ma) + np.abs(geo_m) + np.abs(geo_e) + K * (inv_t - rho) + d + 8)
        den = -math.expm1(-step)
        mass_m, mass_e = np.exp(log_m), np.exp(log_e)
        w_top = mass_m * -np.expm1(x) / den
        w_bot = mass_e * -np.expm1(np.minimum(-x - step, 0.0)) / den
        e_top = (w_top * rel0 + mass_m * dx * np.exp(x) / den) * 1.01
        e_bot = (w_bot * rel0 + mass_e * dx * np.exp(np.minimum(-x - step, 0.0)) / den) * 1.01
    idx = n.astype(np.int64)
    size = N + 2
    p = (np.bincount(idx, w_bot, minlength=size) + np.bincount(idx + 1, w_top, minlength=size)).astype(float)
    err = (np.bincount(idx, e_bot, minlength=size) + np.bincount(idx + 1, e_top, minlength=size)).astype(float)
    ends = np.array([0.0, float(S)])
    with np.errstate(under="ignore"):
        m_end = np.exp(_log_masses(ends, S, t))
    p[0] += m_end[0]
    err[0] += m_end[0] * rel0
    j, lo, hi = ctd(np.array([top]), m_end[1:], step)
    p[j[0]] += lo[0]
    p[j[0] + 1] += hi[0]
    err[j[0]] += lo[0] * rel0
    err[j[0] + 1] += hi[0] * rel0
    return p, err + p * 4 * U


def _lower_groups(t: float, S: int, step: float, rel0: float):
    """Jensen groups (module docstring): the interior atoms below the pool in runs whose midpoint
    -- their Jensen point, as their masses grow as e^{Y/2} -- is at or just above a lattice point
    (a_n + b_n >= n s t, run n following run n - 1), each run put on the lattice point below its
    midpoint (computed, so any run is sound); the pool of the top atom and the atoms above the runs
    on the point below its Jensen point, its start chosen so that this loses least."""
    inv_t = 1.0 / t
    log1p_q = math.log1p(math.exp(-inv_t))
    log_c = math.log(-math.expm1(-inv_t)) - log1p_q
    log_m_top, log_e_top = -log1p_q, -log1p_q - 2.0 * S * inv_t

    def pool_jensen(a: int) -> tuple[float, float]:
        """(a lower bound on the Jensen point, log mass) of the top atom with the atoms a..S-1."""
        log_m, log_e = log_m_top, log_e_top
        k = S - a
        if k > 0:
            lm = log_c - (S - a) * inv_t + math.log(math.expm1(k * inv_t)) - math.log(math.expm1(inv_t))
            le = log_c - (S + a) * inv_t + math.log(-math.expm1(-k * inv_t)) - math.log(-math.expm1(-inv_t))
            log_m, log_e = np.logaddexp(log_m, lm), np.logaddexp(log_e, le)
        if k <= 0:
            return 2.0 * directed_ratio(S, t, False), float(log_m)
        return float(log_m - log_e) - 1e-12 * (1.0 + 4.0 * S * inv_t), float(log_m)

    # the top atom alone is at 2 S / t >= 2 eps_lo (exact): on the lattice when the step is aligned
    n_pool = floor_frac(2.0 * directed_ratio(S, t, False), step)[0]
    lo, hi = 1, S                 # the least start whose Jensen point is still >= n_pool s
    if pool_jensen(1)[0] >= n_pool * step:
        hi = 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if pool_jensen(mid)[0] >= n_pool * step else (mid, hi)
    a_pool = hi
    log_pool = pool_jensen(a_pool)[1]
    # runs over 1..a_pool - 1: run 0 ends at b0; run n has a_n + b_n = g_n >= n s t
    b0 = min(max(round(step * t / 4), 0), a_pool - 1)
    nn = np.arange(1, n_pool + 2, dtype=float)
    g = np.ceil(nn * step * t * (1 + 4 * U)).astype(np.int64)
    sign = np.where(np.arange(1, nn.size + 1) % 2 == 0, 1, -1).astype(np.int64)
    b = sign * (b0 + np.cumsum(sign * (g - 1)))
    b = np.minimum(np.maximum.accumulate(np.concatenate([[b0], b])), a_pool - 1).astype(float)
    a = np.concatenate([[1.0], b[:-1] + 1])
    full = b >= a
    a, b = a[full], b[full]
    K = b - a + 1
    with np.errstate(under="ignore"):
        mass = np.exp(_log_masses(a, S, t) + np.log(np.expm1(K * inv_t)) - math.log(math.expm1(inv_t)))
    point = np.floor((a + b) * inv_t * (1 - 8 * U) / step).astype(np.int64)   # below each midpoint
    size = n_pool + 2
    # (float even without runs: S = 2 with its one interior atom in the pool has none)
    p = np.bincount(point, mass, minlength=size).astype(float)
    terms = np.bincount(point, minlength=size)
    p[0] += math.exp(_log_masses(np.array([0.0]), S, t)[0])
    p[n_pool] += math.exp(log_pool)
    return p, p * (rel0 + 1.01 * (terms + 3) * U)
