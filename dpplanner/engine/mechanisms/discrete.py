"""Discrete releases as the pld bracket composes them, from objects or from tagged plan rows.

A plan row tagged "discrete-laplace[:S]" with epsilon_i adds discrete Laplace noise of scale
discrete_laplace_scale(eps_i, S); "discrete-gaussian[:S]" with (eps_i, delta_i) adds discrete
Gaussian noise of sigma discrete_gaussian_sigma(eps_i, delta_i, S) (the one home of each
calibration: the model shows and exports the same numbers). Equal releases are merged (their
multiplicities added) and kept in a fixed order, so the same plan gives the same bits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..optimal.lattice import LatticePMF
from ..validation import mechanism_kind
from .discrete_gaussian import discrete_gaussian_sigmas
from .discrete_gaussian_kernel import dg_kernel
from .discrete_laplace import discrete_laplace_scales, dl_kernel, epsilon_bounds
from .discrete_objects import DiscreteGaussian, DiscreteLaplace

#: A typical truncation point of a discrete Gaussian's kernel (in sd), for lattice size estimates.
_Z_TYPICAL = 10.0


@dataclass(frozen=True, order=True)
class DiscreteRelease:
    """kind "laplace" (param = scale t) or "gaussian" (param = sigma), integer shift S."""

    kind: str
    param: float
    shift: int

    @property
    def ratio(self) -> float:
        """The loss per unit of x: epsilon = S / t (Laplace), mu = S / sigma (Gaussian), rounded up."""
        if self.kind == "laplace":
            return epsilon_bounds(self.param, self.shift)[0]
        return math.nextafter(self.shift / self.param, math.inf)

    def pure(self, upper: bool) -> float:
        """The largest loss (its epsilon at delta 0): S / t bracketed, inf for the Gaussian."""
        if self.kind == "gaussian":
            return math.inf
        up, lo = epsilon_bounds(self.param, self.shift)
        return up if upper else lo

    def span(self) -> float:
        """About the width of the loss's support on a lattice (2 eps; 2 z mu for the Gaussian)."""
        mu = self.ratio
        return 2.0 * mu if self.kind == "laplace" else 2.0 * _Z_TYPICAL * mu

    def variance(self) -> float:
        """An upper bound on the loss's variance (eps^2; mu^2, as Var N_Z(0, sigma^2) <= sigma^2)."""
        return self.ratio ** 2

    def rho(self) -> float:
        """Its zCDP rho, rounded up: eps^2 / 2 (pure DP), S^2 / (2 sigma^2) (CKS20)."""
        r = self.ratio
        return 0.5 * r * r * (1 + 8 * 2.0 ** -53)

    def kernel(self, step: float, upper: bool, tail: float) -> LatticePMF:
        if self.kind == "laplace":
            return dl_kernel(self.param, self.shift, step, upper)
        return dg_kernel(self.param, self.shift, step, upper, tail)


def from_object(m) -> DiscreteRelease:
    if isinstance(m, DiscreteLaplace):
        return DiscreteRelease("laplace", m.scale, m.shift)
    if isinstance(m, DiscreteGaussian):
        return DiscreteRelease("gaussian", m.sigma, m.shift)
    raise TypeError(f"{m!r} is not a discrete release")


def discrete_mask(mech, eps) -> np.ndarray:
    """Which rows are discrete releases that add loss (eps_i > 0; 0 means infinite noise)."""
    mech = np.asarray(mech)
    return np.char.startswith(mech.astype(str), "discrete-") & (np.asarray(eps) > 0)


def from_rows(eps, delta, mech) -> list[DiscreteRelease]:
    """The discrete releases of these plan rows (each row's noise parameter calibrated; equal rows
    once, all Laplace rows in one pass and the Gaussian ones together)."""
    rows = list(zip(np.asarray(eps).tolist(), np.asarray(delta).tolist(), [mechanism_kind(t) for t in mech]))
    lap = sorted({(e, s) for e, _d, (kind, s) in rows if kind == "discrete-laplace"})
    gau = sorted({(e, d, s) for e, d, (kind, s) in rows if kind != "discrete-laplace"})
    known = {}
    if lap:
        t = discrete_laplace_scales([e for e, _ in lap], [s for _, s in lap])
        known.update({("discrete-laplace", e, 0.0, s): DiscreteRelease("laplace", float(v), s)
                      for (e, s), v in zip(lap, t.tolist())})
    if gau:
        sig = discrete_gaussian_sigmas(*zip(*gau))
        known.update({("discrete-gaussian", e, d, s): DiscreteRelease("gaussian", float(v), s)
                      for (e, d, s), v in zip(gau, sig.tolist())})
    return [known[(kind, e, 0.0 if kind == "discrete-laplace" else d, s)] for e, d, (kind, s) in rows]


def grouped(releases, mult) -> tuple[tuple, tuple]:
    """Equal releases merged, in sorted order: (releases, multiplicities)."""
    counts: dict = {}
    for r, k in zip(releases, mult):
        counts[r] = counts.get(r, 0) + int(k)
    keys = sorted(counts)
    return tuple(keys), tuple(counts[k] for k in keys)

