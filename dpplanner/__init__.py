"""dpplanner: plan differential-privacy budgets under every composition theorem."""

#: The one source of the version (pyproject.toml reads it); CHANGELOG.md has a section for it.
__version__ = "0.2.0"
