"""Error bounds of each statistic at confidence 1 - beta, and the inverse (epsilon for an error).

Every bound here is a "with probability at least 1 - beta, |released - true| <= error" statement
about the noise alone (clamping to the data bounds is the data holder's job and is not counted).

Sources (formulas.md section 8):
- Laplace tail: Y ~ Lap(b) has P[|Y| >= t b] = e^{-t} (Dwork & Roth 2014, Fact 3.7), so
  |Y| <= b ln(1/beta) with probability exactly 1 - beta. For m coordinates released together the
  union bound gives max |Y_j| <= b ln(m/beta) (Dwork & Roth 2014, Thm 3.8).
- Gaussian: sigma is calibrated with the analytic Gaussian mechanism of Balle & Wang 2018 (Thm 8):
  N(0, sigma^2) on a query of L2 sensitivity D is (eps, delta)-DP iff
  Phi(D/(2 sigma) - eps sigma/D) - e^eps Phi(-D/(2 sigma) - eps sigma/D) <= delta. The classic
  sigma = D sqrt(2 ln(1.25/delta))/eps (Dwork & Roth Thm A.1) is never used: it is only valid for
  eps < 1. |N(0, sigma^2)| <= sigma Phi^{-1}(1 - beta/2) with probability exactly 1 - beta; for m
  coordinates, the union bound uses Phi^{-1}(1 - beta/(2m)).
- Secrecy of the sample (Balle, Barthe & Gaboardi 2018; the PSI tool's "functioning epsilon"): a
  mechanism that is (eps', delta')-DP on a uniform sample of n out of N people is (eps, delta)-DP
  for the population with eps' = ln(1 + (N/n)(e^eps - 1)) and delta' = (N/n) delta. The noise is
  calibrated to the functioning (eps', delta').
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Optional, Sequence

from .contributions import Contributions, contributions as derive
from .explanations import explain
from .statistic import Kind, Mechanism, Neighbouring, Statistic

@dataclass(frozen=True)
class Sensitivity:
    """How much one individual can move the released values: L1 (Laplace) and L2 (Gaussian)
    norms of the whole release, ``coordinates`` values released per group (one group when not
    grouped), measured in ``units``; ``moves``: the derivation (cells moved, each cell's move,
    contributions.py)."""

    l1: float
    l2: float
    coordinates: int
    units: str
    moves: Optional[Contributions] = None

    @property
    def groups(self) -> int:
        """g (1 when not grouped or not known)."""
        return (self.moves.groups if self.moves is not None else None) or 1


@dataclass(frozen=True)
class Accuracy:
    """The accuracy of one statistic at confidence 1 - beta.

    ``error`` bounds every released coordinate at once; ``scale`` is the Laplace b or the Gaussian
    sigma actually used; ``epsilon``/``delta`` are the functioning values the noise is calibrated to.
    """

    error: float
    scale: float
    coordinates: int
    units: str
    epsilon: float
    delta: float
    explanation: str
    cell_error: Optional[float] = None


def quantile_bins(lower: float, upper: float, granularity: float) -> int:
    """Number of grid points of a quantile/CDF statistic: ceil((upper - lower) / granularity)."""
    return max(1, math.ceil((upper - lower) / granularity - 1e-12))


def sensitivity(stat: Statistic, neighbouring: Neighbouring, dataset_size: Optional[int] = None,
                contributions: int = 1) -> Sensitivity:
    """Sensitivities of ``stat`` under the neighbouring relation (fields already validated) when
    each individual contributes at most ``contributions`` rows (the derivation, grouped statistics
    included, is in contributions.py).

    One row: count 1. Sum of values clamped to [a, b]: max(|a|, |b|) under add/remove, b - a under
    replace-one. Mean and proportion: the released value is the clamped sum divided by the public
    n (a constant, so the mechanism is defined on datasets of any size): the sum's sensitivity over
    n, i.e. max(|a|, |b|)/n under add/remove and (b - a)/n under replace-one; a proportion is the
    mean of 0/1 values, 1/n under both.
    Histogram over disjoint bins: L1 1 (add/remove) or 2 (replace-one), L2 1 or sqrt(2).
    Quantile/CDF: we assume the noisy-histogram CDF: counts of the m grid cells
    [lower + j g, lower + (j+1) g) get independent noise like a histogram (same sensitivities), and
    the CDF is their running sum (post-processing, no extra privacy cost); quantiles are read off it.
    """
    replace = neighbouring is Neighbouring.REPLACE_ONE
    kind = stat.kind
    if kind is Kind.CUSTOM:
        raise ValueError(f"statistic {stat.name!r}: a custom statistic has no accuracy formula")
    n = stat.n if stat.n is not None else dataset_size
    if kind in (Kind.MEAN, Kind.PROPORTION):
        n = _need_n(stat, n)
    moves = derive(stat, replace, contributions, n)
    if kind in (Kind.HISTOGRAM, Kind.QUANTILE):
        m = int(stat.bins) if kind is Kind.HISTOGRAM else \
            quantile_bins(float(stat.lower), float(stat.upper), float(stat.granularity))
        return Sensitivity(moves.l1, moves.l2, m, "records", moves)
    units = {Kind.COUNT: "records", Kind.PROPORTION: "proportion"}.get(kind) or _units(stat)
    return Sensitivity(moves.l1, moves.l2, 1, units, moves)


def _need_n(stat: Statistic, n: Optional[int]) -> int:
    if n is None:
        raise ValueError(f"statistic {stat.name!r} ({stat.kind.value}) needs the dataset size n: "
                         "set it on the statistic or on the plan")
    return int(n)


def _units(stat: Statistic) -> str:
    return f"units of {stat.variable}" if stat.variable else "data units"


# --- amplification by secrecy of the sample -------------------------------------------------
#
# The noise is calibrated to the functioning (eps', delta'), so overstating them would add too
# little noise: both are rounded DOWN. The float formulas below are within 8u relative of the
# exact value (u = 2^-53: expm1, log1p, log and exp are within 1 ulp = 2u, each product or
# quotient adds u, the ratio N/n arrives rounded by u, and log1p/log do not amplify a relative
# error of their argument by more than 1 at these arguments), so one factor (1 - 2^-48) = 1 - 32u
# rounds down with room to spare.
_DOWN = 1.0 - 2.0 ** -48
#: Above this the e^eps forms overflow a double; the log forms below them have no cancellation.
_LOG_FORM = 600.0


def functioning_epsilon(epsilon: float, ratio: float) -> float:
    """eps' = ln(1 + ratio (e^eps - 1)) with ratio = N/n >= 1, rounded down."""
    if ratio == 1.0:
        return epsilon
    if epsilon <= _LOG_FORM:
        return math.log1p(ratio * math.expm1(epsilon)) * _DOWN
    # 1 + r (e^eps - 1) = r e^eps (1 - (1 - 1/r) e^-eps): no overflow for any eps
    return (epsilon + math.log(ratio) + math.log1p(-(1.0 - 1.0 / ratio) * math.exp(-epsilon))) * _DOWN


