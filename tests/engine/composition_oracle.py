"""Independent high-precision oracle for optimal composition (MV Thm 1.5, grouped enumeration).

Used by the engine tests only; deliberately slow and simple: mpmath at 50 digits, all subsets
enumerated through group counts, the least eps_g found by bisection on the exact delta.
"""

from __future__ import annotations

import itertools

import mpmath as mp

mp.mp.dps = 50


def _groups(eps, mult=None):
    mult = [1] * len(eps) if mult is None else list(mult)
    groups: dict = {}
    for e, m in zip(eps, mult):
        key = mp.mpf(float(e))  # the exact binary double, as the engine reads it (issue 13.6)
        groups[key] = groups.get(key, 0) + int(m)
    return list(groups.items())


def opt_delta(eps, eps_g, mult=None):
    """delta_bar(eps_g) of the pure-eps composition: sup of the hockey-stick divergence."""
    groups = _groups(eps, mult)
    eg = mp.mpf(eps_g)
    total = mp.mpf(0)
    for counts in itertools.product(*[range(m + 1) for _, m in groups]):
        ins = mp.fsum(c * e for c, (e, _) in zip(counts, groups))
        outs = mp.fsum((m - c) * e for c, (e, m) in zip(counts, groups))
        term = mp.exp(ins) - mp.exp(eg + outs)
        if term > 0:
            w = mp.mpf(1)
            for c, (_, m) in zip(counts, groups):
                w *= mp.binomial(m, c)
            total += w * term
    norm = mp.mpf(1)
    for e, m in groups:
        norm *= (1 + mp.exp(e)) ** m
    return total / norm


def delta_bar(deltas, delta_g, mult=None):
    mult = [1] * len(deltas) if mult is None else list(mult)
    prod = mp.mpf(1)
    for d, m in zip(deltas, mult):
        prod *= (1 - mp.mpf(float(d))) ** int(m)
    return 1 - (1 - mp.mpf(float(delta_g))) / prod


def opt_comp(eps, deltas, delta_g, mult=None):
    """Exact OptComp((eps_i, delta_i), delta_g) to ~1e-30 (inf if infeasible)."""
    db = delta_bar(deltas, delta_g, mult)
    if db < 0:
        return mp.inf
    hi = mp.fsum(mp.mpf(float(e)) * (1 if mult is None else m)
                 for e, m in zip(eps, mult or [1] * len(eps)))
    lo = mp.mpf(0)
    if opt_delta(eps, 0, mult) <= db:
        return lo
    for _ in range(110):
        mid = (lo + hi) / 2
        if opt_delta(eps, mid, mult) <= db:
            hi = mid
        else:
            lo = mid
    return hi
