"""The accuracy (error, δ_i) of the statistics table's rows, computed as the table draws them.

Opening or editing a plan of thousands of statistics must not compute every row's on the GUI
thread: a row's is computed when it is first drawn, together with the rows after it that the
same paint draws (one batch of their Gaussian calibrations), with the numbers of the whole plan's
computation. A row whose statistic and δ_i an edit left as they were keeps what was computed for
it: an edit of one row computes that row again, a redistribution the rows it moved.
"""

from __future__ import annotations

from typing import Optional

from dpplanner.model import Plan, Statistic, StatisticPrivacy
from dpplanner.model.privacy import statistics_privacy
from dpplanner.model.validation import statistic_deltas

#: Rows filled a turn of the event loop each after a plan opens: a plan's first Gaussian
#: calibrations cost ~2.5 ms each on the GUI thread, so a block is a part of a screenful.
PRIVACY_BLOCK = 4

#: (statistic, its δ_i, its accuracy) under one budget, by the statistic's identity (the entry
#: holds the statistic: its id is not reused while the entry lives).
_Kept = dict[int, tuple[Statistic, float, StatisticPrivacy]]


class RowPrivacy:
    def __init__(self, plan: Plan) -> None:
        self._plan = plan
        self._budget = plan.budget
        self._kept: _Kept = {}
        self.forget(plan.statistics)

    def forget(self, rows: tuple[Statistic, ...]) -> None:
        """The plan's rows changed (``rows``: the rows now drawn): a row keeps its accuracy if its
        statistic (the same object), its δ_i and the budget are unchanged."""
        self._rows = rows
        self._all: Optional[list[StatisticPrivacy]] = None      # every row's, once asked for
        self._deltas: Optional[list[float]] = None
        budget = self._plan.budget
        # What the rows before this change had: looked up once, then dropped at the next change.
        self._before: _Kept = self._kept if budget == self._budget else {}
        self._budget = budget
        self._kept = {}

    def all(self) -> list[StatisticPrivacy]:
        """Every row's, computed once per plan change and shared with the window."""
        if self._all is None:
            self._all = self._plan.privacy_all() if len(self._plan) else []
        return self._all

    def delta(self, row: int) -> float:
        """One row's δ_i: the plan's split of δ, which needs no calibration (its accuracy's δ)."""
        return self._row_deltas()[row]

    def _row_deltas(self) -> list[float]:
        if self._deltas is None:
            self._deltas = statistic_deltas(self._plan.budget, self._rows)
        return self._deltas

    def known(self, row: int) -> bool:
        return self._all is not None or self._kept_for(row) is not None

    def row(self, row: int, through: int) -> StatisticPrivacy:
        """One row's, computed (unless kept) in one batch with the rows after it up to row
        ``through`` not known yet."""
        if self._all is not None:
            return self._all[row]
        kept = self._kept_for(row)
        if kept is None:
            self.compute(row, through)
            kept = self._kept[id(self._rows[row])][2]
        return kept

    def compute(self, first: int, through: int) -> None:
        """Every row from ``first`` to ``through`` not known yet, in one batch: then all of them
        are known, also where ``first`` was kept and a row after it not (a block filled after an
        undo whose first row is pinned: filled again at every paint, were it left unknown)."""
        if self._all is not None:
            return
        rows = self._rows
        wanted = [r for r in range(first, min(through, len(rows) - 1) + 1) if self._kept_for(r) is None]
        if not wanted:
            return
        deltas = self._row_deltas()
        computed = statistics_privacy(self._budget, [rows[r] for r in wanted], [deltas[r] for r in wanted])
        for r, privacy in zip(wanted, computed):
            self._kept[id(rows[r])] = (rows[r], deltas[r], privacy)

    def _kept_for(self, row: int) -> Optional[StatisticPrivacy]:
        stat = self._rows[row]
        entry = self._kept.get(id(stat))
        if entry is None:
            entry = self._before.get(id(stat))
            if entry is None:
                return None
            if entry[1] != self._row_deltas()[row]:
                return None
            self._kept[id(stat)] = entry
        return entry[2]
