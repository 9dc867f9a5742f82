"""What a change to a plan did, for the views that follow it and for edits made on an older screen.

A view (the table, the plots) redraws from a ``PlanEvent``; an edit typed while an earlier edit
still waited for its redistribution follows its row through that edit's events (``follow_row``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence


@dataclass(frozen=True)
class PlanEvent:
    """What changed. ``kind`` is one of "reset", "inserted", "removed", "changed", "moved",
    "budget", "metadata". ``rows`` are the affected rows (after the change for inserted/changed,
    before it for removed); a move has ``source`` and ``destination``."""

    kind: str
    rows: tuple[int, ...] = ()
    source: Optional[int] = None
    destination: Optional[int] = None
    rebalanced: bool = False    # a redistribution's: its own write-back, or an edit and the one with it

    def row_after(self, row: int) -> Optional[int]:
        """Where row ``row`` of the plan before this change is after it (None: removed, or all
        rows replaced)."""
        if self.kind == "reset":
            return None
        if self.kind == "inserted":
            return row + 1 if row >= self.rows[0] else row
        if self.kind == "removed":
            return None if row == self.rows[0] else row - 1 if row > self.rows[0] else row
        if self.kind == "moved":            # taken out at source, put in at destination
            src, dst = self.source, self.destination
            if row == src:
                return dst
            return row - (src < row <= dst) + (dst <= row < src)
        return row


def follow_row(events: Sequence[PlanEvent], row: int) -> Optional[int]:
    """Where ``row`` is after ``events`` (in order); None if one of them removed it."""
    for event in events:
        if row is None:
            break
        row = event.row_after(row)
    return row


Listener = Callable[[PlanEvent], None]
