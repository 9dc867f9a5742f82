"""What a pld bracket composes (Twins) and the lattice twins of the optimal core's kind.

EpsDelta releases are the dominating pair of (eps, delta)-DP: with probability delta_i the loss is
+infinity, otherwise that of RR(eps_i). Composed with anything, the +infinity mass is
1 - prod(1 - delta_i), so delta_total(x) <= delta_g iff the finite part has
delta(x) <= delta_bar = 1 - (1 - delta_g) / prod(1 - delta_i) (engine/delta.py, rounded down).

All Gaussians are one Gaussian with mu^2 = sum 1/m_i^2 (gaussian.py). The bracket itself climbs
a ladder of lattices (ladder.py, spectral.py). Here: the Twins' parameters, the lattice size and
alignment every rung uses, and ``composed_pmf`` / ``side``: the Laplace, RR and discrete pmfs
(kernels.py, discrete.py) composed by the optimal core's sound convolution and truncation, with
the Gaussians mixed in at read-out (readout.py): what the prefix curves, the floor on "optimal"
and pld_delta read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..numerics import inverse_square, round_down, round_up, tiny_down, tiny_up
from ..optimal.atoms import sup_root
from ..optimal.binomial import log_rr
from ..optimal.lattice import LatticePMF, compose_balanced, direct_convolve, power
from ..optimal.pld import BATCH_POINTS, BATCH_QUERIES, FFT_FRACTION, TAIL_FRACTION
from .gaussian_inverse import epsilon_bracket
from .readout import mixed_root
from .discrete_gaussian_kernel import spacing_down
from .discrete_laplace import directed_ratio
from .gauss_sums import DIRECT_SIGMA
from .kernels import laplace_lower, laplace_upper, rr_lower, rr_upper

U = 2.0 ** -53
MAX_POINTS = 1 << 20
#: Distinct Laplace multipliers whose 1/m is checked for exactness (beyond: bracketed by an ulp).
EXACT_PARAMS = 4096
#: aligned_step lays the lattice under at most this many Laplace groups, the heaviest.
ALIGN_GROUPS = 64
#: A group counts as a small multiple p/q of the heaviest one when its ratio is within this
#: relative distance of p/q. An aligned a then loses at most about twice this share of itself in
#: the lower twin (its ratio above p/q, the lattice laid under another's below), where one off the lattice loses up to a whole step (never less than 2^-20 of 2a): plans
#: from the model carry multipliers rounded to ~9 digits (synthetic-1000's a differ by 9e-9 where
#: their epsilons are equal), which a tolerance of 1e-12 left off the lattice, and the lower end
#: then needed a lattice 64 times finer (382 -> ~10 ms).
ALIGN_TOLERANCE = 1e-7


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
    tau_up: float = 0.0  # slacks of discrete releases composed as continuous twins (already
    tau_lo: float = 0.0  # taken off delta_bar / added to delta_bar_hi; a delta read adds them)

    @property
    def unbounded(self) -> bool:
        """Whether some release's loss is unbounded (a Gaussian): then delta > 0 at every epsilon."""
        return self.mu_up > 0 or any(d.kind == "gaussian" for d in self.disc)


def exact_key(r: Twins, *scalars: float) -> tuple:
    """Every field of ``r`` and ``scalars``, to the bit (the floats as bytes: -0.0 is not 0.0): a
    memory key for what is a pure function of them."""
    values = np.array([r.mu_up, r.mu_lo, r.delta_bar, r.delta_bar_hi, r.tau_up, r.tau_lo, *scalars])
    return (r.a_up.tobytes(), r.up_mult.tobytes(), r.a_lo.tobytes(), r.lo_mult.tobytes(), r.rr_eps.tobytes(),
            r.rr_mult.tobytes(), values.tobytes(), r.disc, r.disc_mult)


