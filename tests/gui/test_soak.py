"""Soak test of the window (issue 14): hundreds of random edits racing the compute worker.

Every kind of edit the window offers, through the widgets and actions a user touches, with random
pauses of 0-30 ms so that allocation and evaluation jobs finish before, between and after the edits
that made them stale. Afterwards no exception may have escaped, the table, totals and plots must
equal a fresh computation on the final plan, and Undo back to the start must give the start
document back byte for byte. DPPLANNER_SOAK_SEEDS ("3" or "1,4,9" or "0-19") and
DPPLANNER_SOAK_EDITS replay a failure; the report of a failing run prints both and the edit log.
"""

from __future__ import annotations

import os

import pytest
import soak_run

from dpplanner.gui.editing import PlanEditor
from dpplanner.gui.results_panel import ResultsPanel


def seeds(default: str) -> list[int]:
    text = os.environ.get("DPPLANNER_SOAK_SEEDS") or default
    found: list[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        found += list(range(int(low), int(high or low) + 1))
    return found


#: Edits per seed: 100 in the default run (three seeds, under a minute), 300 in the long one.
EDITS = int(os.environ.get("DPPLANNER_SOAK_EDITS") or 0)


def soak(qtbot, qtlog, tmp_path, seed: int, edits: int) -> None:
    report = soak_run.run_soak(qtbot, tmp_path, seed, edits, qtlog)
    if report.failed:
        pytest.fail(report.describe(), pytrace=False)


@pytest.mark.parametrize("seed", seeds("0,1,3"))     # the two small starts; census in the slow run
def test_random_edits_leave_a_window_that_shows_its_plan(qtbot, qtlog, tmp_path, seed):
    soak(qtbot, qtlog, tmp_path, seed, EDITS or 100)


#: Twenty seeds of 300 edits take about 20 minutes: opt-in (DPPLANNER_SOAK_LONG=1, or name the
#: seeds), so `make test` stays well inside CI's time.
LONG_RUN = pytest.mark.skipif(not (os.environ.get("DPPLANNER_SOAK_LONG") or os.environ.get("DPPLANNER_SOAK_SEEDS")),
                              reason="the 20-seed run takes ~20 min: DPPLANNER_SOAK_LONG=1 runs it")


@pytest.mark.slow
@LONG_RUN
@pytest.mark.parametrize("seed", seeds("100-119"))
def test_random_edits_on_many_seeds(qtbot, qtlog, tmp_path, seed):
    soak(qtbot, qtlog, tmp_path, seed, EDITS or 300)


# == the harness itself: an injected fault must make it fail ========================================
def test_an_exception_escaping_a_table_edit_is_reported(qtbot, tmp_path, monkeypatch):
    def broken(self, row, error):
        raise RuntimeError("injected fault in set_target_error")

    monkeypatch.setattr(PlanEditor, "set_target_error", broken)
    report = soak_run.run_soak(qtbot, tmp_path, seed=4, edits=80)
    assert report.failed
    text = report.describe()
    assert "soak seed 4" in text and "DPPLANNER_SOAK_SEEDS=4" in text
    assert "injected fault in set_target_error" in text
    # Typed into the cell editor (Enter commits inside the key press) and through setData alike.
    assert any("in type_in_cell" in e for e in report.escaped)
    assert any("in set_cell" in e for e in report.escaped)
    assert "error :=" in text                   # the edit log is printed


def test_an_exception_in_a_budget_field_slot_is_reported(qtbot, tmp_path, monkeypatch):
    original = PlanEditor.set_budget

    def broken(self, text="Change budget", **changes):
        if "epsilon" in changes and "delta" not in changes:
            raise OverflowError("injected fault in set_budget")
        return original(self, text, **changes)

    monkeypatch.setattr(PlanEditor, "set_budget", broken)
    report = soak_run.run_soak(qtbot, tmp_path, seed=5, edits=150)
    assert any("into Qt" in e and "injected fault in set_budget" in e for e in report.escaped)


def test_stale_totals_on_screen_are_reported(qtbot, tmp_path, monkeypatch):
    """A results panel that always shows the totals before the latest (a lost update)."""
    original = ResultsPanel.set_results

    def one_behind(self, *args):
        previous = getattr(self, "_soak_previous", args)
        self._soak_previous = args
        original(self, *previous)

    monkeypatch.setattr(ResultsPanel, "set_results", one_behind)
    report = soak_run.run_soak(qtbot, tmp_path, seed=6, edits=60)
    assert not report.escaped
    assert any("totals table" in m for m in report.mismatches)


def test_an_overspending_state_is_reported(qtbot, tmp_path, monkeypatch):
    """An editor that adopts every edit without its redistribution (issue 23.1's bug, everywhere)."""
    def never_redistributes(self, pending, *, announce=False):
        self._adopt(pending.trial, pending.text)

    monkeypatch.setattr(PlanEditor, "_conclude", never_redistributes)
    report = soak_run.run_soak(qtbot, tmp_path, seed=7, edits=60)
    assert any("with redistribution on, over the spendable" in m for m in report.mismatches)
