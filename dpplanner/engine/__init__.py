"""The composition engine: numpy + scipy only, no Qt, no files, no settings.

Public API (documented in docs/reference/engine-api.md):
the theorem registry (REGISTRY, THEOREMS, theorem), compose, compose_all, best, curve,
privacy_profile, delta_for_epsilon, allocate, filter_admits, compose_mechanisms (with Laplace,
Gaussian, EpsDelta, DiscreteLaplace, DiscreteGaussian) and the discrete noise calibrations
discrete_laplace_scale, discrete_gaussian_sigma (with cells=C for a release of C cells; for many
one-cell releases at once, discrete_gaussian_sigmas) and zcdp_gaussian_sigma (Gaussian noise of
any dimension calibrated through zCDP).
"""

from .allocate import Allocation, allocate
from .compose import best, compose, compose_all
from .curve import Curve, curve
from .errors import BudgetError, NotApplicable
from .filters import filter_admits
from .mechanisms import (DiscreteGaussian, DiscreteLaplace, EpsDelta, Gaussian, Laplace, compose_mechanisms,
                         discrete_gaussian_sigma, discrete_gaussian_sigmas, discrete_laplace_scale,
                         zcdp_gaussian_sigma)
from .profile import Profile, delta_for_epsilon, privacy_profile
from .types import Cancelled, CancelToken, Composition, ProgressCallback
from .theorems import ALLOCATION_THEOREMS, REGISTRY, THEOREMS, Theorem, theorem
from .validation import MECHANISMS

__all__ = [
    "THEOREMS", "ALLOCATION_THEOREMS", "REGISTRY", "Theorem", "theorem", "MECHANISMS", "compose",
    "compose_all", "best", "curve", "Curve", "privacy_profile", "Profile",
    "delta_for_epsilon", "allocate", "Allocation", "filter_admits", "BudgetError", "NotApplicable",
    "Cancelled", "CancelToken", "Composition", "ProgressCallback", "compose_mechanisms", "Laplace", "Gaussian",
    "EpsDelta", "DiscreteLaplace", "DiscreteGaussian", "discrete_laplace_scale", "discrete_gaussian_sigma",
    "discrete_gaussian_sigmas", "zcdp_gaussian_sigma",
]
