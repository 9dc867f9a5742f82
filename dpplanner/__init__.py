"""dpplanner: plan differential-privacy budgets under every composition theorem."""

__version__ = "0.1.0"
