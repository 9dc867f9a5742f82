"""The few sums every closed-form theorem needs, for one plan or for every prefix of a plan.

The closed forms (basic, advanced, filters) only depend on these sums, so computing them once as
arrays lets a curve over k = 1..K cost O(K) instead of K recomputations. Sums are upper bounds on
the exact sums; the log-survival sum is a lower bound (it only makes delta_bar smaller).
"""

from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .delta import log_survival, log_survival_prefix
from .exact import exact_cumsum, fits, to_float_up
from .numerics import cumsum_up, round_up
from .validation import Plan


def eps_tanh(eps: np.ndarray) -> np.ndarray:
    """eps (e^eps - 1)/(e^eps + 1) = eps tanh(eps/2): the mean privacy loss (KL) of eps-RR."""
    return eps * np.tanh(eps / 2.0)


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
    sum_eps_dec: Optional[np.ndarray] = None    # exact decimal sums (object arrays), if known
    sum_delta_dec: Optional[np.ndarray] = None

    def delta_fits(self, bound: float, scale: decimal.Decimal = decimal.Decimal(1)) -> np.ndarray:
        """sum delta_i <= scale * bound, exactly in the user's decimals when possible."""
        return fits(self.sum_delta_dec, self.sum_delta, bound, scale)

    def eps_fits(self, bound: float) -> np.ndarray:
        """sum eps_i <= bound, exactly in the user's decimals when possible."""
        return fits(self.sum_eps_dec, self.sum_eps, bound)


def _drv_terms(eps: np.ndarray) -> np.ndarray:
    out = np.full(eps.shape, np.inf)
    small = eps <= 700.0  # beyond this e^eps overflows; the term is astronomically large anyway
    out[small] = eps[small] * np.expm1(eps[small])
    return out


def plan_sums(plan: Plan) -> Sums:
    m = plan.mult.astype(float)
    e, d = plan.eps, plan.delta

    def up(terms):  # fallback when an exact decimal sum would need more than 2000 digits
        return np.array([round_up(math.fsum((m * terms).tolist()))])

    eps_dec, delta_dec = _last(exact_cumsum(e, plan.mult)), _last(exact_cumsum(d, plan.mult))
    return Sums(
        k=np.array([plan.k]),
        sum_eps=up(e) if eps_dec is None else _floats_up(eps_dec),
        sum_sq=up(e * e), sum_tanh=up(eps_tanh(e)), sum_kl_drv=up(_drv_terms(e)),
        max_eps=np.array([e.max()]), max_delta=np.array([d.max()]),
        sum_delta=up(d) if delta_dec is None else _floats_up(delta_dec),
        log_surv=np.array([log_survival(d, plan.mult)]),
        sum_eps_dec=eps_dec, sum_delta_dec=delta_dec,
    )


def _last(sums: Optional[list]) -> Optional[np.ndarray]:
    return None if sums is None else np.array(sums[-1:], dtype=object)


def _floats_up(decs: np.ndarray) -> np.ndarray:
    return np.array([to_float_up(x) for x in decs], dtype=float)


def _pick_exact(values: np.ndarray, idx: np.ndarray) -> Optional[np.ndarray]:
    sums = exact_cumsum(values)
    return None if sums is None else np.array(sums, dtype=object)[idx]


def prefix_sums(eps_seq: np.ndarray, delta_seq: np.ndarray, ks: np.ndarray) -> Sums:
    """Sums of the first ks[j] queries of the expanded sequence (ks are 1-based counts)."""
    idx = np.asarray(ks, dtype=np.int64) - 1

    def pick(arr):
        return arr[idx]

    eps_dec, delta_dec = _pick_exact(eps_seq, idx), _pick_exact(delta_seq, idx)
    return Sums(
        k=np.asarray(ks, dtype=np.int64),
        sum_eps=pick(cumsum_up(eps_seq)) if eps_dec is None else _floats_up(eps_dec), sum_sq=pick(cumsum_up(eps_seq * eps_seq)),
        sum_tanh=pick(cumsum_up(eps_tanh(eps_seq))), sum_kl_drv=pick(cumsum_up(_drv_terms(eps_seq))),
        max_eps=pick(np.maximum.accumulate(eps_seq)), max_delta=pick(np.maximum.accumulate(delta_seq)),
        sum_delta=pick(cumsum_up(delta_seq)) if delta_dec is None else _floats_up(delta_dec),
        log_surv=pick(log_survival_prefix(delta_seq)), sum_eps_dec=eps_dec, sum_delta_dec=delta_dec,
    )
