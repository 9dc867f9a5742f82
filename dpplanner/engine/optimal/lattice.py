"""Probability mass functions on a lattice offset + step * Z, composed with certified error bounds.

Used by the fast (PLD) path and by the exact common-lattice path. Every operation keeps the
bookkeeping of ``Atoms`` (relative error ``rel``, absolute l1 error ``err``, mass at +infinity
``inf_mass``) so that the read-out stays sound:

* direct convolution / shifted adds: every output entry is a sum of non-negative products, so its
  relative error is at most gamma_n = n u / (1 - n u) (Higham, Accuracy and Stability, §3.1);
* FFT convolution: absolute error. Higham Thm 24.2 bounds the computed radix-2 FFT by
  ||y_hat - y||_2 <= (eta log2 N / (1 - eta log2 N)) ||y||_2 with eta = mu + gamma_4 (sqrt 2 + mu)
  ~ 6.7u for accurately computed twiddles. A convolution is two forward transforms, a pointwise
  product (|B_hat| <= ||b||_1 <= 1) and one inverse, which gives
  ||c_hat - c||_2 <= ~3 eta log2 N (||a||_2 + ||b||_2 + ||c||_2). We charge 30 u (log2 N + 2)
  (||a||_2 + ||b||_2 + ||c||_2), a safety factor > 4 that also covers pocketfft's mixed radices,
  and convert to l1 with sqrt(n). Clipping negative outputs to 0 moves entries towards the exact
  (non-negative) values, so it never increases the error. A test checks the bound empirically;
* truncation: for an UPPER pmf mass cut from the top goes to +infinity and mass cut from the
  bottom is moved up to the lowest kept point (both can only increase delta(x) = E[(1-e^{x-L})^+],
  an increasing function of L); for a LOWER pmf cut mass is dropped (delta only decreases).
"""

from __future__ import annotations

import functools
import heapq
import math
from dataclasses import dataclass, replace

import numpy as np

from .atoms import Atoms, U, edge_count

FFT_C = 30.0
#: Unit roundoff of long double (2^-64 on x86-64 Linux and macOS Intel; equal to U elsewhere).
U_LONG = float(np.finfo(np.longdouble).eps) / 2
#: Shifted adds are used while (non-zeros x length) <= SHIFT_COST N log2 N (N the FFT length):
#: a preference kept on purpose (their errors are relative only), up to ~10x the FFT's modelled cost.
SHIFT_COST = 40
#: The FFT's cost in products of the direct sum: FFT_COST N log2 N + FFT_FIXED. Measured (pocketfft
#: on x86-64 against ``direct_convolve``'s fixed-order sums, ~1-1.7 ns a product): a double FFT
#: convolution ~1.3-1.9 ns per N log2 N plus ~30 us (90 x 90 points: direct 16 us, FFT 43 us;
#: 833 x 833: direct 1.8 ms, FFT 0.07 ms); its N log2 N term keeps a ~3x preference for the
#: direct sum, whose errors are relative only (about none at ~200 x 200 points, where FFT_FIXED rules).
FFT_COST = 4.0
FFT_FIXED = 20000.0
#: A long-double FFT convolution costs about as much as a direct sum of this many times the FFT
#: cost model's products: ~8-12 ns per N log2 N (1628 x 1628 points: direct 4.4 ms, long double
#: 0.36 ms; 15578 x 1518: direct 40 ms, long double 3.0 ms).
EXTENDED_COST = 2.0
#: Threads for pocketfft: one. Its threads share out the vectors of a batch, and every transform
#: here is of one vector, so more never made one faster; the parallelism is the window's engine
#: process and its helper, and a busy machine's cores are not ours to take.
FFT_WORKERS = 1


@dataclass(frozen=True)
class LatticePMF:
    step: float
    start: int           # p[j] sits at offset + (start + j) * step
    p: np.ndarray
    offset: float        # already rounded in the safe direction (up for upper, down for lower)
    upper: bool
    rel: float = 0.0
    err: float = 0.0
    inf_mass: float = 0.0

    def atoms(self, above: float | None = None) -> Atoms:
        """As ``Atoms``; with ``above``, only the atoms > above - step (all a root >= above needs)."""
        j0 = 0
        if above is not None:
            j0 = int(min(max(math.floor((above - self.offset) / self.step) - self.start - 1, 0), self.p.size))
        idx = np.arange(self.start + j0, self.start + self.p.size, dtype=float)
        l = self.offset + self.step * idx
        lam = 4 * U * (abs(self.offset) + self.step * (abs(self.start) + self.p.size))
        # the relative summation bound of the read-out depends on the full length
        return Atoms(l, self.p[j0:], self.upper, rel=self.rel + 1.01 * (self.p.size + 4) * U,
                     err=self.err, inf_mass=self.inf_mass, lam=lam)


