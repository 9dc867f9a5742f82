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

from .. import lazy
from ..memo import forget

_HOMES = {
    "compose_mechanisms": "composition", "pld_curve": "curves", "zcdp_curve": "curves",
    **dict.fromkeys(("gaussian_delta", "gaussian_multiplier", "gaussian_multipliers"), "gaussian"),
    "gaussian_epsilon": "gaussian_inverse",
    "discrete_gaussian_sigma": "discrete_gaussian", "discrete_gaussian_sigmas": "discrete_gaussian",
    "zcdp_gaussian_sigma": "zcdp", "discrete_laplace_scale": "discrete_laplace",
    **dict.fromkeys(("DiscreteGaussian", "DiscreteLaplace", "EpsDelta", "Gaussian", "Laplace"), "objects"),
    "pld_composition": "theorems", "pld_delta": "theorems", "zcdp_composition": "theorems",
}
__all__ = [*_HOMES, "forget"]
# Imported when first read (engine/lazy.py): the model reads the Gaussian calibration alone.
__getattr__, __dir__ = lazy.exports(__name__, _HOMES)
