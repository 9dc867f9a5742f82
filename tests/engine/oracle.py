"""Brute-force optimal composition in high precision, independent of the engine's code.

Murtagh-Vadhan Thm 1.5 (formulas.md §4.1): OptComp(eps, delta_bar) is the least x >= 0 with

    sum_{S subset [k]} max(e^{eps(S)} - e^x e^{eps(S^c)}, 0) / prod_i (1 + e^{eps_i}) <= delta_bar.

All 2^k subsets are enumerated with mpmath at 50 digits; the left side is evaluated from the
sorted subset losses with suffix sums (O(log 2^k) per x) and the root is found by bisection to
1e-30. The epsilons are taken as the exact binary values of the doubles given.
"""

from __future__ import annotations

import bisect
import itertools

import mpmath as mp

DPS = 50


class Oracle:
    def __init__(self, eps):
        mp.mp.dps = DPS
        e = [mp.mpf(float(x)) for x in eps]
        den = mp.fprod([1 + mp.exp(x) for x in e])
        rows = []
        for signs in itertools.product((0, 1), repeat=len(e)):
            s_in = mp.fsum(x for x, b in zip(e, signs) if b)
            s_out = mp.fsum(x for x, b in zip(e, signs) if not b)
            rows.append((s_in - s_out, mp.exp(s_in) / den, mp.exp(s_out) / den))
        rows.sort(key=lambda r: r[0])
        self.loss = [r[0] for r in rows]
        n = len(rows)
        self.suf_a = [mp.mpf(0)] * (n + 1)
        self.suf_b = [mp.mpf(0)] * (n + 1)
        for i in range(n - 1, -1, -1):
            self.suf_a[i] = self.suf_a[i + 1] + rows[i][1]
            self.suf_b[i] = self.suf_b[i + 1] + rows[i][2]
        self.total = mp.fsum(e)

    def delta(self, x) -> mp.mpf:
        """Left side of Thm 1.5 at total epsilon x (terms with loss > x are the positive ones)."""
        x = mp.mpf(x)
        i = bisect.bisect_right(self.loss, x)
        return self.suf_a[i] - mp.exp(x) * self.suf_b[i]

    def opt_comp(self, delta_bar) -> mp.mpf:
        mp.mp.dps = DPS
        db = mp.mpf(float(delta_bar))
        if self.delta(0) <= db:
            return mp.mpf(0)
        lo, hi = mp.mpf(0), self.total + 1
        while hi - lo > mp.mpf("1e-30"):
            mid = (lo + hi) / 2
            if self.delta(mid) <= db:
                hi = mid
            else:
                lo = mid
        return hi


def opt_comp(eps, delta_bar) -> float:
    return float(Oracle(eps).opt_comp(delta_bar))
