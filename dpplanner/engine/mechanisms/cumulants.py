"""The discrete kinds' share of the cumulant generating function that places a rung's tilt
(saddle.saddle_tilt): their kernels on one lattice laid out once as one table, so each Newton step
costs a few numpy calls however many kinds there are (it cost a dozen per kind: ~1/3 of a
psi-survey composition with OpenDP noise). Only a guide to the tilt (any tilt is sound): no
rounding control."""

from __future__ import annotations

import numpy as np


class KernelCumulants:
    """theta -> (K(theta), K'(theta), K''(theta)) of the sum of the losses of ``kernels``
    ((LatticePMF, multiplicity) pairs): each kernel's log-moment, tilted mean and variance, times
    its multiplicity."""

    def __init__(self, kernels) -> None:
        ys, ps, mult = [], [], []
        for k, n in kernels:
            keep = k.p > 0
            if keep.any():      # (a kernel without mass is refused when it is tilted)
                ys.append((k.offset + k.step * (k.start + np.arange(k.p.size, dtype=float)))[keep])
                ps.append(k.p[keep])
                mult.append(n)
        sizes = np.array([y.size for y in ys], dtype=np.int64)
        self.y = np.concatenate(ys) if ys else np.zeros(0)
        self.p = np.concatenate(ps) if ps else np.zeros(0)
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.seg = np.repeat(np.arange(sizes.size), sizes)
        self.mult = np.array(mult, dtype=float)

    def __call__(self, theta: float) -> tuple[float, float, float]:
        if not self.y.size:
            return 0.0, 0.0, 0.0
        e = theta * self.y
        top = np.maximum.reduceat(e, self.starts)
        with np.errstate(under="ignore"):
            w = self.p * np.exp(e - top[self.seg])
        total = np.add.reduceat(w, self.starts)
        mean = np.add.reduceat(w * self.y, self.starts) / total
        var = np.add.reduceat(w * (self.y - mean[self.seg]) ** 2, self.starts) / total
        return (float(np.sum(self.mult * (np.log(total) + top))), float(np.sum(self.mult * mean)),
                float(np.sum(self.mult * var)))
