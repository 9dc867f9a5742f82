"""The composition engine: numpy + scipy only, no Qt, no files, no settings.

Public API (see README, section "engine"):
compose, compose_all, best, curve, privacy_profile, delta_for_epsilon, allocate, filter_admits,
compose_mechanisms (with Laplace, Gaussian, EpsDelta).
"""

from .allocate import Allocation, allocate
from .compose import best, compose, compose_all
from .curve import Curve, curve
from .errors import BudgetError, NotApplicable
from .filters import filter_admits
from .mechanisms import EpsDelta, Gaussian, Laplace, compose_mechanisms
from .profile import Profile, delta_for_epsilon, privacy_profile
from .types import Cancelled, CancelToken, Composition, ProgressCallback
from .validation import THEOREMS

__all__ = [
    "THEOREMS", "compose", "compose_all", "best", "curve", "Curve", "privacy_profile", "Profile",
    "delta_for_epsilon", "allocate", "Allocation", "filter_admits", "BudgetError", "NotApplicable",
    "Cancelled", "CancelToken", "Composition", "ProgressCallback", "compose_mechanisms", "Laplace", "Gaussian",
    "EpsDelta",
]
