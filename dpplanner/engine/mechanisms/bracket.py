"""The certified [lower, upper] bracket on the exact epsilon of a composition of releases.

EpsDelta releases are the dominating pair of (eps, delta)-DP: with probability delta_i the loss is
+infinity, otherwise that of RR(eps_i). Composed with anything, the +infinity mass is
1 - prod(1 - delta_i), so delta_total(x) <= delta_g iff the finite part has
delta(x) <= delta_bar = 1 - (1 - delta_g) / prod(1 - delta_i) (engine/delta.py, rounded down).

All Gaussians are one Gaussian with mu^2 = sum 1/m_i^2; alone it has the closed form of
gaussian.py. Otherwise the Laplace, RR and discrete pmfs (kernels.py, discrete.py) are composed
on one lattice with the optimal core's sound convolution and truncation, and read out with its
certified root (optimal/atoms.py), or, with Gaussians, with the exact Gaussian mixed in at
read-out (readout.py). Both twins share the lattice step, refined until the width is at most eta
or the lattice would exceed MAX_POINTS.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from .. import offload
from ..memo import Memo
from ..numerics import round_down, round_up
from ..optimal.atoms import sup_root
from ..optimal.lattice import LatticePMF, compose_balanced, power
from ..optimal.pld import BATCH_POINTS, BATCH_QUERIES, FFT_FRACTION, TAIL_FRACTION
from .gaussian import epsilon_bracket
from .readout import mixed_root
from .discrete_gaussian_kernel import spacing_down
from .discrete_laplace import directed_ratio
from .gauss_sums import DIRECT_SIGMA
from .kernels import laplace_lower, laplace_upper, rr_lower, rr_upper

U = 2.0 ** -53
MAX_POINTS = 1 << 20
#: Refinements of the lattice after the first one (each halves the step or more).
MAX_REFINE = 6
#: A first lattice smaller than this is kept only if its width is eta / 8 (see _bracket): up to
#: here a composition costs about the same whatever its size (per-kernel overhead).
CHEAP_POINTS = 1 << 12


@dataclass(frozen=True)
class Twins:
    """What is composed, every parameter already rounded for the upper and the lower twin.

    a_up >= 1/m >= a_lo per Laplace row; mu_up >= sqrt(sum 1/m_i^2) >= mu_lo for all Gaussians."""

    a_up: np.ndarray
    up_mult: np.ndarray
    a_lo: np.ndarray
    lo_mult: np.ndarray
    mu_up: float
    mu_lo: float
    rr_eps: np.ndarray
    rr_mult: np.ndarray
    delta_bar: float     # rounded down: the upper twin is read there
    delta_bar_hi: float  # rounded up: the lower twin is read there
    disc: tuple = ()     # discrete.DiscreteRelease, merged and sorted (both twins from each)
    disc_mult: tuple = ()

    @property
    def unbounded(self) -> bool:
        """Whether some release's loss is unbounded (a Gaussian): then delta > 0 at every epsilon."""
        return self.mu_up > 0 or any(d.kind == "gaussian" for d in self.disc)


def laplace_params(m) -> tuple[np.ndarray, np.ndarray]:
    """(a_up, a_lo) bracketing a = 1/m exactly: 1/m is correctly rounded, so it is either exact
    (then both are it) or one ulp away on a side checked in rational arithmetic."""
    m_u, inverse = np.unique(np.asarray(m, dtype=float), return_inverse=True)
    a = 1.0 / m_u
    up, lo = a.copy(), a.copy()
    for i, (ai, mi) in enumerate(zip(a.tolist(), m_u.tolist())):
        prod = Fraction(ai) * Fraction(mi)
        if prod < 1:
            up[i] = math.nextafter(ai, math.inf)
        elif prod > 1:
            lo[i] = math.nextafter(ai, 0.0)
    return up[inverse], lo[inverse]


def gaussian_params(m: np.ndarray, mult: np.ndarray) -> tuple[float, float]:
    """mu = sqrt(sum mult_i / m_i^2), bracketed: each term has relative error <= 3 U, fsum adds one
    rounding, sqrt one more; 16 U of margin each way covers them."""
    m = np.asarray(m, dtype=float)
    if m.size == 0:
        return 0.0, 0.0
    with np.errstate(divide="ignore", under="ignore"):     # (m = 0, or m * m underflowing: mu = inf)
        terms = np.asarray(mult, dtype=float) / (m * m)
    s = math.fsum(terms.tolist())
    return math.sqrt(s * (1 + 16 * U)) * (1 + 4 * U), math.sqrt(s * (1 - 16 * U)) * (1 - 4 * U)


