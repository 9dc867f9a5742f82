"""The few sums every closed-form theorem needs, for one plan or for every prefix of a plan.

The closed forms (basic, advanced, filters) only depend on these sums, so computing them once as
arrays lets a curve over k = 1..K cost O(K) instead of K recomputations. Sums are upper bounds on
the exact sums; the log-survival sum is a lower bound (it only makes delta_bar smaller). The sums
of eps and delta are also kept exactly (in units of 2^-1074, see ``exact``) for exact comparisons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .delta import log_survival, log_survival_prefix
from .exact import exact_cumsum, exact_total, fits, floats_up, room_down
from .numerics import cumsum_up, round_up, tiny_up
from .validation import Releases


def eps_tanh(eps: np.ndarray) -> np.ndarray:
    """eps (e^eps - 1)/(e^eps + 1) = eps tanh(eps/2): the mean privacy loss (KL) of eps-RR (a
    product that underflows is raised, not rounded to 0: numerics.tiny_up)."""
    return tiny_up(eps * np.tanh(eps / 2.0), eps > 0)


def squares(eps: np.ndarray) -> np.ndarray:
    """eps^2 of each eps >= 0, never below the true square's rounding (numerics.tiny_up); inf
    for eps > 1e154: a valid (useless) upper bound."""
    with np.errstate(over="ignore"):
        return tiny_up(eps * eps, eps > 0)


@dataclass(frozen=True)
class Sums:
    k: np.ndarray          # number of queries (int)
    sum_eps: np.ndarray
    sum_sq: np.ndarray     # sum eps^2
    sum_tanh: np.ndarray   # sum eps tanh(eps/2)
    sum_kl_drv: np.ndarray  # sum eps (e^eps - 1): the loose KL term of DRV/RRUV (inf if eps > 700)
    max_eps: np.ndarray
    max_delta: np.ndarray
    sum_delta: np.ndarray
    log_surv: np.ndarray   # sum log(1 - delta), rounded down
    sum_eps_exact: list       # exact sums of the binary doubles (see ``exact``)
    sum_delta_exact: list
    _rooms: dict = field(default_factory=dict, compare=False, repr=False)    # delta_g -> delta_room

    def delta_fits(self, bound: float, half: bool = False) -> np.ndarray:
        """sum delta_i <= bound (or bound / 2), exactly for the binary doubles."""
        return fits(self.sum_delta_exact, bound, half)

    def eps_fits(self, bound: float) -> np.ndarray:
        """sum eps_i <= bound, exactly for the binary doubles."""
        return fits(self.sum_eps_exact, bound)

    def delta_room(self, delta_g: float) -> np.ndarray:
        """delta_g - sum delta_i, exact and rounded DOWN (<= 0: no room). Read-only: computed once
        per delta_g (~0.1 ms for a curve's 100 prefixes) for the several bounds that ask for it
        (advanced's Steinke, the generic zCDP cap, the filters)."""
        room = self._rooms.get(delta_g)
        if room is None:
            room = self._rooms[delta_g] = room_down(delta_g, self.sum_delta_exact)
            room.flags.writeable = False
        return room


def _drv_terms(eps: np.ndarray) -> np.ndarray:
    out = np.full(eps.shape, np.inf)
    small = eps <= 700.0  # beyond this e^eps overflows; the term is astronomically large anyway
    out[small] = tiny_up(eps[small] * np.expm1(eps[small]), eps[small] > 0)
    return out


def plan_sums(plan: Releases) -> Sums:
    m = plan.mult.astype(float)
    e, d = plan.eps, plan.delta

    def up(terms):  # non-negative terms, each a few ulps off: fsum is exact, round_up covers the rest
        try:
            with np.errstate(over="ignore"):
                return np.array([round_up(math.fsum((m * terms).tolist()))])
        except OverflowError:  # finite terms whose sum exceeds the largest double
            return np.array([math.inf])

    eps_ex, delta_ex = [exact_total(e, plan.mult)], [exact_total(d, plan.mult)]
    return Sums(
        k=np.array([plan.k]),
        sum_eps=floats_up(eps_ex), sum_sq=up(squares(e)), sum_tanh=up(eps_tanh(e)), sum_kl_drv=up(_drv_terms(e)),
        max_eps=np.array([e.max()]), max_delta=np.array([d.max()]), sum_delta=floats_up(delta_ex),
        log_surv=np.array([log_survival(d, plan.mult)]), sum_eps_exact=eps_ex, sum_delta_exact=delta_ex,
    )


def prefix_sums(eps_seq: np.ndarray, delta_seq: np.ndarray, ks: np.ndarray) -> Sums:
    """Sums of the first ks[j] queries of the expanded sequence (ks are 1-based counts)."""
    idx = np.asarray(ks, dtype=np.int64) - 1

    def pick(arr):
        return arr[idx]

    eps_all, delta_all = exact_cumsum(eps_seq), exact_cumsum(delta_seq)
    eps_ex = [eps_all[i] for i in idx.tolist()]
    delta_ex = [delta_all[i] for i in idx.tolist()]
    return Sums(
        k=np.asarray(ks, dtype=np.int64),
        sum_eps=floats_up(eps_ex), sum_sq=pick(cumsum_up(squares(eps_seq))),
        sum_tanh=pick(cumsum_up(eps_tanh(eps_seq))), sum_kl_drv=pick(cumsum_up(_drv_terms(eps_seq))),
        max_eps=pick(np.maximum.accumulate(eps_seq)), max_delta=pick(np.maximum.accumulate(delta_seq)),
        sum_delta=floats_up(delta_ex), log_surv=pick(log_survival_prefix(delta_seq)),
        sum_eps_exact=eps_ex, sum_delta_exact=delta_ex,
    )
