"""A large plan's lattice pmf from its characteristic function at the few frequencies that matter.

The composed pmf of many queries on the lattice D Z is smooth (local limit theorem): folded onto a
window of N points around its mean, its discrete Fourier transform X_j = E[e^{-2 pi i j (y - o)/N}]
is negligible except for |j| <= J with J a few dozen, whatever the number k of queries. So instead
of a tree of k - 1 convolutions, X_j = prod_i phi_i(j) is computed directly at j = 0..J (k J
terms, as sums of logarithms) and one inverse FFT of length N gives the pmf. Every step is bounded:

* frequencies above J: |phi_i| <= T_i e^{-q_i R_i(j) / T_i^2} for a kernel with masses q at 0, a
  at n, b at n + 1 (T = q + a + b, R = a (1 - cos n t) + b (1 - cos (n + 1) t), t = 2 pi j / N):
  write it as (a/p)(q + p z^n) + (b/p)(q + p z^{n+1}) (p = a + b), use |q + p e^{is}|^2 =
  T^2 - 2 p q (1 - cos s), the concavity of the square root and log(1 - y) <= -y. Summed over the
  queries the exponent is sum_m c_m (1 - cos m t) for a histogram c over lattice offsets m: one
  real FFT of c bounds |X_j| at every j at once. The dropped |X_j| count in full (l2, below);
* folding: the window holds all but the tails, whose mass is bounded by Chernoff (the exact MGF at
  a few tilts); folded mass is counted against delta (an upper pmf: at +infinity; a lower: in err);
* rounding: the computed X_j's error (each log to ~40 ulps of the query's angles, sums in blocks)
  and the inverse FFT's (see ``lattice``) are l2 errors of the spectrum; since the inverse
  transform is (1/N) F*, Parseval gives an l1 error on the pmf of at most ||dX||_2 plus the FFT's.

The kernels are those of ``pld.kernel_table`` (the same masses as the convolution path), so the
pmf is that of the same computed kernels, and their relative errors compose as in ``lattice``.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .atoms import U
from .lattice import FFT_C, FFT_WORKERS, U_LONG, LatticePMF, scipy_fft
from ..exact import exact_total, units_to_float

#: Most frequencies the spectral path evaluates per query (beyond: the plan is too lumpy for it).
MAX_FREQUENCIES = 512
#: Queries are summed in blocks of this many (any order: gamma_{BLOCK-1}), the blocks exactly.
BLOCK = 64
#: Largest weighted angle sum xi of a query (|x| <= xi: the log's error bound needs xi < 1).
MAX_SPREAD = 0.5


def _chernoff_log(n, q, a, b, m, centre, theta: float) -> float:
    """An upper bound on log E[e^{theta (Y - centre_sum)}] for the composed (computed) kernels,
    Y in lattice units; ``centre`` per kernel (any reals: the identity is exact, they only keep
    the terms small)."""
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        t0, t1, t2 = -theta * centre, theta * (n - centre), theta * (n + 1 - centre)
        terms = np.log(q * np.exp(t0) + a * np.exp(t1) + b * np.exp(t2))
    if not np.all(np.isfinite(terms)):
        return math.inf
    mt = m * terms
    # exp of a rounded argument: relative 2 u |arg| + u; three non-negative terms: 2 u; log: u of
    # its result; the product with m: u. 8 u of the magnitudes covers these.
    pad = 8 * U * float(np.sum(m * (np.abs(t0) + np.abs(t1) + np.abs(t2) + np.abs(terms) + 1.0)))
    return math.fsum(mt.tolist()) + pad * (1 + 1e-6)


def _tail_masses(n, q, a, b, m, lo: int, hi: int, mean: float, var: float) -> float:
    """Bound on the mass below lattice point lo plus the mass at or above hi (Chernoff, a few
    tilts around the normal approximation's; every tilt gives a valid bound)."""
    centre = (a * n + b * (n + 1)) / np.maximum(q + a + b, 1e-300)
    csum = math.fsum((m * centre).tolist())
    total = 0.0
    for dist, sign in ((hi - mean, 1.0), (mean - lo, -1.0)):
        best = math.inf
        base = dist / max(var, 1e-300)
        for f in (1.0, 1.25):
            th = sign * base * f
            lm = _chernoff_log(n, q, a, b, m, centre, th)
            # P(Y >= hi) <= E[e^{th (Y - hi)}], th > 0; P(Y < lo) <= E[e^{th (Y - lo)}], th < 0
            edge = hi if sign > 0 else lo
            shift = th * (csum - edge)
            expo = lm + shift + 4 * U * (abs(th) * (abs(csum) + abs(edge)) + abs(lm))
            best = min(best, math.exp(min(expo, 700.0)))
        total += best
    return total * (1 + 1e-9)


def _frequency_bounds(n, q, a, b, m, N: int) -> np.ndarray:
    """Upper bounds on log |X_j| for j = 0..N//2 (see the module doc), from one real FFT."""
    size = int(n.max()) + 2
    c = np.bincount(n, weights=m * q * a, minlength=size) + np.bincount(n + 1, weights=m * q * b, minlength=size)
    total = math.fsum(c.tolist())
    re = scipy_fft().rfft(c, N, workers=FFT_WORKERS).real
    # FFT error per entry <= its l2 error <= FFT_C u (log2 N + 2) ||C||_2 = (...) sqrt(N) ||c||_2;
    # each c_m is a sum of (its count) products of three factors, summed in any order: within
    # (count + 4) ulps of itself, and 1 - cos <= 2
    fft_err = FFT_C * U * (math.log2(N) + 2) * math.sqrt(N) * math.sqrt(float(np.sum(c * c)))
    count = int(np.bincount(n).max())
    s = (total - re) - (fft_err + 4.04 * (count + 4) * U * total + 1e-300)
    s = np.maximum(s, 0.0)
    _, t1 = _total_mass(q, a, b)
    # log T_i computed to a few ulps of |T_i - 1|; T_i <= 1 + tiny so 1 / T^2 >= 1 - 3 (T - 1)^+ - 8 u
    log_t = math.fsum((m * np.log1p(t1)).tolist()) + 8 * U * float(np.sum(m * (np.abs(t1) + U)))
    shrink = max(0.0, 1.0 - 3.0 * max(float(t1.max()), 0.0) - 8 * U)
    return log_t - shrink * s * (1 - 4 * U)


def spectral_pmf(n, q, a, b, off, rel, m, step: float, upper: bool, budget: float,
                 tail_budget: float, extended: bool = False) -> Optional[LatticePMF]:
    """The composed pmf of kernels (q at 0, a at n, b at n + 1; offset ``off``; each mass within
    relative ``rel``; ``m`` copies each), or None where too many frequencies would be needed.

    ``budget``: the l1 error the dropped frequencies may add; ``tail_budget``: the folded tails.
    ``extended``: the spectrum and its inverse FFT in long double (a few times slower), which
    divides the rounding charges by 2^11 on x86 (for a tiny delta_bar); the pmf is rounded back
    to double (one ulp of each entry, in ``rel``)."""
    ft, u = (np.longdouble, U_LONG) if extended else (np.float64, U)
    n = np.asarray(n, dtype=np.int64)
    m = np.asarray(m, dtype=float)
    T, t_minus_1 = _total_mass(q, a, b)
    mean_i = (a * n + b * (n + 1)) / T
    var_i = (a * n * n + b * (n + 1.0) ** 2) / T - mean_i ** 2
    mean = float(np.sum(m * mean_i))
    var = float(np.sum(m * var_i))
    sd = math.sqrt(max(var, 1e-300))
    z = math.sqrt(2.0 * math.log(2.0 / max(tail_budget, 1e-300))) + 1.0
    for _ in range(6):
        half = int(math.ceil(z * sd + n.max() + 2))
        N = scipy_fft().next_fast_len(2 * half + 1, real=True)
        lo = int(math.floor(mean)) - N // 2
        tails = _tail_masses(n, q, a, b, m, lo, lo + N, mean, var)
        if tails <= tail_budget:
            break
        z *= 1.2
    else:
        # no window holds all but the tail budget (one release far larger than the rest: its
        # Chernoff term overflows): the pmf would send everything to +infinity
        return None
    log_b = _frequency_bounds(n, q, a, b, m, N)
    half_n = N // 2
    # the dropped part of the spectrum, both halves: 2 sum_{j > J} B_j^2 (the Nyquist term twice)
    with np.errstate(under="ignore"):
        b2 = np.exp(2.0 * np.minimum(log_b, 300.0)) + 1e-300
    above = np.concatenate([np.cumsum(b2[::-1])[::-1][1:], [0.0]]) * 2.0 * (1 + N * U)
    ok = np.flatnonzero(np.sqrt(above) <= budget)
    J = int(ok[0]) if ok.size else half_n
    if J > MAX_FREQUENCIES or J >= half_n:
        return None
    dropped = math.sqrt(float(above[J]))
    c = np.floor(mean_i + 0.5).astype(np.int64)  # per-kernel centre: small angles, small logs
    base = 2 * _pi(ft) / N
    d0, d1, d2 = (-c).astype(float), (n - c).astype(float), (n + 1 - c).astype(float)
    w = np.abs(d0) * q + np.abs(d1) * a + np.abs(d2) * b   # xi of the query at j: base j w / T
    if float(base) * J * float(w.max()) > MAX_SPREAD:
        return None
    # e^{-i s} - 1 = -2 sin^2(s/2) - i sin s, tabulated for the offsets d the kernels use, not
    # for every offset between them: one release far larger than the rest (q ~ e^-eps at its n)
    # spanned hundreds of thousands of offsets, J + 1 rows each (GBs)
    offsets, where = np.unique(np.concatenate([d0, d1, d2]), return_inverse=True)
    ang = base * np.outer(np.arange(J + 1, dtype=ft), offsets.astype(ft))
    half_s = np.sin(ang / 2)
    t_re, t_im = -2 * half_s * half_s, -np.sin(ang)
    i0, i1, i2 = np.split(where.reshape(-1).astype(np.int64), 3)
    qf, af, bf, mf = (v.astype(ft) for v in (q, a, b, m))
    tf = qf + af + bf if extended else T     # (in long double: a rounding of 2 u_long)
    logs = np.zeros((J + 1, n.size + (-n.size) % BLOCK), dtype=ft)
    phase = np.zeros_like(logs)
    xi_sum = np.zeros(J + 1)
    freqs = np.arange(J + 1, dtype=float)[:, None]
    for s in range(0, n.size, 8192):
        sl = slice(s, min(s + 8192, n.size))
        tt = tf[sl]
        re = (t_re[:, i0[sl]] * qf[sl] + t_re[:, i1[sl]] * af[sl] + t_re[:, i2[sl]] * bf[sl]) / tt
        im = (t_im[:, i0[sl]] * qf[sl] + t_im[:, i1[sl]] * af[sl] + t_im[:, i2[sl]] * bf[sl]) / tt
        # log(1 + x) = log1p(2 Re x + |x|^2) / 2 + i atan2(Im x, 1 + Re x)
        logs[:, sl] = np.log1p(2 * re + re * re + im * im) / 2 * mf[sl]
        phase[:, sl] = np.arctan2(im, 1 + re) * mf[sl]
        xi = float(base) * freqs * (w[sl] / T[sl])[None, :]
        xi_sum += np.sum(xi / (1.0 - xi) ** 2 * m[sl], axis=1)  # (not BLAS: its order varies)
    l_re, l_im, sum_err = _row_sums(logs, phase, extended)
    log_t = np.sum(mf * np.log1p(t_minus_1.astype(ft))) if extended else math.fsum((m * np.log1p(t_minus_1)).tolist())
    # each query's log within 64 u xi / (1 - xi)^2 of the exact one (the table entries within
    # ~12 u |angle|, x within ~23 u xi, log(1 + x) within that over (1 - xi)^2 plus its own
    # roundings), the row sums within ``sum_err``, log T within a few ulps of |T - 1| (T - 1 from
    # the exact sum of the masses, see ``_total_mass``, to a double ulp of itself and 2 U^2)
    err_log = (64 * u * xi_sum + sum_err + (n.size + 8) * u * float(np.sum(m * np.abs(t_minus_1)))
               + 2 * U * float(np.sum(m * (np.abs(t_minus_1) + U))))
    C = int(np.sum(c * m.astype(np.int64)))
    r = (np.arange(J + 1, dtype=np.int64) * ((C - lo) % N)) % N   # exact: the window's phase
    amp = np.exp(l_re + log_t)
    tot_im = l_im - base * r.astype(ft)
    X = np.zeros(half_n + 1, dtype=np.clongdouble if extended else complex)
    X[:J + 1] = amp * (np.cos(tot_im) + 1j * np.sin(tot_im))
    # |dX_j| <= |X_j| (e^{err} - 1) plus exp / cos / sin and the phase angle (<= 2 pi, 3 u)
    rel_x = np.expm1(err_log + 8 * u * (np.abs(l_re.astype(float)) + np.abs(tot_im.astype(float)) + 8.0))
    amp = amp.astype(float)
    kept_err = math.sqrt(float(np.sum((amp * rel_x) ** 2)) * 2.0) * (1 + 1e-6)
    norm_x = math.sqrt(float(np.sum(amp * amp)) * 2.0) * (1 + 1e-6) + dropped
    x = scipy_fft().irfft(X, N, workers=FFT_WORKERS).astype(np.float64)   # long double: 1 ulp (in rel)
    np.maximum(x, 0.0, out=x)  # the exact folded pmf is >= 0: clipping only moves towards it
    err = (dropped + kept_err + FFT_C * u * (math.log2(N) + 2) * norm_x) * (1 + 1e-6)
    k_rel = math.expm1(math.fsum((m * np.log1p(rel)).tolist()) * (1 + 1e-9) + 1e-300)
    if extended:
        k_rel = k_rel + 1.01 * U + k_rel * 1.01 * U
    offset = _directed_sum(off, m, upper)
    if upper:
        # tails bounds the computed kernels' mass outside the window; the exact kernels' is
        # within k_rel of it (and the product within an ulp or two)
        return LatticePMF(step, lo, x, offset, True, rel=k_rel, err=err, inf_mass=tails * (1 + k_rel + 4 * U))
    return LatticePMF(step, lo, x, offset, False, rel=k_rel, err=err + tails)


def _total_mass(q, a, b) -> tuple[np.ndarray, np.ndarray]:
    """(T, T - 1) of each kernel's masses: T rounded, T - 1 from the exact sum q + a + b (two
    error-free additions, Knuth's TwoSum), within an ulp of |T - 1| plus 2 u^2. The rounded T alone
    would put 2 u into each query's log T, 2 u k into log X_j: for 10^5 queries the whole budget."""
    s1 = q + a
    v = s1 - q
    e1 = (q - (s1 - v)) + (a - v)
    T = s1 + b
    v = T - s1
    e2 = (s1 - (T - v)) + (b - v)
    return T, (T - 1.0) + (e1 + e2)     # T - 1 is exact (Sterbenz: T is near 1)


def _directed_sum(off: np.ndarray, m: np.ndarray, upper: bool) -> float:
    """sum m_i off_i exactly (``exact_total``), rounded up for an upper pmf and down for a lower."""
    return units_to_float(exact_total(off, m.astype(np.int64)), upper)


def _pi(ft):
    """pi in the working precision (long double: 4 atan(1), within an ulp or two of it)."""
    return 4 * np.arctan(ft(1)) if ft is not np.float64 else math.pi


def _row_sums(re: np.ndarray, im: np.ndarray, extended: bool):
    """Row sums of the real and imaginary parts (zero-padded to whole blocks) and a bound on their
    error: blocks of BLOCK summed by numpy in any order (gamma_BLOCK of their magnitudes), then
    the block sums exactly by fsum (one rounding), or in long double by numpy (gamma_blocks)."""
    rows = re.shape[0]
    b_re = re.reshape(rows, -1, BLOCK).sum(axis=2)
    b_im = im.reshape(rows, -1, BLOCK).sum(axis=2)
    mag = (np.abs(re).sum(axis=1) + np.abs(im).sum(axis=1)).astype(float) * (1 + 1e-9)
    if extended:
        return b_re.sum(axis=1), b_im.sum(axis=1), 1.01 * (BLOCK + b_re.shape[1] + 4) * U_LONG * mag
    fs = [np.array([math.fsum(r) for r in b.tolist()]) for b in (b_re, b_im)]
    return fs[0], fs[1], 1.01 * (BLOCK + 2) * U * mag