def functioning_delta(delta: float, ratio: float) -> float:
    """delta' = ratio delta, rounded down (the product and the ratio are each within u)."""
    return delta if ratio == 1.0 else delta * ratio * _DOWN


def nominal_epsilon(functioning: float, ratio: float) -> float:
    """The smallest epsilon (up to a few ulps, rounded up) whose functioning_epsilon is at least
    ``functioning``: the inverse ln(1 + (e^f - 1)/ratio), in log form where e^f would overflow."""
    if ratio == 1.0:
        return functioning
    if functioning <= _LOG_FORM:
        eps = math.log1p(math.expm1(functioning) / ratio)
    else:   # 1 + (e^f - 1)/r = (e^f / r)(1 + (r - 1) e^-f); eps >= f - ln r >= 570: no cancellation
        eps = functioning - math.log(ratio) + math.log1p((ratio - 1.0) * math.exp(-functioning))
    return _round_up_until(eps, lambda e: functioning_epsilon(e, ratio) >= functioning,
                          "the nominal epsilon")


def _round_up_until(x: float, ok, what: str) -> float:
    """The first of x, x + 1 ulp, x + 3 ulps, x + 7 ulps, ... with ok(), for an ``ok`` that is
    monotone in x and an x within a relative 2^-40 of the answer.

    Why the loop is short: after j steps x has grown by (2^j - 1) ulp(x) >= (2^j - 1) 2^-53 x, so
    13 steps cover a relative 2^-40. The callers' estimates are within that: their formulas are
    within 8u of exact and the rounding-down margin above adds 32u, and the inverse of the
    functioning epsilon stretches a relative error by 1/elasticity, where the elasticity
    eps f'(eps) / f(eps) >= 1 / (1 + f) (as eps e^eps >= e^eps - 1) for f <= 160, and >= 0.8 for
    larger f (then eps >= f - ln(N/n) - 1 and N/n <= 1e13). 64 steps would mean an estimate off
    by a factor 2^11, i.e. a bug: it is reported instead of looped on.
    """
    step = math.ulp(x)
    for _ in range(64):
        if ok(x):
            return x
        x += step
        step *= 2.0
    raise ValueError(f"{what} could not be computed to double precision near {x:.17g}")


