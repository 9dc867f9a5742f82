"""Noise-aware composition (issue 10): the privacy-loss distributions of the actual releases.

``compose_mechanisms`` composes Laplace(m), Gaussian(m), EpsDelta(eps, delta), and the discrete noise
OpenDP adds, DiscreteLaplace(scale, shift) and DiscreteGaussian(sigma, shift), releases with a
certified [lower, upper] bracket on the exact epsilon (``bracket``, ``kernels``: lattice pmfs
composed with the optimal core's sound convolution and read-out; ``gaussian``: the analytic
Gaussian in closed form). ``theorems`` and ``curves`` give the registry's "pld" and "zcdp" rows
over the validated Releases; ``zcdp`` holds the zCDP accounting and the CKS20 conversion.

What "pld" assumes: each release adds exactly the noise its tag names (continuous, or discrete on
the integers: discrete.py), with parameters fixed in advance; adaptively chosen parameters need the
generic theorems.
"""

from ..memo import forget
from .composition import compose_mechanisms
from .curves import pld_curve, zcdp_curve
from .gaussian import gaussian_delta, gaussian_epsilon, gaussian_multiplier, gaussian_multipliers
from .discrete_gaussian import discrete_gaussian_sigma, discrete_gaussian_sigmas
from .zcdp import zcdp_gaussian_sigma
from .discrete_laplace import discrete_laplace_scale
from .objects import DiscreteGaussian, DiscreteLaplace, EpsDelta, Gaussian, Laplace
from .theorems import pld_composition, pld_delta, zcdp_composition

__all__ = ["compose_mechanisms", "Laplace", "Gaussian", "EpsDelta", "DiscreteLaplace", "DiscreteGaussian",
           "discrete_laplace_scale", "discrete_gaussian_sigma", "discrete_gaussian_sigmas", "zcdp_gaussian_sigma",
           "pld_composition", "zcdp_composition",
           "pld_curve", "zcdp_curve", "pld_delta", "gaussian_delta", "gaussian_epsilon",
           "gaussian_multiplier",
           "gaussian_multipliers", "forget"]