def pure_sum(r: Twins, upper: bool) -> float:
    """sum of the Laplace a_i and the RR eps_i: the exact epsilon at delta 0 (and a cap otherwise)."""
    a, k = (r.a_up, r.up_mult) if upper else (r.a_lo, r.lo_mult)
    disc = [d.pure(upper) * m for d, m in zip(r.disc, r.disc_mult)]
    s = math.fsum((a * k).tolist() + (r.rr_eps * r.rr_mult).tolist() + disc)
    return float(round_up(s) if upper else round_down(s))


def _gaussian_root(mu: float, delta_bar: float, upper: bool) -> float:
    """Least x >= 0 with delta_G(x) <= delta_bar: >= it (upper) or <= it (lower)."""
    lo, hi = epsilon_bracket(mu, math.log(delta_bar), upper, 1e-15)
    # upper: delta_up(hi) <= delta_bar, so the exact root is <= hi; lower: delta_lo(lo) > delta_bar
    return hi if upper else lo


def _builders(r: Twins, step: float, upper: bool, tail: float, budget: float):
    builders, weights = [], []
    a, mult = (r.a_up, r.up_mult) if upper else (r.a_lo, r.lo_mult)
    lap = laplace_upper if upper else laplace_lower
    batch: list[float] = []
    for ai, k in zip(a.tolist(), mult.tolist()):
        if k > 1:
            builders.append(lambda ai=ai, k=k: power(lap(ai, step), k, tail, budget))
            weights.append(2 * k * ai + step)
            continue
        if batch and (2 * sum(batch) / step > BATCH_POINTS or len(batch) >= BATCH_QUERIES):
            builders.append(lambda b=tuple(batch): batch_pmf([lap(x, step) for x in b], upper))
            weights.append(2 * sum(batch) + step)
            batch = []
        batch.append(ai)
    if batch:
        builders.append(lambda b=tuple(batch): batch_pmf([lap(x, step) for x in b], upper))
        weights.append(2 * sum(batch) + step)
    kern = rr_upper if upper else rr_lower
    for e, k in zip(r.rr_eps.tolist(), r.rr_mult.tolist()):
        builders.append(lambda e=e, k=k: power(kern(e, step), k, tail, budget))
        weights.append(2 * k * e + step)
    for d, k in zip(r.disc, r.disc_mult):
        builders.append(lambda d=d, k=k: power(d.kernel(step, upper, tail), k, tail, budget))
        weights.append(k * d.span() + step)
    return builders, weights


def batch_pmf(kernels: list, upper: bool) -> LatticePMF:
    """Single releases' kernels composed one after another by direct sums (no FFT, no truncation,
    no per-release object overhead): every entry is a sum of at most len(kernel) non-negative
    products, relative error gamma_len (Higham §3.1), accumulated as in optimal/pld.batch_pmf."""
    arr, rel, err = np.ones(1), 0.0, 0.0
    for ker in kernels:
        arr = np.convolve(arr, ker.p)
        g = 1.01 * (ker.p.size + 2) * U
        rel = rel + ker.rel + rel * ker.rel
        rel = rel + g + rel * g
        err = err + ker.err
    off = math.fsum(k.offset for k in kernels)  # correctly rounded: one step to the safe side
    off = math.nextafter(off, math.inf if upper else -math.inf)
    return LatticePMF(kernels[0].step, 0, arr, off, upper, rel=rel, err=err * (1 + rel + 4 * U))


def side(r: Twins, step: float, upper: bool, cancel=None) -> float:
    """epsilon read from the composed upper (or lower) twin on lattice ``step``."""
    db = r.delta_bar if upper else r.delta_bar_hi
    mu = r.mu_up if upper else r.mu_lo
    if mu > 0:
        return mixed_root(composed_pmf(r, step, upper, cancel).atoms(), mu, db, upper)
    return sup_root(composed_pmf(r, step, upper, cancel).atoms(above=0.0), db)


