"""What one statistic's budget buys (its error and noise), and how a total compares with the budget."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from . import accuracy as acc
from .opendp_noise import OpenDPNoise, error as opendp_error, opendp_noise
from .opendp_sensitivity import certified
from .statistic import Budget, Kind, Mechanism, Noise, Statistic
from .validation import amplification_ratio


@dataclass(frozen=True)
class StatisticPrivacy:
    """Budget and accuracy of one statistic as the plan sees it.

    ``epsilon``/``delta`` are what the engine composes (per release); ``functioning_*`` are what
    the noise is calibrated to (larger when amplification by sampling is on). ``error`` is None for
    custom statistics, or when the statistic cannot be released as set up (``problem`` says why).
    """

    epsilon: float
    delta: float
    functioning_epsilon: float
    functioning_delta: float
    error: Optional[float]
    scale: Optional[float]
    units: str
    explanation: str
    problem: Optional[str] = None
    #: The noise as OpenDP adds it (statistics with noise = "opendp"), else None.
    opendp: Optional[OpenDPNoise] = None


@dataclass(frozen=True)
class BudgetBalance:
    """How a total epsilon compares with what the plan may spend ((1 - reserve) * epsilon_g)."""

    spent: float
    allowed: float

    @property
    def difference(self) -> float:
        """allowed - spent: positive = left over, negative = over budget."""
        return self.allowed - self.spent

    @property
    def fraction(self) -> float:
        return self.spent / self.allowed

    @property
    def over(self) -> bool:
        return self.spent > self.allowed

    def describe(self) -> str:
        if not math.isfinite(self.spent):
            return "infeasible: the target delta cannot be met (see the theorem's reason)"
        if self.over:
            return (f"over budget by {self.spent - self.allowed:.6g} "
                    f"({self.fraction:.1%} of the spendable epsilon {self.allowed:.6g})")
        return (f"within budget: {self.fraction:.1%} of the spendable epsilon {self.allowed:.6g} "
                f"({self.difference:.6g} left)")


    def why_over(self, redistribute: bool) -> str:
        """Why a plan shown over its budget is so, and what the user can do (the window says it
        at the Spent bar). With redistribution on, every edit the window makes is redistributed
        before the plan takes it (gui/editing.py), so only ε_i as opened (a file, a recovery copy,
        an undo back to one) can be over."""
        if not self.over:
            return ""
        if redistribute:
            return ("Over budget although redistribution is on: these ε_i are as the plan was opened "
                    "and have not been redistributed since. Redistribute now (Ctrl+R) rebalances them.")
        return ("Over budget: redistribution is off, so the ε_i stay as typed. Lower them, raise the "
                "global ε, or turn redistribution on.")



def statistics_privacy(budget: Budget, stats, deltas) -> list[StatisticPrivacy]:
    """``statistic_privacy`` of every statistic, the Gaussian calibrations made in one batch (the
    window's table recomputes them all after each edit: one bisection instead of one per row)."""
    ratio = amplification_ratio(budget)
    acc.calibrate_gaussians([(acc.functioning_epsilon(s.epsilon, ratio), acc.functioning_delta(d, ratio))
                             for s, d in zip(stats, deltas)
                             if s.kind is not Kind.CUSTOM and s.mechanism is Mechanism.GAUSSIAN])
    return [statistic_privacy(budget, s, d) for s, d in zip(stats, deltas)]


def statistic_privacy(budget: Budget, stat: Statistic, delta: float) -> StatisticPrivacy:
    """Budget, functioning budget and accuracy of one statistic whose release has ``delta``."""
    ratio = amplification_ratio(budget)
    eps_f = acc.functioning_epsilon(stat.epsilon, ratio)
    if stat.kind is Kind.CUSTOM:
        return StatisticPrivacy(stat.epsilon, delta, eps_f, delta * ratio, None, None, "",
                                "Custom statistic: its accuracy depends on a mechanism dpplanner "
                                "does not model.")
    try:
        if stat.noise is Noise.OPENDP:
            return _opendp_privacy(budget, stat, delta, ratio)
        a = acc.accuracy(stat, stat.epsilon, delta, confidence=budget.confidence,
                         neighbouring=budget.neighbouring, dataset_size=budget.dataset_size,
                         amplification=ratio)
    except ValueError as exc:
        return StatisticPrivacy(stat.epsilon, delta, eps_f, delta * ratio, None, None, "", "",
                                problem=str(exc))
    return StatisticPrivacy(stat.epsilon, delta, a.epsilon, a.delta, a.error, a.scale, a.units,
                            a.explanation)


def _opendp_privacy(budget: Budget, stat: Statistic, delta: float, ratio: float) -> StatisticPrivacy:
    """The statistic released with OpenDP's noise at its functioning (eps_i, delta_i)."""
    noise = opendp_release(budget, stat, acc.functioning_epsilon(stat.epsilon, ratio),
                           acc.functioning_delta(delta, ratio))
    err = opendp_error(noise, budget.beta, cumulative=stat.kind is Kind.QUANTILE)
    sens = acc.sensitivity(stat, budget.neighbouring, budget.dataset_size)
    return StatisticPrivacy(stat.epsilon, delta, noise.epsilon, noise.delta, err,
                            noise.released_scale, sens.units,
                            acc.explain(stat, err, budget.confidence, sens,
                                        stat.n if stat.n is not None else budget.dataset_size),
                            opendp=noise)


def opendp_release(budget: Budget, stat: Statistic, eps_f: float, delta_f: float) -> OpenDPNoise:
    return opendp_noise(certified(stat, budget), stat.mechanism is Mechanism.GAUSSIAN, eps_f, delta_f)


def opendp_epsilon_for_error(budget: Budget, stat: Statistic, target: float, delta: float,
                             minimum: float) -> float:
    """The least epsilon (within 1e-9 relative, rounded up) whose OpenDP release has an error <=
    ``target``: bisection in log epsilon (the error falls as epsilon grows)."""
    ratio = amplification_ratio(budget)
    delta_f = acc.functioning_delta(delta, ratio)
    cumulative = stat.kind is Kind.QUANTILE

    def meets(eps: float) -> bool:
        try:
            noise = opendp_release(budget, stat, acc.functioning_epsilon(eps, ratio), delta_f)
        except ValueError:       # so small an epsilon that the noise is past what is accounted
            return False
        return opendp_error(noise, budget.beta, cumulative) <= target

    if meets(minimum):
        return minimum
    lo, hi = minimum, 500.0      # beyond the largest allowed epsilon, so that the caller can say
    if not meets(hi):            # how much is needed
        return math.inf
    for _ in range(200):
        if hi <= lo * (1 + 1e-9):
            break
        mid = math.sqrt(lo * hi)
        if meets(mid):
            hi = mid
        else:
            lo = mid
    return hi
