"""Composing lattice kernels in the Fourier domain, exponentially tilted, with certified errors.

Every release kind gives a lattice pmf (a LatticePMF kernel: p[j] at offset + (start + j) step) and
a multiplicity n. The composition of all of them is one product of their discrete Fourier
transforms, each raised to its n (repeated squaring): one transform per kind and one inverse,
whatever n is, instead of a tree of convolutions with an FFT and a truncation each.

Tilt. Each kernel is multiplied by e^{theta s j} and normalised (a probability vector t_g; the
log normaliser log M_g is kept): the tilt commutes with convolution, and undoing it on the result
(e^{-theta s k} times the product of the M_g) gives the composition of the kernels themselves,
exactly up to relative rounding of the tilt factors. With theta near the saddle point of the
read-out (the loss near the root epsilon), the FFT's absolute rounding, which is relative to the
whole (tilted) vector, becomes relative to the part of the distribution that decides delta there:
no long-double transforms, however small delta_bar is.

Window. The product is a cyclic convolution on N points: index k of the composition lands on
k mod N. The window [w0, w0 + N) ends where Chernoff bounds of the tilted sum (from its exact
cumulant generating function) say the tilted mass beyond, ``outside``, is negligible; that mass
either lies outside (it is missing from the window) or is folded into it (added to some entries),
and both are charged below.

Errors, in the tilted vector (l2, Higham Thm 24.2 with the optimal core's charge FFT_C u (log2 N
+ 2) for a transform): a kernel's transform errs by e_g <= FFT_C u (log2 N + 2) sqrt(N) ||t_g||_2;
its n-th power by n e_g (1 + e_g)^(n-1) (|transforms| <= 1: t_g sums to 1), plus the rounding of
the ~2 log2 n complex products; the product over kinds adds the errors (each factor <= 1 + e);
the inverse transform adds its own share; Parseval divides the frequency-domain norm by sqrt(N).
A read-out of delta(x) = sum_k p_k psi_x(l_k) then errs by at most
    M [ E2 ||e^{-theta s k} psi_x(l_k)||_2 + (E1 + outside) e^{-theta (x - offset)} C_psi ]
where M is the product of the normalisers and C_psi bounds e^{theta v} psi(v) over every loss (a
hinge: theta^theta / (1 + theta)^(1 + theta); mixed with a Gaussian of MGF M_G: M_G(theta)). psi_x
only falls as x grows, so the charge computed at x_min holds at every x >= x_min.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import fft as sfft

from ..optimal.atoms import SUB, Atoms
from ..optimal.lattice import FFT_C, LatticePMF, fft_len

U = 2.0 ** -53
#: Tilted mass allowed outside the window (relative to the tilted whole, which is 1).
OUTSIDE = 1e-13
#: Losses this far above a read-out's x_min have its psi within 1e-17 of 1: the hinge 1 - e^{x - l},
#: and mixed with any Gaussian delta_G(x - l) >= Phi(40 / mu + mu / 2) - e^{-40} >= 1 - 1e-17.
SATURATED = 40.0
#: The largest window (points) a composition may use (a plan of 2^53 equal releases asked the
#: Chernoff bounds, at the limit of double precision, for 8e8 points: 6 GB per array).
WINDOW_MAX = 1 << 23


class WindowTooWide(Exception):
    """The composition's mass needs a window of more than WINDOW_MAX points."""


@dataclass(frozen=True)
class Tilted:
    """One kind's kernel tilted by theta: t (sums to 1) on indices start + j; log_m = log M_g
    (offset excluded); rel: relative error of each entry against the kernel's exact tilt."""

    t: np.ndarray
    start: int
    log_m: float
    rel: float
    err: float          # l1 error of t (the kernel's own absolute error, tilted)
    inf_mass: float     # the kernel's mass at +infinity (upper twins), untilted
    mult: int
    e2: float = 0.0     # l2 error of t (a kind composed of many, rowtree.py)

    def variance(self) -> float:
        j = np.arange(self.t.size, dtype=float)
        mean = float(np.sum(self.t * j))
        return float(np.sum(self.t * (j - mean) ** 2))

    def log_mgf(self, lams: np.ndarray) -> np.ndarray:
        """log E_t[e^{lam (index)}] at each lam (index-space cumulants of the tilted kernel)."""
        # (over the support only: a discrete Gaussian of small sigma is a few atoms ~1e5 points apart)
        j = np.flatnonzero(self.t)
        e = np.log(self.t[j])[None, :] + lams[:, None] * j.astype(float)[None, :]
        top = np.max(e, axis=1)
        return lams * self.start + top + np.log(np.sum(np.exp(e - top[:, None]), axis=1))