def composed_pmf(r: Twins, step: float, upper: bool, cancel=None):
    """The upper (or lower) twin of the Laplace and RR releases on lattice ``step`` (the Gaussians
    are added exactly at read-out); truncation and FFT error budgets are shares of r.delta_bar
    (they count in full against delta when read). Every caller picks a lattice that fits; this
    refusal stands behind them (a floor once asked for 186 GiB here)."""
    if lattice_points(r, step) > MAX_POINTS:
        raise ValueError(f"a lattice of step {step:.3g} needs about {lattice_points(r, step):,.0f} points "
                         f"for these releases; at most {MAX_POINTS:,} are allowed")
    mults = r.up_mult.tolist() + r.lo_mult.tolist() + r.rr_mult.tolist() + list(r.disc_mult)
    n_ops = int(sum(2 * int(k).bit_length() for k in mults)) + 4
    tail = TAIL_FRACTION * r.delta_bar / n_ops
    budget = FFT_FRACTION * r.delta_bar / n_ops
    builders, weights = _builders(r, step, upper, tail, budget)
    return compose_balanced(builders, weights, TAIL_FRACTION * r.delta_bar / 2,
                            FFT_FRACTION * r.delta_bar / 2, cancel)


def lattice_points(r: Twins, step: float) -> float:
    """Rough size of the largest pmf on this lattice (after truncation to ~ +-9 sigma)."""
    span = 2.0 * float(np.sum(r.a_up * r.up_mult) + np.sum(r.rr_eps * r.rr_mult))
    var = float(np.sum(r.a_up ** 2 * r.up_mult) + np.sum(r.rr_eps ** 2 * r.rr_mult))
    span += sum(d.span() * m for d, m in zip(r.disc, r.disc_mult))
    var += sum(d.variance() * m for d, m in zip(r.disc, r.disc_mult))
    biggest = max([0.0] + (2 * r.a_up).tolist() + (2 * r.rr_eps).tolist() + [d.span() for d in r.disc])
    return (min(span, 18.0 * math.sqrt(var)) + biggest) / step


def initial_step(eta: float) -> float:
    """The first lattice: about eta (the twins' errors are second order, or first order with small
    weights once the largest Laplace group is aligned); refined only if the width says so."""
    return 2.0 ** min(-6, math.floor(math.log2(eta)))


def aligned_step(r: Twins, target: float) -> float:
    """A step <= target on which the Laplace groups' a_i (lower side) are whole multiples where
    that costs little: an a_i off the lattice costs the lower twin less than half a step of it
    (kernels.laplace_lower), so the largest group (mult * a) is made exact, together with the
    groups whose a is a small rational multiple p/q of it, heaviest first, as long as the step
    stays above target / 2 (edited plans have many groups at ratios like 21/20 of each other; all
    of them aligned, the lattice was up to 40 times finer than target). Those multiples hold only
    to ~1e-12 (an a one ulp below p/q a0 is common), so the lattice is laid under the smallest
    a_i q/p: every aligned a_i then loses ~1e-12 of itself instead of a whole step. Any step is
    valid; this one only makes the bracket tighter."""
    a_lo, weight = _alignable(r, target)
    if a_lo.size == 0:
        return target
    g = int(np.argmax(weight))
    if a_lo[g] == 0.0:    # every a_lo underflowed (a = 5e-324): no loss in the lower twin to align
        return target
    ratios = a_lo / float(a_lo[g])
    dens = _small_denominators(ratios)
    q, base, step = 1, None, target
    for i in np.argsort(-weight, kind="stable").tolist():
        den = int(dens[i])
        num = round(float(ratios[i]) * den)
        if not (den and num) or math.lcm(q, den) > 4096:    # (num = 0: an a_lo that underflowed to 0)
            continue
        q_i = math.lcm(q, den)
        # base <= a_i den / num for every aligned group (exact), so n steps of base / n fit below each
        base_i = Fraction(float(a_lo[i])) * den / num
        base_i = base_i if base is None else min(base, base_i)
        n = q_i * max(1, math.ceil(float(base_i) / (target * q_i)))
        step_i = float(base_i / n)
        while Fraction(step_i) * n > base_i:
            step_i = math.nextafter(step_i, 0.0)
        if base is not None and step_i < min(target / 2, step * (1 - 1e-9)):
            continue        # too fine for what it buys: this group stays off the lattice
        # (one that only lays the step a hair lower, as a group at a whole ratio does, is taken)
        q, base, step = q_i, base_i, step_i
    return step


