"""The plan document behind the window and the command line (no Qt here).

A ``Plan`` holds a ``Budget`` (global epsilon/delta, delta split, confidence, engine eta, the
theorem redistribution targets, neighbouring relation, dataset/population sizes, reserve) and an
ordered tuple of immutable ``Statistic`` values. Every change goes through a Plan method that
validates first (``PlanError`` and nothing changed on failure) and then notifies subscribers with a
``PlanEvent``. Accuracy formulas live in ``accuracy``, files in ``files``/``csvio``/``report``.
"""

from .accuracy import Accuracy, Sensitivity, quantile_bins, sensitivity
from .engine_inputs import AllocationRequest, CompositionInputs
from .plan import Plan, PlanEvent, PlanSnapshot
from .privacy import BudgetBalance, StatisticPrivacy
from .statistic import (CUSTOM_TIER, KIND_FIELDS, SENSITIVITY_TIERS, TIERS_BY_KEY, Budget, Kind,
                        Mechanism, Neighbouring, SensitivityTier, Statistic, tier_for)
from .validation import (ALLOCATION_THEOREMS, BUDGET_RULES, FIELD_RULES, FieldRule, PlanError,
                         budget_warnings, validate_budget, validate_statistic)

__all__ = [
    "Accuracy", "AllocationRequest", "ALLOCATION_THEOREMS", "Budget", "BudgetBalance", "BUDGET_RULES",
    "CompositionInputs", "CUSTOM_TIER", "FIELD_RULES", "FieldRule", "Kind",
    "KIND_FIELDS", "Mechanism", "Neighbouring", "Plan", "PlanError", "PlanEvent", "PlanSnapshot",
    "quantile_bins", "SENSITIVITY_TIERS", "Sensitivity", "SensitivityTier", "sensitivity",
    "Statistic", "StatisticPrivacy", "TIERS_BY_KEY", "tier_for", "budget_warnings",
    "validate_budget", "validate_statistic",
]