def tilt(kernel: LatticePMF, theta: float, mult: int) -> Tilted:
    """kernel * e^{theta step (start + j)}, normalised. The exponent is taken relative to its largest
    value (no overflow); its rounding, 4 u (|theta step j| + 1) absolute, is a relative error of exp."""
    s = kernel.step
    j = np.arange(kernel.p.size, dtype=float)
    expo = theta * s * j
    top = float(expo[-1]) if expo.size else 0.0
    with np.errstate(under="ignore"):
        w = kernel.p * np.exp(expo - top)
    total = float(np.sum(w))
    if not total > 0:
        raise ValueError("a release's lattice kernel has no mass")
    t = w / total
    rel = kernel.rel + 4 * U * (abs(top) + 2) + 1.01 * (kernel.p.size + 4) * U
    log_m = theta * s * kernel.start + top + math.log(total)
    # the kernel's l1 error, tilted: at most err e^{theta s j_max} / M_g = err / total; and each
    # product that underflowed is off by at most SUB
    err = (kernel.err + kernel.p.size * SUB) / total
    return Tilted(t, int(kernel.start), log_m, rel, err, kernel.inf_mass, int(mult))


def window(kinds: list[Tilted], min_points: int) -> tuple[int, int, float]:
    """(w0, N, outside): a window [w0, w0 + N) of the total index holding all but ``outside`` of
    the tilted mass. Its ends are where Chernoff bounds over a grid of tilts (any tilt gives a valid
    bound) leave OUTSIDE / 2 beyond each, not a multiple of the standard deviation: a sum of a few
    atoms far apart (a discrete Gaussian of small sigma) needs only the span of its atoms."""
    var = sum(k.mult * k.variance() for k in kinds)
    lams = np.concatenate([_CHERNOFF, -_CHERNOFF]) / math.sqrt(max(var, 1.0))
    cumulant = sum(k.mult * k.log_mgf(lams) for k in kinds)
    # e^{cumulant - lam c} <= OUTSIDE / 2 beyond c = (cumulant - log(OUTSIDE / 2)) / lam, each sign
    edge = (cumulant - math.log(OUTSIDE / 2)) / lams
    half = _CHERNOFF.size
    lo, hi = math.floor(float(np.max(edge[half:]))), math.ceil(float(np.min(edge[:half])))
    n = max(hi - lo + 2, min_points)
    for _ in range(60):     # (the bound's own rounding: widened until it is certified)
        n = fft_len(n)
        n += n % 2
        if n > WINDOW_MAX:
            raise WindowTooWide(f"the composition needs a window of more than {WINDOW_MAX:,} points")
        w0 = (lo + hi - n) // 2
        outside = _outside(lams, cumulant, w0, w0 + n)
        if outside <= OUTSIDE:
            break
        n += n // 4
    return w0, n, outside


#: The tilts of the Chernoff bounds, in units of 1/sd (any tilt gives a valid bound; the large ones
#: bound the gaps between atoms far apart).
_CHERNOFF = 2.0 ** np.arange(-2, 11)


def _outside(lams: np.ndarray, cumulant: np.ndarray, lo: int, hi: int) -> float:
    """P(K < lo) + P(K >= hi) (Chernoff: at most e^{-lam c + sum n log E e^{lam j}} for every lam
    of the right sign)."""
    edge = np.where(lams > 0, float(hi), float(lo))
    with np.errstate(over="ignore"):
        bound = np.exp(np.minimum(cumulant - lams * edge, 0.0))
    half = _CHERNOFF.size
    return (float(np.min(bound[:half])) + float(np.min(bound[half:]))) * (1 + 1e-6)


@dataclass(frozen=True)
class Composed:
    """The tilted composition on a window: c[i] at total index w0 + i, location offset + step (w0 + i)."""

    c: np.ndarray
    w0: int
    step: float
    offset: float
    theta: float
    log_m: float        # sum of n_g log M_g
    rel: float          # relative error of each entry (kernels' and tilts' roundings, composed)
    e2: float           # l2 error of c (FFT and powers)
    e1: float           # l1 error of c (the kernels' own absolute errors)
    outside: float      # tilted mass outside the window (folded in or missing)
    inf_mass: float     # mass at +infinity (untilted)

    def atoms(self, upper: bool, x_min: float, c_psi: float, weight) -> Atoms:
        """The untilted atoms, with every error charged for read-outs at x >= x_min (``weight``:
        the read-out's psi_x_min at each location, ``c_psi`` its constant; see the module).

        The leading atoms whose untilted error bound, e2 e^{-theta s k} M, is at least 1 carry
        only noise (far below the saddle point: entries > 1, even inf, whose sums overflowed):
        they are left out, and their exact mass, at most 1 in all, is charged at the largest weight
        among them (psi_x grows with the loss: the highest one's, lam above it; for the hinge, 0
        below x_min). Their share of e2's charge was already at least that."""
        k = self.w0 + np.arange(self.c.size, dtype=float)
        loc = self.offset + self.step * k
        lam = 4 * U * (abs(self.offset) + self.step * float(np.max(np.abs(k))))
        with np.errstate(divide="ignore", under="ignore", over="ignore"):
            untilt = self.log_m - self.theta * self.step * k
            noise = untilt + math.log(self.e2) >= 0.0 if self.e2 > 0 else np.zeros(k.size, dtype=bool)
            cut = min(int(np.argmin(noise)) if not noise.all() else k.size, k.size - 1)
            dropped = float(weight(np.array([loc[cut - 1] + lam]))[0]) if upper and cut else 0.0
            k, loc, untilt = k[cut:], loc[cut:], untilt[cut:]
            p = np.exp(np.log(self.c[cut:]) + untilt)
            # (psi is a delta, at most 1, and within 1e-17 of it SATURATED above x_min: charged as 1
            # there, not computed; a few atoms far apart make most of the window such losses)
            psi = np.ones(loc.size)
            near = int(np.searchsorted(loc, x_min + SATURATED))
            psi[:near] = weight(loc[:near])
            w = np.exp(untilt + np.log(psi))
        # (exp of an argument off by 4 u |arg|: a relative error of that)
        rel = self.rel + 4 * U * (abs(self.log_m) + abs(self.theta * self.step) * float(np.max(np.abs(k))) + 2)
        spill = math.exp(min(self.log_m - self.theta * (x_min - self.offset), 700.0)) * c_psi
        top = float(np.max(w)) if w.size else 0.0     # (the l2 norm scaled: w^2 may overflow)
        norm = top * float(np.sqrt(np.sum((w / top) ** 2))) if 0.0 < top < math.inf else top
        err = self.e2 * norm + (self.e1 + self.outside) * spill + dropped
        return Atoms(loc, p, upper, rel=rel, err=err * (1 + 1e-6), inf_mass=self.inf_mass, lam=lam)


