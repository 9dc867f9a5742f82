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

from ..memo import Memo
from ..optimal.atoms import U
from ..optimal.lattice import LatticePMF
from ..validation import parse_tag
from .discrete_gaussian import discrete_gaussian_sigma, discrete_gaussian_sigmas
from .discrete_gaussian_kernel import dg_ctd_lower, dg_kernel
from .discrete_laplace import SPARSE_ATOMS, discrete_laplace_scales, dl_ctd_lower, dl_kernel, epsilon_bounds
from .discrete_objects import DiscreteGaussian, DiscreteLaplace
from .discrete_sandwich import gaussian_twins, laplace_twins
from .zcdp import rho_pure
from .spectral import HYBRID_SHARE

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
        return float(rho_pure(self.ratio))

    def kernel(self, step: float, upper: bool, tail: float) -> LatticePMF:
        if self.kind == "laplace":
            return dl_kernel(self.param, self.shift, step, upper)
        return dg_kernel(self.param, self.shift, step, upper, tail)

    def lipschitz(self):
        """A bound on how far delta moves, at any x, from this release to the one whose CTD its
        upper kernel is (a discrete Laplace's atoms moved up by their rounding, a few ulps of
        eps: the hinge's slope is at most 1; RR at eps_up for S = 1, whose masses move by less
        than eps does); None where the upper kernel is not such a CTD (cells in closed form, the
        discrete Gaussian's truncated tails)."""
        if self.kind != "laplace" or self.shift + 1 > SPARSE_ATOMS:
            return None
        return 64 * U * epsilon_bounds(self.param, self.shift)[0]

    def ctd_lower(self, step: float, tail: float):
        """The connect-the-dots pmf of a release this one dominates, for the hybrid lower bound
        (hybrid.py: a Jensen gap of at most gap_bound(s/2, s) per unit of mass), or None where
        there is none here (the lower twin of ``kernel`` is used)."""
        if self.kind == "laplace":
            return dl_ctd_lower(self.param, self.shift, step)
        return dg_ctd_lower(self.param, self.shift, step, tail)


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
    """The discrete releases of these plan rows, each row's noise parameter calibrated for its
    whole (eps_i, delta_i) (equal rows once, all Laplace rows in one pass and the one-cell Gaussian
    ones together); a row of C cells ("*C", cells.py) gives its per-cell release (the theorems
    compose it C times): discrete Laplace t = discrete_laplace_scale(eps_i, C S), discrete
    Gaussian sigma = discrete_gaussian_sigma(eps_i, delta_i, S, cells=C)."""
    rows = [(e, d, *parse_tag(t)) for e, d, t in
            zip(np.asarray(eps).tolist(), np.asarray(delta).tolist(), list(mech))]
    lap = sorted({(e, s, c) for e, _d, kind, s, c in rows if kind == "discrete-laplace"})
    gau = sorted({(e, d, s) for e, d, kind, s, c in rows if kind != "discrete-laplace" and c == 1})
    known = {}
    if lap:
        t = discrete_laplace_scales([e for e, _, _ in lap], [s * c for _, s, c in lap])
        known.update({("discrete-laplace", e, 0.0, s, c): DiscreteRelease("laplace", float(v), s)
                      for (e, s, c), v in zip(lap, t.tolist())})
    if gau:
        sig = discrete_gaussian_sigmas(*zip(*gau))
        known.update({("discrete-gaussian", e, d, s, 1): DiscreteRelease("gaussian", float(v), s)
                      for (e, d, s), v in zip(gau, sig.tolist())})
    for e, d, kind, s, c in rows:      # Gaussian rows of C > 1 cells: through zCDP, one by one
        key = (kind, e, d, s, c)
        if kind != "discrete-laplace" and key not in known:
            known[key] = DiscreteRelease("gaussian", discrete_gaussian_sigma(e, d, s, c), s)
    return [known[(kind, e, 0.0 if kind == "discrete-laplace" else d, s, c)] for e, d, kind, s, c in rows]


#: Per-query discrete releases of a curve's queries, keyed by them (pld's curve and zcdp's ask).
_ROWS = Memo(2)