# --- Laplace ---------------------------------------------------------------------------------

def laplace_error(l1: float, epsilon: float, beta: float, coordinates: int = 1) -> float:
    """(l1/eps) ln(m/beta): the max over m Laplace(l1/eps) noises, with probability >= 1 - beta."""
    return l1 / epsilon * math.log(coordinates / beta)


def laplace_epsilon(l1: float, error: float, beta: float, coordinates: int = 1) -> float:
    return l1 * math.log(coordinates / beta) / error


@functools.lru_cache(maxsize=4096)
def laplace_prefix_factor(m: int, beta: float) -> float:
    """s with P[max_J |Y_1 + ... + Y_J| >= s b] <= beta for m iid Lap(b) noises (J = 1..m).

    Chernoff bound: E exp(u S_J / b) = (1 - u^2)^{-J} for |u| < 1, so
    P[|S_J| >= s b] <= 2 exp(-u s) (1 - u^2)^{-J}, largest at J = m; the union bound over the m
    prefixes multiplies by m. The best u solves s u^2 + 2 m u - s = 0. s is found by bisection and
    rounded up, so the returned factor always satisfies the bound.
    """
    target = math.log(beta)

    def log_tail(s: float) -> float:
        u = s / (m + math.sqrt(m * m + s * s))   # the positive root, written without cancellation
        return math.log(2.0 * m) - u * s - m * math.log1p(-u * u)

    lo, hi = 0.0, 1.0
    # log_tail(s) = ln(2m) - g(s) with g(s) = max_u u s + m ln(1 - u^2): convex, with slope u(s).
    # For s <= m, u <= 0.415 so g >= u s (1 - 1.21 m u / s) >= s^2 / (6.2 m); beyond, the slope is
    # >= 0.41. So s <= m + 2.5 L + sqrt(6.2 m L) with L = ln(2m/beta) <= 52 (beta > 1e-16) meets
    # the target: < 2^21 for m <= 1e6 cells, and the 64 doublings below are never all used.
    for _ in range(64):
        if log_tail(hi) <= target:
            break
        lo, hi = hi, hi * 2.0
    else:
        raise ValueError(f"no Laplace prefix factor found for {m} cells at beta = {beta:g}")
    for _ in range(200):
        if hi - lo <= 1e-12 * hi:
            break
        mid = 0.5 * (lo + hi)
        if log_tail(mid) > target:
            lo = mid
        else:
            hi = mid
    return hi