def laplace_params(m) -> tuple[np.ndarray, np.ndarray]:
    """(a_up, a_lo) bracketing a = 1/m exactly: 1/m is correctly rounded, so it is either exact
    (then both are it) or one ulp away on a side checked in rational arithmetic."""
    m_u, inverse = np.unique(np.asarray(m, dtype=float), return_inverse=True)
    a = 1.0 / m_u
    if a.size > EXACT_PARAMS:   # (one ulp each way, unchecked: a Fraction per release costs ~30 us)
        return np.nextafter(a, np.inf)[inverse], np.nextafter(a, 0.0)[inverse]
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
    rounding, sqrt one more; 16 U of margin each way covers them (below the smallest normal double
    the terms' error is absolute: numerics.tiny_up, tiny_down)."""
    m = np.asarray(m, dtype=float)
    if m.size == 0:
        return 0.0, 0.0
    with np.errstate(divide="ignore", under="ignore", over="ignore"):  # (mu = inf: beyond doubles)
        terms = np.asarray(mult, dtype=float) * inverse_square(m)
    s_up = math.fsum(tiny_up(terms, np.isfinite(m)).tolist())
    s_lo = math.fsum(tiny_down(terms).tolist())
    return math.sqrt(s_up * (1 + 16 * U)) * (1 + 4 * U), math.sqrt(s_lo * (1 - 16 * U)) * (1 - 4 * U)


def pure_sum(r: Twins, upper: bool) -> float:
    """sum of the Laplace a_i and the RR eps_i: the exact epsilon at delta 0 (and a cap otherwise)."""
    a, k = (r.a_up, r.up_mult) if upper else (r.a_lo, r.lo_mult)
    disc = [d.pure(upper) * m for d, m in zip(r.disc, r.disc_mult)]
    s = math.fsum((a * k).tolist() + (r.rr_eps * r.rr_mult).tolist() + disc)
    return float(round_up(s) if upper else round_down(s))


def _gaussian_root(mu: float, delta_bar: float, upper: bool, rel_tol: float = 1e-15) -> float:
    """Least x >= 0 with delta_G(x) <= delta_bar: >= it (upper) or <= it (lower), to ``rel_tol``."""
    lo, hi = epsilon_bracket(mu, math.log(delta_bar), upper, rel_tol)
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
    """Single releases' kernels composed one after another by direct sums in a fixed order (no FFT,
    no truncation, no per-release object overhead): every entry is a sum of at most len(kernel)
    non-negative products, relative error gamma_len (Higham §3.1), accumulated as in
    optimal/pld.batch_pmf."""
    arr, rel, err = np.ones(1), 0.0, 0.0
    for ker in kernels:
        arr = direct_convolve(arr, ker.p)
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
    with np.errstate(over="ignore"):    # (inf: an epsilon of 1e300 squared; min() below takes span)
        span = 2.0 * float(np.sum(r.a_up * r.up_mult) + np.sum(r.rr_eps * r.rr_mult))
        var = float(np.sum(r.a_up ** 2 * r.up_mult) + np.sum(r.rr_eps ** 2 * r.rr_mult))
        span += sum(d.span() * m for d, m in zip(r.disc, r.disc_mult))
        var += sum(d.variance() * m for d, m in zip(r.disc, r.disc_mult))
    biggest = max([0.0] + (2 * r.a_up).tolist() + (2 * r.rr_eps).tolist() + [d.span() for d in r.disc])
    return (min(span, 18.0 * math.sqrt(var)) + biggest) / step


#: The ladder's first rung (ladder.py) is made finer where its upper end's error, estimated
#: (ctd_share: about twice the actual one on the examples), is above CTD_SHARE of epsilon and a
#: lattice of at most FINER_POINTS points brings it there, or is above CTD_LARGE of it (then as
#: fine as fits). The upper end is what a plan spends: on the first rung of about 2048 points it
#: was up to ~1e-3 of epsilon above the exact value where many distinct releases each have their
#: top atom split by the lattice (1000 distinct multipliers: 0.28617 vs 0.28587; a lattice of 1e-4
#: under every release, dp_accounting's default, gives 0.28592), and 1e-6 to 1e-5 of it on the
#: examples with continuous noise (dp_accounting's 6e-7 to 4e-6). Where the share is between the
#: two and out of reach (e.g. a few releases edited off the alignment) the rung stays: every
#: composition of an allocation's search on a lattice four times finer would buy a few millionths.
CTD_SHARE = 7e-7
CTD_LARGE = 1e-4
FINER_POINTS = 1 << 13
#: ... and at most this many points times the Laplace and RR rows: a rung's cost grows with both,
#: and from ~10^4 distinct releases on the ladder's first rungs cost little beside the rung that
#: meets eta, which a finer start would reach no sooner (10^5 distinct: as many rungs to climb).
ROW_POINTS = 1 << 23


def ctd_share(r: Twins, step: float) -> float:
    """A second-order estimate of how far the upper twin's epsilon on lattice ``step`` is above the
    exact one, relative to epsilon (a guide for choosing the lattice: any step is sound).
    Connect the dots moves an atom's mass to the lattice points on either side of it, adding the
    variance f (s - f) (f: its distance from the lower one), and a density's mass in each cell to
    the cell's ends, about s^2 / 6 per unit of mass; an added variance V raises epsilon by between
    V / (2 sigma^2) and V / sigma^2 of itself (sigma^2: the loss's variance; epsilon ~ z sigma +
    sigma^2 / 2 at a fixed z), taken at its largest. Discrete kinds only count in sigma^2."""
    a, k = r.a_up, r.up_mult.astype(float)
    f = np.fmod(2.0 * a, step)
    with np.errstate(over="ignore", invalid="ignore"):      # (a = 1e300: an estimate, inf is fine)
        density = -np.expm1(-a) / 2 * np.minimum(step, 2.0 * a) ** 2 / 6       # (its mass: (1 - e^-a) / 2)
        added = float(np.sum(k * (density + 0.5 * f * (step - f))))            # (the top atom: 1/2)
        f = np.fmod(2.0 * r.rr_eps, step)
        added += float(np.sum(r.rr_mult * np.exp(log_rr(r.rr_eps)[0]) * f * (step - f)))
        var = float(np.sum(k * a * a) + np.sum(r.rr_mult * r.rr_eps ** 2)) + r.mu_up ** 2
    var += sum(d.variance() * m for d, m in zip(r.disc, r.disc_mult))
    return added / var if var > 0 else 0.0


def finer_for_ctd(r: Twins, step: float, next_rung) -> float:
    """``step``, or a finer one of at most FINER_POINTS points (and ROW_POINTS per row) where
    ctd_share (about quadratic in the step) is above CTD_SHARE. Above CTD_LARGE, the ladder's own
    next rungs (``next_rung(r, step)``, None where there is none) as far as they fit: a plan that
    climbs on reaches the rungs it would have. Below it, where in reach: the ladder's next rung if
    it brings the share to CTD_SHARE with at most twice the points that needs (the README
    example: the same bracket as before), else the aligned step that does (off the alignment a
    release's top atom costs more than the finer step saves). A function of the releases only,
    as the ladder's first rung must be."""
    if r.disc:      # (their kernels are not in the estimate, and their alignment matters more)
        return step
    most = min(FINER_POINTS, ROW_POINTS / (r.a_up.size + r.rr_eps.size + 1))
    first = ctd_share(r, step)
    if not first > CTD_SHARE:
        return step
    if first > CTD_LARGE:
        return _along(r, step, first, next_rung, 8, most)[0]      # (8 halvings: far beyond FINER_POINTS)
    target = step * math.sqrt(CTD_SHARE / first)
    if target * most < step * lattice_points(r, step):     # (points scale as 1 / step)
        return step
    if 2 * target <= step:
        rung, share = _along(r, step, first, next_rung, 1, most)
        if not share > CTD_SHARE:
            return rung
    finer = aligned_step(r, target)       # (one call, ~0.3 ms: a search asks at each scale it tries)
    return finer if lattice_points(r, finer) <= most and ctd_share(r, finer) < first else step


def _along(r: Twins, step: float, share: float, next_rung, rungs: int, most: float) -> tuple[float, float]:
    """(step, share) after at most ``rungs`` of the ladder's next rungs that have at most ``most``
    points, while the share is above CTD_SHARE."""
    for _ in range(rungs):
        finer = next_rung(r, step)
        if not (share > CTD_SHARE and finer is not None and lattice_points(r, finer) <= most):
            break
        step, share = finer, ctd_share(r, finer)
    return step, share


def initial_step(eta: float) -> float:
    """The first lattice: about eta (the twins' errors are second order, or first order with small
    weights once the largest Laplace group is aligned); refined only if the width says so."""
    return 2.0 ** min(-6, math.floor(math.log2(eta)))


def aligned_step(r: Twins, target: float) -> float:
    """A step <= target (1 + 1e-9) on which the Laplace groups' a_i (lower side) are whole multiples where
    that costs little: an a_i off the lattice costs the lower twin less than half a step of it
    (kernels.laplace_lower), so the largest group (mult * a) is made exact, together with the
    groups whose a is a small rational multiple p/q of it, heaviest first, as long as the step
    stays above target / 2 (edited plans have many groups at ratios like 21/20 of each other; all
    of them aligned, the lattice was up to 40 times finer than target). Those multiples hold only
    to ALIGN_TOLERANCE (an a one ulp below p/q a0 is common, one rounded to 9 digits too), so the
    lattice is laid under the smallest a_i q/p: every aligned a_i then loses at most about
    2 ALIGN_TOLERANCE of itself instead of a whole step. Any step is
    valid; this one only makes the bracket tighter."""
    a_lo, weight = _alignable(r, target)
    if a_lo.size == 0:
        return target
    g = int(np.argmax(weight))
    if a_lo[g] == 0.0:    # every a_lo underflowed (a = 5e-324): no loss in the lower twin to align
        return target
    # only the heaviest groups are looked at: one of 10^5 distinct releases is not worth a lattice
    heaviest = np.argsort(-weight, kind="stable")[:ALIGN_GROUPS]
    ratios = np.zeros(a_lo.size)
    ratios[heaviest] = a_lo[heaviest] / float(a_lo[g])
    dens = np.zeros(a_lo.size, dtype=np.int64)
    dens[heaviest] = _small_denominators(ratios[heaviest])
    q, base, step = 1, None, target
    for i in heaviest.tolist():
        den = int(dens[i])
        num = round(float(ratios[i]) * den)
        if not (den and num) or math.lcm(q, den) > 4096:    # (num = 0: an a_lo that underflowed to 0)
            continue
        q_i = math.lcm(q, den)
        # base <= a_i den / num for every aligned group (exact: the integers (p, q) of p / q, compared
        # and divided as Fraction would, a few times faster), so n steps of base / n fit below each
        a_n, a_d = float(a_lo[i]).as_integer_ratio()
        base_i = (a_n * den, a_d * num)
        base_i = base_i if base is None or base_i[0] * base[1] < base[0] * base_i[1] else base
        # (a ratio within 1e-9 above a whole number counts as that number: an allocation scales
        # every release and the target with them, so the ratio sits on a whole number, and its
        # rounding must not flip n between edits - the total then jumped by ~1e-7 and the
        # allocation hunted that jump for a dozen compositions)
        n = q_i * max(1, math.ceil(base_i[0] / base_i[1] / (target * q_i) * (1 - 1e-9)))
        step_i = base_i[0] / (base_i[1] * n)        # (int / int: correctly rounded)
        s_n, s_d = step_i.as_integer_ratio()
        while s_n * n * base_i[1] > base_i[0] * s_d:
            step_i = math.nextafter(step_i, 0.0)
            s_n, s_d = step_i.as_integer_ratio()
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


def _small_denominators(ratios: np.ndarray) -> np.ndarray:
    """Per ratio, the least q <= 64 with q * ratio within ALIGN_TOLERANCE (relative) of a whole number
    (0: none).
    (The float ratios are within 2.3e-16 of the exact ones; being near a tolerance edge only
    changes how tight the bracket is, never whether it is valid.)"""
    q = np.arange(1, 65, dtype=float)
    scaled = ratios[:, None] * q[None, :]
    close = np.abs(scaled - np.rint(scaled)) <= ALIGN_TOLERANCE * scaled
    return np.where(close.any(axis=1), np.argmax(close, axis=1) + 1, 0)