def discrete_rows(eps, delta, mech) -> tuple:
    """Per query (expanded, as a curve spells them out), its DiscreteRelease per cell (None for
    the other kinds and for eps_i = 0)."""
    eps, delta, mech = np.asarray(eps, dtype=float), np.asarray(delta, dtype=float), np.asarray(mech)
    key = (eps.tobytes(), delta.tobytes(), tuple(mech.tolist()))
    known = _ROWS.get(key)
    if known is None:
        known = _rows(eps, delta, mech)
        _ROWS.put(key, known)
    return known


def _rows(eps, delta, mech) -> tuple:
    disc = discrete_mask(mech, eps)
    out: list = [None] * disc.size
    if disc.any():
        idx = np.flatnonzero(disc)
        # repeated rows spelled out: calibrate each distinct (eps, delta, tag) once
        keys = list(zip(eps[idx].tolist(), delta[idx].tolist(), mech[idx].tolist()))
        uniq = list(dict.fromkeys(keys))
        known = dict(zip(uniq, from_rows(*zip(*uniq))))
        for i, k in zip(idx.tolist(), keys):
            out[i] = known[k]
    return tuple(out)


def grouped(releases, mult) -> tuple[tuple, tuple]:
    """Equal releases merged, in sorted order: (releases, multiplicities). Counted by their fields
    as a plain tuple, which is what their equality and order compare (the dataclass's own hash
    and comparisons build that tuple at every call: 100 releases took ~0.45 ms, now ~0.17)."""
    counts: dict = {}
    first: dict = {}
    for r, k in zip(releases, mult):
        key = (r.kind, r.param, r.shift)
        if key in counts:
            counts[key] += int(k)
        else:
            counts[key], first[key] = int(k), r
    keys = sorted(counts)
    return tuple(first[k] for k in keys), tuple(counts[k] for k in keys)


#: What continuous twins may add to a bracket's width (a share of eta) and to delta (a share of
#: delta_bar, as tau): within these, the near-continuous releases are composed as their twins.
TWIN_WIDTH_SHARE = 1 / 32
TWIN_DELTA_SHARE = 2.0 ** -10


@dataclass(frozen=True)
class ContinuousTwins:
    """Discrete releases taken over by continuous twins (discrete_sandwich.py): Laplace a_hi (upper
    twin) and a_lo (lower) with multiplicities; Gaussian multipliers m_up (upper twin, less noise)
    and m_lo with multiplicities; the slacks tau_up / tau_lo (already multiplied out); and the
    releases that stay discrete."""

    lap_hi: tuple = ()
    lap_lo: tuple = ()
    lap_mult: tuple = ()
    gauss_up: tuple = ()
    gauss_lo: tuple = ()
    gauss_mult: tuple = ()
    tau_up: float = 0.0
    tau_lo: float = 0.0
    rest: tuple = ()
    rest_mult: tuple = ()