# --- analytic Gaussian (Balle & Wang 2018, Thm 8) ----------------------------------------------
# The calibration lives in the engine (engine/mechanisms/gaussian.py), so the sigma shown here is
# exactly sensitivity * the multiplier the engine's noise-aware accounting uses.

def _engine_gaussian():
    """engine.mechanisms.gaussian, imported at first use: numpy and scipy come with it, which a
    plan with no Gaussian noise needs nowhere in the window."""
    from ..engine.mechanisms import gaussian

    return gaussian


_NEEDS_DELTA = ("the Gaussian mechanism needs delta > 0; give the statistics a share of "
                "delta (delta split > 0) or use the Laplace mechanism")


def gaussian_delta(sigma: float, l2: float, epsilon: float) -> float:
    """The delta of N(0, sigma^2) noise at epsilon (computed in log space, rounded up)."""
    return _engine_gaussian().gaussian_delta(sigma / l2, epsilon)


def gaussian_sigma(l2: float, epsilon: float, delta: float) -> float:
    """The smallest sigma (up to 1e-14 relative, rounded up) with (epsilon, delta)-DP."""
    if not delta > 0:
        raise ValueError(_NEEDS_DELTA)
    return l2 * _engine_gaussian().gaussian_multiplier(epsilon, delta)


def calibrate_gaussians(pairs: Sequence[tuple[float, float]]) -> None:
    """Calibrate many (functioning ε, δ) pairs in one vectorised bisection; the engine remembers
    the multipliers, so ``gaussian_sigma`` on them afterwards is a lookup (same bits). A pair that
    cannot be calibrated is left to ``gaussian_sigma``, which says why."""
    good = [(e, d) for e, d in pairs if 0.0 < d < 1.0 and 0.0 < e < math.inf]
    if good:
        try:
            _engine_gaussian().gaussian_multipliers(*zip(*good))
        except ValueError:
            pass


def gaussian_epsilon(sigma: float, l2: float, delta: float, minimum: float) -> float:
    """The smallest epsilon (rounded up, at least ``minimum``) for which N(0, sigma^2) noise is
    (epsilon, delta)-DP."""
    if not delta > 0:
        raise ValueError(_NEEDS_DELTA)
    from ..engine.mechanisms.gaussian_inverse import gaussian_epsilon as engine_epsilon

    return max(minimum, engine_epsilon(sigma / l2, delta))


def gaussian_error(sigma: float, beta: float, coordinates: int = 1) -> float:
    """sigma Phi^{-1}(1 - beta/(2m)), computed from the lower tail to keep precision."""
    from scipy.special import ndtri   # here: a plan without Gaussian noise opens without scipy

    return sigma * -float(ndtri(beta / (2.0 * coordinates)))


# --- per statistic ---------------------------------------------------------------------------

def laplace_factor(stat: Statistic, beta: float, m: int) -> float:
    """error / b for Laplace noise of scale b."""
    if stat.kind is Kind.QUANTILE:
        # also valid: every |Y_j| <= b ln(m/beta) at once, so |S_J| <= m b ln(m/beta); this
        # is the tighter of the two for very few cells
        return min(laplace_prefix_factor(m, beta), m * math.log(m / beta))
    return math.log(m / beta)


def gaussian_factor(stat: Statistic, beta: float, m: int) -> float:
    """error / sigma. A CDF point is a sum of J <= m cells' noises, N(0, J sigma^2)."""
    from scipy.special import ndtri   # here: a plan without Gaussian noise opens without scipy
    z = -float(ndtri(beta / (2.0 * m)))
    return z * math.sqrt(m) if stat.kind is Kind.QUANTILE else z


