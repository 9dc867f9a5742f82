"""The accuracy (error, δ_i) of the statistics table's rows, computed as the table draws them.

Opening or editing a plan of thousands of statistics must not compute every row's on the GUI
thread: the rows are computed in blocks of PRIVACY_BLOCK, when one of them is first drawn, with
the numbers of the whole plan's computation (a block's Gaussians are calibrated in one batch).
"""

from __future__ import annotations

from typing import Optional

from dpplanner.model import Plan, Statistic, StatisticPrivacy
from dpplanner.model.privacy import statistics_privacy
from dpplanner.model.validation import statistic_deltas

#: Rows whose accuracy is computed together. A plan's first Gaussian calibrations cost ~2.5 ms
#: each on the GUI thread, so a block is a part of a screenful, filled a turn of the event loop
#: each after a plan opens.
PRIVACY_BLOCK = 4
#: Blocks computed in one batch when a row is first drawn after an edit (a screenful: one batch
#: of its Gaussians is ~30% cheaper than a block at a time).
SCREENFUL_BLOCKS = 8


class RowPrivacy:
    def __init__(self, plan: Plan) -> None:
        self._plan = plan
        self.forget(plan.statistics)

    def forget(self, rows: tuple[Statistic, ...]) -> None:
        """The plan's rows changed (``rows``: the rows now drawn): nothing computed holds."""
        self._rows = rows
        self._all: Optional[list[StatisticPrivacy]] = None      # every row's, once asked for
        self._blocks: dict[int, list[StatisticPrivacy]] = {}    # blocks drawn so far
        self._deltas: Optional[list[float]] = None

    def all(self) -> list[StatisticPrivacy]:
        """Every row's, computed once per plan change and shared with the window."""
        if self._all is None:
            self._all = self._plan.privacy_all() if len(self._plan) else []
        return self._all

    def known(self, row: int) -> bool:
        return self._all is not None or row // PRIVACY_BLOCK in self._blocks

    def row(self, row: int, blocks: int = SCREENFUL_BLOCKS) -> StatisticPrivacy:
        """One row's, computed with its block and the blocks after it not computed yet, up to
        ``blocks`` blocks in one batch."""
        if self._all is not None:
            return self._all[row]
        first = row // PRIVACY_BLOCK
        if first not in self._blocks:
            if self._deltas is None:
                self._deltas = statistic_deltas(self._plan.budget, self._rows)
            end = first + 1
            while (end < first + blocks and end * PRIVACY_BLOCK < len(self._rows)
                   and end not in self._blocks):
                end += 1
            part = slice(first * PRIVACY_BLOCK, end * PRIVACY_BLOCK)
            computed = statistics_privacy(self._plan.budget, self._rows[part], self._deltas[part])
            for block in range(first, end):
                start = (block - first) * PRIVACY_BLOCK
                self._blocks[block] = computed[start:start + PRIVACY_BLOCK]
        return self._blocks[first][row % PRIVACY_BLOCK]
