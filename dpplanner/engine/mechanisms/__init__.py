"""Noise-aware composition (issue 10): the privacy-loss distributions of the actual releases.

``compose_mechanisms`` composes Laplace(m), Gaussian(m) and EpsDelta(eps, delta) releases with a
certified [lower, upper] bracket on the exact epsilon (``bracket``, ``kernels``: lattice pmfs
composed with the optimal core's sound convolution and read-out; ``gaussian``: the analytic
Gaussian in closed form). ``theorems`` and ``curves`` give the registry's "pld" and "zcdp" rows
over the validated Releases; ``zcdp`` holds the zCDP accounting and the CKS20 conversion.

What "pld" assumes: each release adds exactly this continuous noise, with parameters fixed in
advance; discrete or snapped noise, or adaptively chosen parameters, need the generic theorems.
"""

from ..memo import forget
from .composition import compose_mechanisms
from .curves import pld_curve, zcdp_curve
from .gaussian import gaussian_delta, gaussian_epsilon, gaussian_multiplier, gaussian_multipliers
from .objects import EpsDelta, Gaussian, Laplace
from .theorems import pld_composition, pld_delta, zcdp_composition

__all__ = ["compose_mechanisms", "Laplace", "Gaussian", "EpsDelta", "pld_composition", "zcdp_composition",
           "pld_curve", "zcdp_curve", "pld_delta", "gaussian_delta", "gaussian_epsilon",
           "gaussian_multiplier",
           "gaussian_multipliers", "forget"]