def _alignable(r: Twins, target: float) -> tuple[np.ndarray, np.ndarray]:
    """(a, weight) of what aligned_step may put on the lattice: the Laplace groups' a_lo
    (mult * a), and each discrete Laplace release (weight mult * S / t): one whose atoms are at
    least a target apart by its 1/t rounded down (its atoms are 2/t apart: all on the lattice when
    1/t is, discrete_laplace.py), a denser one by S / t rounded down (its top atom, at 2 S / t, is
    the one its lower twin must pool when it is off the lattice, as for the continuous Laplace);
    and each discrete Gaussian whose atoms are sparse (their spacing S / sigma^2 at least half a
    target; weight mult * S / sigma): its lower twin is exact when the step divides the spacing."""
    extra = [(directed_ratio(1, d.param, False) if 2.0 / d.param >= target else d.pure(False), k * d.pure(False))
             for d, k in zip(r.disc, r.disc_mult) if d.kind == "laplace"]
    extra += [(spacing_down(d.param, d.shift), k * d.ratio) for d, k in zip(r.disc, r.disc_mult)
              if d.kind == "gaussian" and d.param <= DIRECT_SIGMA and spacing_down(d.param, d.shift) >= target / 2]
    if not extra:
        return r.a_lo, r.a_lo * r.lo_mult
    a, w = zip(*extra)
    return np.concatenate([r.a_lo, np.array(a)]), np.concatenate([r.a_lo * r.lo_mult, np.array(w)])


def _jump(r: Twins, step: float, width: float, eta: float, finest_factor: float = 1 / 64) -> float:
    """The next lattice's target for a bracket ``width`` wide on ``step``: the errors are first
    order, so the step scaled by 0.7 eta / width, rounded down to a power of two (at least
    halved, at most by ``finest_factor``), but not past the finest lattice that fits (a smaller
    jump could still have met eta there)."""
    ratio = 0.7 * eta / width if width > 0 else 0.0   # (nan: inf - inf when no side resolved)
    target = step * max(finest_factor, min(0.5, 2.0 ** math.floor(math.log2(max(ratio, 1e-300)))))
    finest = step * lattice_points(r, step) / MAX_POINTS * 1.125
    return max(target, min(finest, step / 2))


def _misalignment(r: Twins, step: float) -> float:
    """sum over releases of mult * (2a mod step) / 2 (RR: 2 eps; discrete Laplace: 2/t): what the lower twin may lose to
    releases off the lattice, about twice the width they cause (measured on edited plans)."""
    f_lap = np.fmod(2.0 * r.a_lo, step) if r.a_lo.size else np.zeros(0)
    f_rr = np.fmod(2.0 * r.rr_eps, step) if r.rr_eps.size else np.zeros(0)
    # sparse discrete Laplace releases: atoms 2/t apart, each rounded down when off the lattice
    f_disc = sum(k * math.fmod(2.0 / d.param, step) for d, k in zip(r.disc, r.disc_mult)
                 if d.kind == "laplace" and 2.0 / d.param >= step)
    return 0.5 * float(np.dot(r.lo_mult, f_lap) + np.dot(r.rr_mult, f_rr) + f_disc)


#: Brackets already computed, keyed by what was composed. One edit asks for the same one up to
#: three times (the allocation's last check, the totals, the curve's lattice), and a bracket is a
#: pure function of its Twins and eta. Few entries: a key holds the release arrays.
_BRACKETS_MAX = 32
_BRACKETS = Memo(_BRACKETS_MAX)


def _key(r: Twins, eta: float) -> tuple:
    return (r.a_up.tobytes(), r.up_mult.tobytes(), r.a_lo.tobytes(), r.lo_mult.tobytes(), r.mu_up,
            r.mu_lo, r.rr_eps.tobytes(), r.rr_mult.tobytes(), r.delta_bar, r.delta_bar_hi, eta, r.disc,
            r.disc_mult)