def choose_twins(releases, mult, delta_bar: float, eta: float, beside=(0.0, 0.0)) -> dict:
    """{index: twin} of the releases that compose as their continuous twins: those whose twins
    cost least, as long as all of them together add at most TWIN_WIDTH_SHARE eta to the bracket's
    width (each: its multiplicity times a_hi - a_lo, or mu_hi - mu_lo) and their slacks at most
    TWIN_DELTA_SHARE delta_bar. A twin is (a_lo, a_hi) for a discrete Laplace, a GaussianTwins for a
    discrete Gaussian. None where delta_bar = 0 (pure plans keep their exact sum). ``beside``:
    (sum of mu^2, sum of eps^2) of the continuous Gaussian and of the Laplace and (eps, delta)
    releases composed with them, which decide whether a rung takes the hybrid bound (below)."""
    if not (delta_bar > 0 and eta > 0):
        return {}
    # with the hybrid bound a rung may read its lower end from the upper twins less a Lipschitz
    # charge on delta (spectral.rung), half of a_hi - a_lo per Laplace twin (~1 / 8t^2): counted
    # with the slacks there, so that a discrete Laplace of scale t ~ 200 (~3e-6 at delta_bar 1e-6)
    # stays discrete (its own charge is a few ulps). (Whether the bound is taken is estimated with
    # every discrete Gaussian that has twins counted as a Gaussian.)
    mu2 = beside[0] + sum(k * d.ratio ** 2 for d, k in zip(releases, mult)
                          if d.kind == "gaussian" and gaussian_twins(d.param, d.shift) is not None)
    var = beside[1] + sum(k * d.variance() for d, k in zip(releases, mult)) - (mu2 - beside[0])
    hybrid = mu2 > 0 and mu2 >= HYBRID_SHARE * (var + mu2)
    lip_share = 0.5 if hybrid else 0.0
    cands = []
    for i, (d, k) in enumerate(zip(releases, mult)):
        if d.kind == "laplace":
            lo, hi = laplace_twins(d.param, d.shift)
            cands.append((k * (hi - lo), i, (lo, hi), lip_share * k * (hi - lo), lip_share * k * (hi - lo)))
        else:
            g = gaussian_twins(d.param, d.shift)
            if g is not None:
                cands.append((k * g.width, i, g, k * g.tau_up, k * g.tau_lo))
    width, ups, los, taken = 0.0, [], [], {}
    for cost, i, twin, t_up, t_lo in sorted(cands, key=lambda c: (c[0], c[1])):
        if width + cost > TWIN_WIDTH_SHARE * eta:
            break                   # (sorted by it: no later one fits either)
        if max(math.fsum(ups + [t_up]), math.fsum(los + [t_lo])) > TWIN_DELTA_SHARE * delta_bar:
            continue
        width = width + cost
        ups.append(t_up), los.append(t_lo)
        taken[i] = twin
    if taken and len(taken) == len(releases) and hybrid and (beside[1] > 0 or any(
            d.kind == "laplace" for d in releases)):
        # with no discrete release left, a rung with the hybrid bound reads its lower end from the
        # upper twins' composition less that Lipschitz charge, mu_hi - mu_lo over sqrt(2 pi) per
        # Gaussian twin. Where it exceeds the delta share (the lower end fell, the ladder climbed in
        # vain), the costliest stays discrete: the lower end is then its own composition (or a
        # discrete Laplace's charge is a few ulps: spectral.rung), and the other twins cost only
        # their width.
        lip = {i: mult[i] * (0.5 * (t[1] - t[0]) if releases[i].kind == "laplace"
                             else t.width / math.sqrt(2 * math.pi)) for i, t in taken.items()}
        if math.fsum(lip.values()) > TWIN_DELTA_SHARE * delta_bar:
            del taken[max(lip, key=lambda i: (lip[i], i))]
    return taken


def continuous_twins(releases, mult, delta_bar: float, eta: float, beside=(0.0, 0.0)) -> ContinuousTwins:
    """The releases (merged, sorted) split by choose_twins: the twins' columns and slacks, and
    the releases that stay discrete."""
    taken = choose_twins(releases, mult, delta_bar, eta, beside)
    lap = [(taken[i][0], taken[i][1], mult[i]) for i in sorted(taken) if releases[i].kind == "laplace"]
    gau = [(taken[i].m_up, taken[i].m_lo, mult[i]) for i in sorted(taken) if releases[i].kind == "gaussian"]
    rest = [i for i in range(len(releases)) if i not in taken]
    ups = [taken[i].tau_up * mult[i] for i in sorted(taken) if releases[i].kind == "gaussian"]
    los = [taken[i].tau_lo * mult[i] for i in sorted(taken) if releases[i].kind == "gaussian"]
    return ContinuousTwins(tuple(x[1] for x in lap), tuple(x[0] for x in lap), tuple(x[2] for x in lap),
                           tuple(x[0] for x in gau), tuple(x[1] for x in gau), tuple(x[2] for x in gau),
                           # (each product k tau is within an ulp, the sums correctly rounded: 8 U
                           # covers both)
                           math.fsum(ups) * (1 + 8 * U), math.fsum(los) * (1 + 8 * U),
                           tuple(releases[i] for i in rest), tuple(mult[i] for i in rest))
