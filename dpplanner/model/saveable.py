"""Every plan the model holds can be saved: checked at the edit, not at the next save.

A plan file is at most ``MAX_FILE_BYTES`` of UTF-8 JSON within the reader's structural limits
(``jsontext``). Texts that UTF-8 cannot hold are refused field by field (``validation``); here the
whole plan's size is. A cheap upper bound of the saved size clears almost every plan (each text
character takes at most 6 bytes in JSON, each statistic's numbers and names a fixed amount); only
a plan whose bound passes the limit, or that carries unknown fields (which may hold anything), is
encoded as the writer would, compactly, and measured exactly.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Mapping, Sequence

from .fileio import MAX_FILE_BYTES, PlanFileError
from .statistic import Budget, Statistic
from .validation import PlanError

#: Bytes a statistic's saved form takes besides its texts, at most: its field names, enum words
#: and numbers (repr of a double: at most 24 characters), with the writer's indentation.
_STATISTIC_BYTES = 640
#: The same for the top level and the budget.
_PLAN_BYTES = 1024
#: A character of text in JSON: "\\uXXXX" at most.
_CHAR_BYTES = 6


def check_saveable(budget: Budget, stats: Sequence[Statistic], title: str, description: str,
                   extra: Mapping[str, Any]) -> None:
    """PlanError, saying what to shorten, if a plan file could not hold this state."""
    bound = _PLAN_BYTES + _CHAR_BYTES * (len(title) + len(description))
    carries_extra = bool(extra or budget.extra)
    for s in stats:
        bound += _STATISTIC_BYTES + _CHAR_BYTES * (len(s.name) + len(s.variable) + len(s.description))
        carries_extra = carries_extra or bool(s.extra)
    if bound <= MAX_FILE_BYTES and not carries_extra:
        return
    from . import jsontext
    from .files import plan_to_document       # (files imports the plan: not at module level)

    state = SimpleNamespace(budget=budget, statistics=stats, title=title, description=description,
                            extra=extra)
    try:
        jsontext.encode(plan_to_document(state), MAX_FILE_BYTES)
    except PlanFileError as exc:
        size, field, where = max(_texts(stats, title, description))
        long = size > 1000
        raise PlanError(f"a plan file could not hold this plan: {exc}"
                        + (f" (the longest text is {where}: {size:,} characters; shorten it)"
                           if long else ""),
                        field=field if long else None) from None


def _texts(stats: Sequence[Statistic], title: str, description: str) -> list[tuple[int, str, str]]:
    found = [(len(title), "title", "the plan's title"), (len(description), "description",
                                                         "the plan's description")]
    for i, s in enumerate(stats):
        found += [(len(getattr(s, f)), f, f"statistic {i + 1}'s {f}") for f in ("name", "variable", "description")]
    return found