def _small_denominators(ratios: np.ndarray) -> np.ndarray:
    """Per ratio, the least q <= 64 with q * ratio within 1e-12 relative of a whole number (0: none).
    (The float ratios are within 2.3e-16 of the exact ones; being near a tolerance edge only
    changes how tight the bracket is, never whether it is valid.)"""
    q = np.arange(1, 65, dtype=float)
    scaled = ratios[:, None] * q[None, :]
    close = np.abs(scaled - np.rint(scaled)) <= 1e-12 * scaled
    return np.where(close.any(axis=1), np.argmax(close, axis=1) + 1, 0)


class Bracket(NamedTuple):
    upper: float
    lower: float
    detail: str
    step: float         # the lattice of upper and lower (0: none was needed or none fitted)
    first_fit: float    # the coarsest lattice whose width met eta (0: none)


def bracket(r: Twins, eta: float, cancel=None, progress=None) -> Bracket:
    """The certified bracket of releases with delta_bar >= 0."""
    key = _key(r, eta)
    known = _BRACKETS.get(key)
    if known is None:
        known = _bracket(r, eta, cancel, progress)
        _BRACKETS.put(key, known)
    return known


def _bracket(r: Twins, eta: float, cancel, progress) -> Bracket:
    has_rest = r.a_up.size > 0 or r.rr_eps.size > 0 or len(r.disc) > 0
    if r.delta_bar == 0.0:  # (delta_bar_hi > 0 only when the deltas nearly fill delta_g; 0 is a valid lower)
        lo = 0.0 if r.delta_bar_hi > 0 else (math.inf if r.unbounded else pure_sum(r, False))
        if r.unbounded:
            return Bracket(math.inf, lo, "Gaussian noise has delta > 0 at every epsilon", 0.0, 0.0)
        return Bracket(pure_sum(r, True), lo, "pure (delta = 0): the sum of the epsilons", 0.0, 0.0)
    if not has_rest:
        if r.mu_up == 0:
            return Bracket(0.0, 0.0, "no release adds privacy loss", 0.0, 0.0)
        up, lo = _gaussian_root(r.mu_up, r.delta_bar, True), _gaussian_root(r.mu_lo, r.delta_bar_hi, False)
        return Bracket(float(round_up(up)), float(round_down(lo)), "closed form (all releases Gaussian)", 0.0, 0.0)
    cap = pure_sum(r, True) if not r.unbounded else math.inf
    step = aligned_step(r, initial_step(eta))
    # A small first lattice is kept only if tight (eta / 8): a finer one costs little more up to
    # CHEAP_POINTS, and releases off the lattice (every typed epsilon) make it loose. Where their
    # offsets already predict more than that, it is not composed at all: the first lattice is
    # the one a measured width would have jumped to.
    demanding = lattice_points(r, step) < CHEAP_POINTS
    guess = _misalignment(r, step) / 2
    if demanding and guess > eta / 8:
        # (a prediction, not a measurement: at most 4x finer; many releases' offsets partly
        # cancel, and 1000 distinct ones once jumped 64x, at 3x the cost, to a 4x tighter bracket)
        step = aligned_step(r, _jump(r, step, guess, eta, finest_factor=1 / 4))
        demanding = False
    up, lo, used, first_fit = math.inf, 0.0, 0.0, 0.0
    note = ""
    for it in range(MAX_REFINE + 1):
        if lattice_points(r, step) > MAX_POINTS:
            note = f"; the lattice limit ({MAX_POINTS:,} points) was reached"
            break
        used = step
        # the two twins are independent: the lower one may be composed in the helper process
        up_here, lo_here = offload.both((side, (r, step, True)), (side, (r, step, False)), cancel)
        up, lo = min(up, up_here), max(lo, lo_here)
        if progress is not None:
            progress((it + 1) / (MAX_REFINE + 1))
        width = min(up, cap) - lo
        if width <= eta and not first_fit:
            first_fit = step
        # after one jump eta is enough (a chain of halvings while the upper end still moved took
        # four lattices, 13 ms a side, on every edit of the 100-query example)
        if width <= eta and (width <= eta / 8 or not demanding):
            break
        demanding = False
        step = aligned_step(r, _jump(r, step, width, eta))
    up = min(up, cap)
    detail = f"pld lattice {used:.3g}" if used else "pld"
    if up - lo > eta:
        detail += f"; width {up - lo:.3g} > eta = {eta:g}{note or '; refinement limit reached'}"
    return Bracket(float(round_up(up)), float(round_down(min(lo, up))), detail, used, first_fit)
