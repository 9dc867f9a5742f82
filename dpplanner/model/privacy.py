"""What one statistic's budget buys (its error and noise), and how a total compares with the budget."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterable, Optional, Protocol

from . import accuracy as acc, display
from .contributions import Contributions, bounds
from .opendp_noise import OpenDPNoise, error as opendp_error, hold_plan, opendp_noise
from .opendp_sensitivity import certified
from .selection import Selection, selection, split
from .statistic import Budget, Kind, Mechanism, Neighbouring, Noise, Statistic
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
    #: One group's error (every coordinate of one cell at once); ``error`` holds for all groups
    #: at once. The same number when the statistic is not grouped.
    cell_error: Optional[float] = None
    #: How one individual moves the release (the derivation shown in the inspector and report).
    moves: Optional[Contributions] = None
    #: The private selection of the groups, for a statistic whose keys are not known in advance.
    selection: Optional[Selection] = None

    @property
    def shown_error(self) -> Optional[float]:
        """The error the plan shows and targets: a grouped statistic's is one group's."""
        return self.cell_error if self.cell_error is not None else self.error


@dataclass(frozen=True)
class BudgetBalance:
    """How a total epsilon compares with what the plan may spend ((1 - reserve) * epsilon_g)."""

    spent: float
    allowed: float

    @property
    def over(self) -> bool:
        return self.spent > self.allowed

    def describe(self) -> str:
        if not math.isfinite(self.spent):
            return "infeasible: the target delta cannot be met (see the theorem's reason)"
        # The amount over rounds up and the amount left down, so acting on either fits.
        share = f"{display.percent_of(self.spent, self.allowed)} of the spendable epsilon " \
                f"{display.value(self.allowed)}"
        if self.over:
            return f"over budget by {display.excess(self.spent, self.allowed)} ({share})"
        return f"within budget: {share} ({display.room(self.allowed, self.spent)} left)"

    def why_over(self, redistribute: bool) -> str:
        """Why a plan shown over its budget is so, and what the user can do (the window says it
        at the Spent bar, beside the button that fixes it). With redistribution on, every edit the
        window makes is redistributed before the plan takes it (gui/editing.py), so only ε_i as
        opened (a file, a recovery copy, an undo back to one) can be over: e.g. a plan balanced
        exactly at its budget by an earlier version, whose totals (each an upper bound within η)
        came out a hair lower."""
        if not self.over:
            return ""
        by = f"Over budget by {display.excess(self.spent, self.allowed)}"
        if redistribute:
            return (f"{by}: these ε_i are as the plan was opened and have not been redistributed "
                    "since (a plan balanced at its budget by an earlier version of dpplanner can "
                    "read a hair over now). Redistribute to fit (Ctrl+R) rebalances them.")
        return (f"{by}: redistribution is off, so the ε_i stay as typed. Lower them, raise the "
                "global ε, or Redistribute to fit (Ctrl+R) once.")


#: Statistics done between two looks at a caller's time limit (a few hundredths of a second's work).
BLOCK = 500


class TimeLimit(Protocol):
    """A caller's time limit over per-statistic work (the command line's ``LongWork``)."""

    def past(self) -> bool: ...

    def reason(self) -> str: ...

    def cut_short(self, names: Iterable[str], instead: str) -> None: ...


def statistics_privacy(budget: Budget, stats, deltas, limit: Optional[TimeLimit] = None) -> list[StatisticPrivacy]:
    """``statistic_privacy`` of every statistic, the Gaussian calibrations made in one batch per
    block (the window's table recomputes them all after each edit: one bisection instead of one
    per row). Under ``limit``: those of the blocks begun before it was past (the first always)."""
    ratio = amplification_ratio(budget)
    hold_plan(len(stats))
    out: list[StatisticPrivacy] = []
    for start in range(0, len(stats), BLOCK):
        if start and limit is not None and limit.past():
            break
        block = list(zip(stats[start:start + BLOCK], deltas[start:start + BLOCK]))
        acc.calibrate_gaussians([(acc.functioning_epsilon(s.epsilon, ratio), acc.functioning_delta(d, ratio))
                                 for s, d in block
                                 if s.kind is not Kind.CUSTOM and s.mechanism is Mechanism.GAUSSIAN])
        out += [statistic_privacy(budget, s, d) for s, d in block]
    return out


def statistic_privacy(budget: Budget, stat: Statistic, delta: float) -> StatisticPrivacy:
    """Budget, functioning budget and accuracy of one statistic whose release has ``delta``.
    A statistic that selects its groups (selection.py) spends its ``selection_share`` on that and
    the rest on its values: the error and noise are the values'."""
    ratio = amplification_ratio(budget)
    eps_f = acc.functioning_epsilon(stat.epsilon, ratio)
    if stat.kind is Kind.CUSTOM:
        return StatisticPrivacy(stat.epsilon, delta, eps_f, delta * ratio, None, None, "",
                                "Custom statistic: its accuracy depends on a mechanism dpplanner "
                                "does not model.")
    try:
        eps_v, delta_v, chosen = values_budget(budget, stat, delta, ratio)
        if stat.noise is Noise.OPENDP:
            return replace(_opendp_privacy(budget, stat, eps_v, delta_v, ratio), epsilon=stat.epsilon,
                           delta=delta, selection=chosen)
        a = acc.accuracy(stat, eps_v, delta_v, confidence=budget.confidence,
                         neighbouring=budget.neighbouring, dataset_size=budget.dataset_size,
                         amplification=ratio, contributions=budget.contributions)
        moves = acc.sensitivity(stat, budget.neighbouring, budget.dataset_size, budget.contributions).moves
    except ValueError as exc:
        return StatisticPrivacy(stat.epsilon, delta, eps_f, delta * ratio, None, None, "", "",
                                problem=str(exc))
    return StatisticPrivacy(stat.epsilon, delta, a.epsilon, a.delta, a.error, a.scale, a.units,
                            a.explanation, cell_error=a.cell_error, moves=moves, selection=chosen)


