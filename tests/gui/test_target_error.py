"""Issue 24.3 in the window, as the depositor did it: type 0.5 as mean age's error, then change the
confidence, the upper bound and n, save and reopen - the error stays 0.5 (the plan stores the
target) and the budget is still spent exactly, or an edit that cannot keep it is refused at the
statistic."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import QSettings

from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.model import files
from dpplanner.model.examples import example_path
from keys import field, open_cell, retype, show_tab, type_into, wait_idle

MEAN_AGE = 1            # psi-survey: "mean age", age in [0, 100], Laplace


@pytest.fixture
def window(qtbot, tmp_path):
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    w = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(w, before_close_func=lambda x: x.editor.undo_stack.setClean())
    w.resize(1280, 800)
    w.document.open_example(example_path("psi-survey"), confirm=False)
    w.show()
    wait_idle(qtbot, w)
    return w


def type_error_in_the_table(qtbot, window, row: int, text: str) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    editor = open_cell(window, row, "error")
    retype(editor, text)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)


def total_spent(window) -> float:
    return window.plan.total().epsilon


def test_a_typed_target_error_is_kept_through_confidence_bounds_and_n_and_a_reopen(qtbot, window,
                                                                                    tmp_path):
    plan = window.plan
    type_error_in_the_table(qtbot, window, MEAN_AGE, "0.5")
    assert plan[MEAN_AGE].target_error == 0.5 and plan[MEAN_AGE].held
    eps_at_95 = plan[MEAN_AGE].epsilon
    spendable = plan.budget.spendable_epsilon

    type_into(qtbot, field(window, "Confidence"), "99")
    wait_idle(qtbot, window)
    assert plan.budget.confidence == 0.99
    assert plan[MEAN_AGE].target_error == 0.5 and plan.privacy(MEAN_AGE).error <= 0.5
    assert plan[MEAN_AGE].epsilon > eps_at_95                   # ε_i followed the target
    assert total_spent(window) <= spendable * (1 + 1e-9)        # and the rest was rebalanced

    window.statistics_panel.select_row(MEAN_AGE)
    show_tab(window, "Statistic")
    inspector = window.statistics_panel.inspector
    type_into(qtbot, field(inspector, "Upper bound"), "120")
    wait_idle(qtbot, window)
    assert plan[MEAN_AGE].upper == 120 and plan.privacy(MEAN_AGE).error <= 0.5
    type_into(qtbot, field(inspector, "Records"), "2000")
    wait_idle(qtbot, window)
    assert plan[MEAN_AGE].n == 2000 and plan.privacy(MEAN_AGE).error <= 0.5
    assert plan.privacy(MEAN_AGE).error == pytest.approx(0.5, rel=1e-9)
    assert field(inspector, "Target error").text() == "0.5"       # the target, as typed
    assert total_spent(window) <= spendable * (1 + 1e-9)

    path = tmp_path / "survey.dpplan"
    assert window.document.save_to(path)
    assert json.loads(path.read_text())["statistics"][MEAN_AGE]["target_error"] == 0.5
    window.document.open_path(path, confirm=False)
    wait_idle(qtbot, window)
    assert window.plan[MEAN_AGE].target_error == 0.5
    type_into(qtbot, field(window, "Confidence"), "90")
    wait_idle(qtbot, window)
    assert window.plan.privacy(MEAN_AGE).error == pytest.approx(0.5, rel=1e-9)


def test_an_edit_that_would_break_the_target_is_refused_with_the_reason_at_the_field(qtbot, window):
    type_error_in_the_table(qtbot, window, MEAN_AGE, "0.15")     # ε_i ~0.8 of ε_g = 1 already
    before = window.plan.snapshot()
    type_into(qtbot, field(window, "Confidence"), "99.99")
    wait_idle(qtbot, window)
    assert window.plan.snapshot() == before
    confidence = field(window, "Confidence")
    assert confidence.text() == "99.99"
    assert "mean age" in confidence.accessibleDescription()


def test_typing_an_epsilon_ends_the_target(qtbot, window):
    type_error_in_the_table(qtbot, window, MEAN_AGE, "0.5")
    editor = open_cell(window, MEAN_AGE, "epsilon")
    retype(editor, "0.2")
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    s = window.plan[MEAN_AGE]
    assert s.epsilon == 0.2 and s.held and s.target_error is None


def test_a_version_1_file_opens_with_a_note_in_the_status_bar(qtbot, window, tmp_path):
    path = tmp_path / "old.dpplan"
    path.write_text(json.dumps({"format_version": 1, "budget": {"epsilon": 1.0, "delta": 1e-6},
                                "statistics": [{"name": "a", "kind": "count", "mechanism": "laplace", "epsilon": 0.5}]}))
    window.document.open_path(path, confirm=False)
    assert "saving writes format_version 2" in window.status.label.full_text()
    assert files.FORMAT_VERSION == 2
