"""The composition engine: numpy + scipy only, no Qt, no files, no settings.

Public API (documented in docs/reference/engine-api.md):
the theorem registry (REGISTRY, THEOREMS, theorem), compose, compose_all, best, curve,
privacy_profile, delta_for_epsilon, allocate, filter_admits, compose_mechanisms (with Laplace,
Gaussian, EpsDelta, DiscreteLaplace, DiscreteGaussian) and the discrete noise calibrations
discrete_laplace_scale, discrete_gaussian_sigma (with cells=C for a release of C cells; for many
one-cell releases at once, discrete_gaussian_sigmas) and zcdp_gaussian_sigma (Gaussian noise of
any dimension calibrated through zCDP).

Each name is imported from its module when first read (lazy.py): ``from dpplanner.engine import
CancelToken`` does not import scipy or a single theorem.
"""

from . import lazy

_HOMES = {
    "Allocation": "allocate", "allocate": "allocate",
    "best": "compose", "compose": "compose", "compose_all": "compose",
    "Curve": "curve", "curve": "curve",
    "BudgetError": "errors", "NotApplicable": "errors",
    "filter_admits": "filters",
    **dict.fromkeys(("DiscreteGaussian", "DiscreteLaplace", "EpsDelta", "Gaussian", "Laplace",
                     "compose_mechanisms", "discrete_gaussian_sigma", "discrete_gaussian_sigmas",
                     "discrete_laplace_scale", "zcdp_gaussian_sigma"), "mechanisms"),
    "Profile": "profile", "delta_for_epsilon": "profile", "privacy_profile": "profile",
    "Cancelled": "types", "CancelToken": "types", "Composition": "types", "ProgressCallback": "types",
    "ALLOCATION_THEOREMS": "theorems", "REGISTRY": "theorems", "THEOREMS": "theorems",
    "Theorem": "theorems", "theorem": "theorems",
    "MECHANISMS": "validation",
}

__all__ = list(_HOMES)

__getattr__, __dir__ = lazy.exports(__name__, _HOMES)
lazy.keep_functions(__name__, _HOMES)