def _gamma(n: int) -> float:
    return 1.01 * (n + 2) * U


def add_offsets(a: float, b: float, upper: bool) -> float:
    s = a + b
    return math.nextafter(s, math.inf) if upper else math.nextafter(s, -math.inf)


def _combine_errors(a: LatticePMF, b: LatticePMF, rel_op: float, abs_op: float):
    rel = a.rel + b.rel + a.rel * b.rel
    rel = rel + rel_op + rel * rel_op
    err = (a.err + b.err) * (1 + a.rel + b.rel + 4 * U) + a.err * b.err + abs_op * (1 + rel)
    return rel, err


def sparse_convolve(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """a * b where b has few non-zeros: shifted adds. Returns (c, number of terms per entry)."""
    nz = np.flatnonzero(b).tolist()
    out = np.empty(a.size + b.size - 1)
    j = nz[0]
    out[:j] = 0.0
    np.multiply(a, b[j], out=out[j:j + a.size])
    out[j + a.size:] = 0.0
    for j in nz[1:]:
        out[j:j + a.size] += b[j] * a
    return out, max(len(nz), 1)


#: direct_convolve holds at most about this many doubles at once (a few arrays in cache).
DIRECT_CHUNK = 1 << 15
#: Up to this many products direct_convolve scatters them with one np.bincount (a C loop adding
#: each weight in turn: the same sequential sums, ~2 us for the 9 x 9 of an edit, 5 us by rows).
SCATTER_PRODUCTS = 1 << 13


def direct_convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a * b (b the shorter) in an order fixed by the sizes alone: entry k is the sequential sum
    over j ascending of b[j] a[k - j] (out[j:j + la] += b[j] a), elementwise IEEE products and
    adds, so the same bits on any machine (np.convolve and np.dot go through BLAS dot kernels,
    which OpenBLAS picks for the CPU at run time, and those sum in their own order)."""
    la, lb = a.size, b.size
    if la * lb <= SCATTER_PRODUCTS:   # the products row after row, each added to its entry
        return np.bincount(_scatter_index(la, lb), weights=np.multiply.outer(b, a).ravel())
    out = np.zeros(la + lb - 1)
    rows = max(DIRECT_CHUNK // out.size, 1)
    for j0 in range(0, lb, rows):
        # the running sums' band over rows j0 .. j0 + r - 1's shifted products, summed down the
        # columns (numpy reduces a non-inner axis row after row)
        r = min(rows, lb - j0)
        w = la + r - 1
        z = np.zeros((r + 1) * w)
        z[:w] = out[j0:j0 + w]
        # row t + 1 holds b[j0 + t] a at columns t .. t + la - 1 (flat stride w + 1)
        shifted = np.ndarray((r, la), dtype=float, buffer=z, offset=8 * w, strides=(8 * (w + 1), 8))
        np.multiply(b[j0:j0 + r, None], a, out=shifted)
        np.add.reduce(z.reshape(r + 1, w), axis=0, out=out[j0:j0 + w])
    return out


@functools.lru_cache(maxsize=64)
def _scatter_index(la: int, lb: int) -> np.ndarray:
    """The entry j + i of the product b[j] a[i], row-major over (j, i)."""
    return np.add.outer(np.arange(lb), np.arange(la)).ravel()


def fft_convolve(a: np.ndarray, b: np.ndarray, extended: bool = False) -> tuple[np.ndarray, float]:
    """FFT convolution and an l1 bound on its absolute rounding error (see module docstring).

    ``extended``: transform in long double (pocketfft supports it; ~4x slower), which divides the
    error bound by 2^11 on x86; the result is rounded back to double (relative U per entry, which
    the caller adds). Where long double is double the bound is simply the double one.
    """
    sfft = scipy_fft()
    n = a.size + b.size - 1
    N = conv_len(n)
    w = FFT_WORKERS
    u = U_LONG if extended else U
    if extended:
        x, y = a.astype(np.longdouble), b.astype(np.longdouble)
        c = sfft.irfft(sfft.rfft(x, N, workers=w) * sfft.rfft(y, N, workers=w), N, workers=w)[:n]
        c = c.astype(np.float64)
    else:
        c = sfft.irfft(sfft.rfft(a, N, workers=w) * sfft.rfft(b, N, workers=w), N, workers=w)[:n]
    na, nb = _norm2(a), _norm2(b)
    # ||c||_2 <= ||a||_2 ||b||_1 (Young), and ||b||_1 <= 1 + tiny for a (sub-)probability vector
    e2 = FFT_C * u * (math.log2(N) + 2) * (na + nb + na * float(b.sum()) * (1 + 1e-9))
    np.maximum(c, 0.0, out=c)
    return c, float(math.sqrt(n) * e2 * (1 + 1e-6))


def conv_len(n: int) -> int:
    """The FFT length of a convolution of n points: the next 2^a 3^b 5^c (pocketfft's fast sizes;
    ~15 % less padding and time than powers of two and 3 x them; the rounding bound's margin
    covers the mixed radices, see the module doc)."""
    return scipy_fft().next_fast_len(n, real=True)


def scipy_fft():
    """scipy.fft, imported at the first convolution, not with this module: the window's first
    paint imports it (the discrete noise calibrations) but convolves nothing (~50 ms of start-up)."""
    from scipy import fft

    return fft


def fft_len(n: int) -> int:
    """2^a or 3 * 2^a >= n: few distinct sizes keep pocketfft's plan cache (and memory) small."""
    p2 = 1 << max(0, (n - 1).bit_length())
    p3 = 3 * (1 << max(0, ((n + 2) // 3 - 1).bit_length()))
    return min(p2, p3)


def _norm2(x: np.ndarray) -> float:
    # (not np.dot / np.linalg.norm: BLAS threads fight on a busy machine, 3x slower, and their
    # summation order, hence the last bits, depends on the thread count)
    return math.sqrt(float(np.sum(x * x)))


def fft_error_estimate(a: np.ndarray, b: np.ndarray, u: float = U) -> float:
    n = a.size + b.size - 1
    N = conv_len(n)
    na, nb = _norm2(a), _norm2(b)
    return float(math.sqrt(n) * FFT_C * u * (math.log2(N) + 2) * (na + nb + min(na, nb) * 1.01))


def convolve(a: LatticePMF, b: LatticePMF, tail: float, fft_budget: float) -> LatticePMF:
    """The pmf of the sum of independent a and b, truncated with at most ``tail`` cut per side."""
    if a.p.size < b.p.size:
        a, b = b, a
    la, lb = a.p.size, b.p.size
    n = la + lb - 1
    nnz = int(np.count_nonzero(b.p))
    N = 0 if nnz <= 4 else conv_len(n)      # (the kernels' few taps need no FFT length)
    abs_op = 0.0
    # shifted adds cost one numpy pass over a per non-zero of b
    # (only for sparse b: a dense b costs one numpy pass per entry, far more than one direct sum)
    if nnz <= 4 or (4 * nnz <= lb and nnz * float(la) <= SHIFT_COST * N * math.log2(N)):
        # few non-zeros (kernels and their first products): exact shifted adds, relative error only
        c, terms = sparse_convolve(a.p, b.p)
        rel_op = _gamma(terms)
    else:
        fft_cost = FFT_COST * N * math.log2(N) + FFT_FIXED
        direct_cost = float(la) * lb
        use_direct = direct_cost <= fft_cost
        extended = False
        if not use_direct and fft_error_estimate(a.p, b.p) > fft_budget:
            # tiny delta: rounding of a double FFT would eat the budget; beyond a few hundred
            # points a long-double FFT is cheaper than the direct sum (measured: 4096 x 4096
            # points, direct 19 ms, long double 0.84 ms, double 0.14 ms)
            if U_LONG < U and direct_cost > EXTENDED_COST * fft_cost:
                extended = True
            elif direct_cost <= 3e7:
                use_direct = True
            else:
                extended = U_LONG < U
        if use_direct:
            c = direct_convolve(a.p, b.p)
            rel_op = _gamma(lb)
        else:
            c, abs_op = fft_convolve(a.p, b.p, extended)
            rel_op = 1.01 * U if extended else 0.0
    rel, err = _combine_errors(a, b, rel_op, abs_op)
    out = LatticePMF(a.step, a.start + b.start, c, add_offsets(a.offset, b.offset, a.upper), a.upper,
                     rel=rel, err=err, inf_mass=(a.inf_mass + b.inf_mass) * (1 + 2 * U))
    return truncate(out, tail)


#: Pmfs this short are not truncated: the scan would cost more than the points it could save
#: (keeping mass is always sound; the product is what gets cut).
TRUNCATE_MIN_POINTS = 1024


def truncate(x: LatticePMF, tail: float) -> LatticePMF:
    """Cut at most ``tail`` (computed) mass from each end, soundly for the pmf's direction."""
    if tail <= 0 or x.p.size <= TRUNCATE_MIN_POINTS:
        return x
    p = x.p
    if p[0] != 0 and p[-1] != 0:        # (the usual case: no scan of every entry for the ends)
        lo_i, hi_i = 0, p.size
    else:
        nz = np.flatnonzero(p)
        if nz.size == 0:
            return x
        lo_i, hi_i = int(nz[0]), int(nz[-1]) + 1
    p = p[lo_i:hi_i]
    start = x.start + lo_i
    rel, inf_mass = x.rel, x.inf_mass
    if tail > 0 and p.size > 1:
        i = min(edge_count(p, tail), p.size - 1)   # entries [0, i) carry mass <= tail
        j = min(edge_count(p[::-1], tail), p.size - 1 - i)  # so do the top j entries
        if i > 0 or j > 0:
            g = _gamma(p.size)
            if x.upper:
                low_mass = float(p[:i].sum()) if i > 0 else 0.0
                top_mass = float(p[p.size - j:].sum()) if j > 0 else 0.0
                p = p[i:p.size - j].copy()
                if i > 0:
                    p[0] += low_mass           # moved up: only increases delta
                    rel = rel + g + 2 * U + rel * g
                inf_mass = inf_mass + top_mass * (1 + rel + g + 4 * U)  # to +inf: counts in full
            else:
                p = p[i:p.size - j]            # dropped: only decreases delta
            start += i
    if p.base is not None:
        p = p.copy()  # do not keep the (larger) FFT buffer alive through a view
    return replace(x, p=p, start=start, rel=rel, inf_mass=inf_mass)


def compose_all(items: list[LatticePMF], tail: float, fft_budget: float, cancel=None) -> LatticePMF:
    """Balanced composition: always convolve the two shortest pmfs next (Huffman order)."""
    heap = [(it.p.size, i, it) for i, it in enumerate(items)]
    heapq.heapify(heap)
    counter = len(items)
    while len(heap) > 1:
        if cancel is not None:
            cancel.check()
        _, _, a = heapq.heappop(heap)
        _, _, b = heapq.heappop(heap)
        c = convolve(a, b, tail, fft_budget)
        heapq.heappush(heap, (c.p.size, counter, c))
        counter += 1
    return heap[0][2]


def compose_balanced(builders: list, weights: list[float], tail_total: float, fft_total: float,
                     cancel=None) -> LatticePMF:
    """Compose lazily built pmfs depth-first, splitting the list where the weights halve.

    Same balanced tree as a level-by-level merge, but only one root-to-leaf path of partial
    results is alive at a time. Each node may cut tail_total * (its weight share) / depth per side
    (and prefers exact direct sums when its FFT error would exceed fft_total * share / depth):
    the nodes of one tree level share at most the total weight, so all cuts together stay below
    tail_total. (Big nodes get big budgets, so the FFT noise floor in their tails can be cut.)
    """
    cum = np.concatenate([[0.0], np.cumsum(np.asarray(weights, dtype=float))])
    total = float(cum[-1])
    n = len(builders)
    depth = 2 * max(1, math.ceil(math.log2(max(n, 2)))) + 2  # weight splits are not exact halves

    def rec(lo: int, hi: int, level: int) -> LatticePMF:
        if cancel is not None:
            cancel.check()
        if hi - lo == 1:
            return builders[lo]()
        mid = int(np.searchsorted(cum, (cum[lo] + cum[hi]) / 2))
        mid = min(max(mid, lo + 1), hi - 1)
        if level >= depth:
            mid = (lo + hi) // 2
        share = float(cum[hi] - cum[lo]) / total / (2 * depth)
        left, right = rec(lo, mid, level + 1), rec(mid, hi, level + 1)
        return convolve(left, right, tail_total * share, fft_total * share)

    return rec(0, n, 0)


def power(x: LatticePMF, m: int, tail: float, fft_budget: float) -> LatticePMF:
    """x composed with itself m times, by repeated squaring."""
    result = None
    base = x
    while True:
        if m & 1:
            result = base if result is None else convolve(result, base, tail, fft_budget)
        m >>= 1
        if not m:
            return result
        base = convolve(base, base, tail, fft_budget)