def accuracy(stat: Statistic, epsilon: float, delta: float, *, confidence: float,
             neighbouring: Neighbouring, dataset_size: Optional[int] = None,
             amplification: float = 1.0, contributions: int = 1) -> Accuracy:
    """Error of ``stat`` released with budget (epsilon, delta); amplification = N/n (1: none);
    ``contributions``: c rows per individual. ``error`` holds for every coordinate of every group
    at once, ``cell_error`` for every coordinate of one group."""
    sens = sensitivity(stat, neighbouring, dataset_size, contributions)
    beta = 1.0 - confidence
    eps_f = functioning_epsilon(epsilon, amplification)
    delta_f = functioning_delta(delta, amplification)
    m, g = sens.coordinates, sens.groups
    if stat.mechanism is Mechanism.LAPLACE:
        scale = laplace_scale(sens.moves, eps_f)
        err, cell = scale * laplace_factor(stat, beta / g, m), scale * laplace_factor(stat, beta, m)
    else:
        scale = gaussian_sigma(sens.l2, eps_f, delta_f)
        err, cell = scale * gaussian_factor(stat, beta / g, m), scale * gaussian_factor(stat, beta, m)
    n = stat.n if stat.n is not None else dataset_size
    return Accuracy(err, scale, sens.coordinates, sens.units, eps_f, delta_f,
                    explain(stat, err, confidence, sens, n, cell), cell)


def epsilon_for_error(stat: Statistic, error: float, delta: float, *, confidence: float,
                      neighbouring: Neighbouring, dataset_size: Optional[int] = None,
                      amplification: float = 1.0, minimum: float = 1e-9, contributions: int = 1) -> float:
    """The epsilon a statistic needs so that its error at confidence 1 - beta is <= ``error``
    (for a grouped statistic: one group's error, ``Accuracy.cell_error``: a target error is one
    per cell, the error the table's Error column shows for it)."""
    if not (error > 0 and math.isfinite(error)):
        raise ValueError(f"statistic {stat.name!r}: target error {error!r} is not allowed; it must "
                         "be a finite number > 0")
    sens = sensitivity(stat, neighbouring, dataset_size, contributions)
    beta = 1.0 - confidence
    m = sens.coordinates
    if stat.mechanism is Mechanism.LAPLACE:
        factor = laplace_factor(stat, beta, m)

        def forward(e: float) -> float:
            return laplace_scale(sens.moves, e) * factor

        if forward(functioning_epsilon(minimum, amplification)) <= error:
            return minimum   # the smallest epsilon offered meets the target (so no tiny eps_f)
        eps_f = laplace_scale(sens.moves, 1.0) * factor / error
        # round up so that the forward error never exceeds the target (a few roundings each way)
        eps_f = _round_up_until(eps_f, lambda e: forward(e) <= error, "epsilon")
    else:
        sigma = error / gaussian_factor(stat, beta, m)
        eps_f = gaussian_epsilon(sigma, sens.l2, functioning_delta(delta, amplification), minimum)
    return max(minimum, nominal_epsilon(eps_f, amplification))


def laplace_scale(moves: Contributions, epsilon: float) -> float:
    """The Laplace b a release of budget ``epsilon`` adds to each number (contributions.py):
    C cells composed one by one (no slack): b = cell L1 / (epsilon / C), the same division the
    engine makes for a "*C" release, rounded up when a cell is a vector (its pure epsilon, cell
    L1 / b, must then be at most epsilon / C exactly); otherwise the whole release's L1 over
    epsilon, rounded up. One cell of one number: b = L1 / epsilon, as for any Laplace release."""
    if moves.cells == 1 and moves.scalar:
        return moves.l1 / epsilon
    if moves.cells_exact:
        b = moves.cell_l1 / (epsilon / moves.cells)
        return b if moves.scalar else math.nextafter(b, math.inf)
    return math.nextafter(moves.l1 / epsilon, math.inf)


def laplace_tag(moves: Contributions) -> str:
    """The engine tag of a continuous Laplace release (see laplace_scale): its cells' Laplace
    noise, or pure (epsilon / C) cells, or one pure release."""
    if not moves.cells_exact:
        return "eps-delta"
    base = "laplace" if moves.scalar else "eps-delta"
    return base if moves.cells == 1 else f"{base}*{moves.cells}"
