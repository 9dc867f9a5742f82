"""Exact checks for the adversarial suite, independent of the engine's code (mpmath).

Instead of a root, the oracle evaluates the exact delta(x) of MV Thm 1.5 (formulas.md §4.1) at the
engine's two answers: ``upper`` is a valid upper bound on OptComp iff delta(upper) <= delta_bar, and
``lower`` a valid lower bound iff lower == 0 or delta(lower) >= delta_bar (delta is continuous and
non-increasing). The numbers are the exact binary doubles given (issue 13.6).
"""

from __future__ import annotations

import itertools

import mpmath as mp

DPS = 40


def delta_bar(delta_g, deltas, mult) -> mp.mpf:
    """1 - (1 - delta_g) / prod(1 - delta_i)^m_i, without cancellation for tiny deltas."""
    with mp.workdps(DPS):
        x = mp.log1p(-mp.mpf(float(delta_g))) - mp.fsum(int(m) * mp.log1p(-mp.mpf(float(d)))
                                                        for d, m in zip(deltas, mult))
        return -mp.expm1(x)


def _rr(eps: mp.mpf):
    return 1 / (1 + mp.exp(-eps)), 1 / (1 + mp.exp(eps))


def delta_grouped(eps, mult, x) -> mp.mpf:
    """delta(x) by enumerating the counts of every group (prod (m_g + 1) terms)."""
    with mp.workdps(DPS):
        e = [mp.mpf(float(v)) for v in eps]
        pq = [_rr(v) for v in e]
        x = mp.mpf(float(x))
        total = mp.mpf(0)
        for js in itertools.product(*[range(int(m) + 1) for m in mult]):
            loss = mp.fsum((2 * j - int(m)) * v for j, m, v in zip(js, mult, e))
            if loss <= x:
                continue
            w = mp.mpf(1)
            for j, m, (p, q) in zip(js, mult, pq):
                w *= mp.binomial(int(m), j) * p ** j * q ** (int(m) - j)
            total += w * -mp.expm1(x - loss)
        return total


def delta_homogeneous(eps, k: int, x) -> mp.mpf:
    """delta(x) for k copies of RR(eps): the binomial terms above x, summed outwards from their
    largest one until the (geometrically shrinking) rest is below 1e-40 of the sum."""
    with mp.workdps(DPS):
        e, x = mp.mpf(float(eps)), mp.mpf(float(x))
        p, q = _rr(e)
        j_min = int(mp.floor((x / e + k) / 2)) + 1  # (2j - k) eps > x
        if j_min > k:
            return mp.mpf(0)
        j_min = max(j_min, 0)
        mode = min(max(int(mp.floor((k + 1) * p)), j_min), k)

        lw_mode = (mp.loggamma(k + 1) - mp.loggamma(mode + 1) - mp.loggamma(k - mode + 1)
                   + mode * mp.log(p) + (k - mode) * mp.log(q))
        w_mode = mp.exp(lw_mode)
        total = w_mode * -mp.expm1(x - (2 * mode - k) * e)
        ratio = p / q
        for direction, stop in ((1, k + 1), (-1, j_min - 1)):
            j, w, small = mode, w_mode, 0
            while j + direction != stop:
                # binomial weights by their ratio: w_{j+1} = w_j (k - j) / (j + 1) p / q
                w = w * (k - j) / (j + 1) * ratio if direction > 0 else w * j / (k - j + 1) / ratio
                j += direction
                t = w * -mp.expm1(x - (2 * j - k) * e)
                total += t
                small = small + 1 if t < total * mp.mpf("1e-32") else 0
                if small >= 20:  # past the mode the ratio of terms keeps falling: the rest is tiny
                    break
        return total