def values_budget(budget: Budget, stat: Statistic, delta: float, ratio: float):
    """(eps, delta) the values are released with, and the selection of the groups (or None)."""
    if not (stat.group_by and stat.select_groups):
        return stat.epsilon, delta, None
    gaussian = stat.mechanism is Mechanism.GAUSSIAN
    eps_v, delta_v, eps_s, delta_s = split(stat.epsilon, delta, stat.selection_share, gaussian)
    l0, _ = bounds(stat, budget.contributions)
    keys = 2 * l0 if budget.neighbouring is Neighbouring.REPLACE_ONE else l0
    chosen = selection(acc.functioning_epsilon(eps_s, ratio), acc.functioning_delta(delta_s, ratio), keys,
                       discrete=stat.noise is Noise.OPENDP)
    return eps_v, delta_v, chosen


def _opendp_privacy(budget: Budget, stat: Statistic, eps_v: float, delta_v: float,
                    ratio: float) -> StatisticPrivacy:
    """The statistic released with OpenDP's noise at its functioning (eps_i, delta_i)."""
    noise = opendp_release(budget, stat, acc.functioning_epsilon(eps_v, ratio),
                           acc.functioning_delta(delta_v, ratio))
    cumulative = stat.kind is Kind.QUANTILE
    sens = acc.sensitivity(stat, budget.neighbouring, budget.dataset_size, budget.contributions)
    err = opendp_error(noise, budget.beta, cumulative, sens.groups)
    cell = opendp_error(noise, budget.beta, cumulative) if sens.groups > 1 else err
    return StatisticPrivacy(eps_v, delta_v, noise.epsilon, noise.delta, err,
                            noise.released_scale, sens.units,
                            acc.explain(stat, err, budget.confidence, sens,
                                        stat.n if stat.n is not None else budget.dataset_size, cell),
                            opendp=noise, cell_error=cell, moves=sens.moves)


def opendp_release(budget: Budget, stat: Statistic, eps_f: float, delta_f: float) -> OpenDPNoise:
    return opendp_noise(certified(stat, budget), stat.mechanism is Mechanism.GAUSSIAN, eps_f, delta_f)


def epsilon_for_error_search(budget: Budget, stat: Statistic, target: float, delta: float,
                             minimum: float) -> float:
    """The least epsilon (within 1e-9 relative, rounded up) whose release has an error <=
    ``target`` (``statistic_privacy``'s error; for a grouped statistic one group's, its
    ``cell_error``, as ``accuracy.epsilon_for_error``):
    bisection in log epsilon (the error falls as epsilon grows). For OpenDP noise and for a
    statistic that selects its groups, where the error has no closed-form inverse."""

    def meets(eps: float) -> bool:
        p = statistic_privacy(budget, stat.replace(epsilon=eps), delta)
        # (an epsilon so small that the noise is past what is accounted has a problem: not met)
        error = p.shown_error
        return p.problem is None and error is not None and error <= target

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