def compose(kinds: list[Tilted], step: float, theta: float, offset: float,
            min_points: int = 256, cancel=None) -> Composed:
    """The composition of every kind (each to its multiplicity) on a window, tilted by theta.
    ``offset``: the sum of the kinds' offsets times their multiplicities, rounded to the safe side.
    ``cancel`` is checked before each kind's transform (a fine lattice makes each one long).

    Errors per frequency (|transforms| <= 1 exactly): a kind's transform errs by at most its l2
    bound e_g; z^n by repeated squaring errs by n (e_g + 4 u) (1 + e_g + 4 u)^n (each product's
    relative error, 4 u, is doubled by every later squaring: at most n of them in all), the
    product over kinds by the sum of those times prod (1 + e_h + 4 u)^(n_h), plus 4 u a product.
    One kind that comes once (a tree of every release, rowtree.py) is its own composition: its
    whole support is the window, with no transform and no mass outside."""
    if len(kinds) == 1 and kinds[0].mult == 1:
        k = kinds[0]
        return Composed(k.t.copy(), k.start, step, offset, theta, k.log_m, rel=math.expm1(min(k.rel, 700.0)),
                        e2=k.e2, e1=math.expm1(min(k.err, 700.0)), outside=0.0, inf_mass=min(1.0, k.inf_mass))
    w0, n, outside = window(kinds, min_points)
    fft_rel = FFT_C * U * (math.log2(n) + 2)
    prod = None
    sum_err = 0.0       # sum over kinds of n_g (e_g + 4u), e_g an l2 (hence max) bound over frequencies
    l2_err = 0.0        # sum over kinds of n_g (||e_g||_2 + 4u sqrt(N))
    rel = log_m = inf_mass = e1 = 0.0
    for k in kinds:
        if cancel is not None:
            cancel.check()
        idx = (k.start + np.arange(k.t.size)) % n
        f = sfft.rfft(np.bincount(idx, weights=k.t, minlength=n), n, workers=1)
        # (folding onto the window adds non-negative terms: relative rounding, in rel below)
        e_g = math.sqrt(n) * (fft_rel * float(np.sqrt(np.sum(k.t * k.t))) + k.e2)
        power = _power(f, k.mult)
        sum_err += k.mult * (e_g + 4 * U)
        l2_err += k.mult * (e_g + 4 * U * math.sqrt(n))
        prod = power if prod is None else prod * power
        rel += k.mult * (k.rel + 1.01 * (k.t.size // n + 2) * U)
        e1 += k.mult * k.err
        log_m += k.mult * k.log_m
        inf_mass += k.mult * k.inf_mass
    amp = math.exp(min(sum_err + 4 * U * len(kinds), 700.0))
    e_freq = amp * (l2_err + 4 * U * len(kinds) * math.sqrt(n))
    c = sfft.irfft(prod, n, workers=1)
    np.maximum(c, 0.0, out=c)      # (towards the exact, non-negative values: never a larger error)
    # Parseval: the inverse transform divides the l2 norm by sqrt(N); its own rounding is FFT_C's
    # charge of the result's norm (that of the exact result plus the error)
    e_idx = e_freq / math.sqrt(n)
    e2 = e_idx + fft_rel * (float(np.sqrt(np.sum(c * c))) + e_idx)
    c = np.roll(c, -(w0 % n))
    return Composed(c, w0, step, offset, theta, log_m, rel=math.expm1(min(rel, 700.0)),
                    e2=e2 * (1 + 1e-6), e1=math.expm1(min(e1, 700.0)), outside=outside,
                    inf_mass=min(1.0, inf_mass * (1 + 1e-12)))


def _power(f: np.ndarray, n: int) -> np.ndarray:
    """f ** n pointwise by repeated squaring."""
    result, base = None, f
    while True:
        if n & 1:
            result = base if result is None else result * base
        n >>= 1
        if not n:
            return result
        base = base * base
