"""A certified second-order lower bound from the connect-the-dots composition, smoothed by a Gaussian.

The upper twin of a Laplace or RR release is its connect-the-dots (CTD) pmf C: each lattice cell
[g, g + s] keeps its mass and its E[e^-Y] on its two ends. Replace the true releases T_j by their
twins one at a time (a hybrid argument, as in optimal/split.py). Given the sum W_j of every other
loss, release j's contribution to delta(x) = E[(1 - e^{x - L})^+] is E[(1 - e^{Y* - Y})^+] with
Y* = x - W_j - offset_j, a convex function of u = e^-Y; the CTD split raises it by a Jensen gap
that vanishes unless Y* lies inside a cell (g, g + s), and is at most, per unit of mass at g + v,

    G(v) = (1 - e^-v)(1 - e^{v - s}) / (1 - e^-s) <= v (s - v) e^{s/2} / s    (the kink at Y* = g + v;
                                                   1 - e^-s >= s e^{-s/2} as 2 sinh(s/2) >= s).

So delta_C(x) - delta_T(x) <= sum_j sum_cells Gamma_c P(W_j in (t_c, t_c + s)), t_c = x - off_j - g - s,
with Gamma_c the cell's mass-weighted gap. When the releases include Gaussians (all of them one
N(mu^2/2, mu^2), never discretised), W_j = G + B_j and the density of W_j at w is at most
e^{-theta w} M_G(theta) M_B(theta) / (mu sqrt(2 pi)) for every theta >= 0 (the tilted Gaussian's
density is at most 1 / (mu sqrt(2 pi))). The MGF of B_j is at most that of the twins (e^{theta Y}
= u^-theta is convex in u, and CTD is a spread of u): M_W_j <= M_all / M_C_j. Hence

    delta_T(x) >= delta_C(x) - s e^{-theta x} M_all(theta) / (mu sqrt(2 pi)) sum_j R_j(theta),
    R_j = e^{theta s} sum_cells Gamma_c e^{theta g_c} / E_C[e^{theta Y_j}],

second order in s (Gamma ~ s^2 per cell of density, ~ s / 4 times an atom's mass). For the lower
side the twins are those of the lower parameters (a_lo <= 1/m, mu_lo): a post-processing of the
exact releases, so the bound holds for them too.
"""

from __future__ import annotations

import math

import numpy as np


U = 2.0 ** -53


def gap_bound(v, s: float):
    """An upper bound on G(v), the largest Jensen gap per unit of mass at g + v in a cell of width s
    (0 at the cell's ends, where mass is on the lattice; never above 1, the hinge's range); arrays
    broadcast."""
    v = np.asarray(v, dtype=float)
    inside = (v > 0.0) & (v < s)
    with np.errstate(over="ignore", invalid="ignore"):
        g = np.minimum(v * (s - v) / s * math.exp(min(s / 2, 700.0)) * (1 + 8 * U), 1.0)
    return np.where(inside, g, 0.0)


def density_gap(s: float) -> float:
    """An upper bound on the integral of G over a cell: e^{s/2} s^2 / 6 (and s, as G <= 1): the gap
    of a density at most 1 over the cell (kernel_rows scales it by the density's largest value)."""
    return min(math.exp(min(s / 2, 700.0)) * s * s / 6 * (1 + 8 * U), s)


def log_hybrid_error(step: float, theta: float, mu: float, log_m_all: float, log_ratio_sum: float) -> float:
    """log of s M_all(theta) / (mu sqrt(2 pi)) sum_j R_j: the lower bound's charge at x is this
    times e^{-theta x} (mu: the smallest Gaussian's; log_ratio_sum: log sum_j n_j R_j)."""
    return (math.log(step) + log_m_all - math.log(mu) - 0.5 * math.log(2 * math.pi) + log_ratio_sum
            + 1e-12 * (abs(log_m_all) + abs(log_ratio_sum) + 10))
