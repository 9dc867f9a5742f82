"""Issue 24 (minor): a CSV exported from a plan could not be imported into a new plan (the means
and proportions took n from the plan's dataset size, which a new plan does not have). Done as a
depositor does it: File > Export CSV, File > New, File > Import CSV."""

from __future__ import annotations

import math

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog, QMessageBox

from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.model.examples import example_path
from keys import wait_idle


def test_a_csv_exported_from_a_plan_imports_into_a_new_plan(qtbot, tmp_path, monkeypatch):
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(window, before_close_func=lambda x: x.editor.undo_stack.setClean())
    window.resize(1280, 800)
    window.document.open_example(example_path("psi-survey"), confirm=False)
    window.show()
    wait_idle(qtbot, window)
    refused = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text, *a: refused.append(text))
    source = window.plan
    needing_n = [i for i, s in enumerate(source) if s.n is None and source.privacy(i).error > 0
                 and s.kind.value in ("mean", "proportion")]
    assert needing_n                                     # the example relies on the plan's n
    names, n = [s.name for s in source], source.budget.dataset_size
    path = tmp_path / "survey.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a: (str(path), ""))
    window.export_csv_action.trigger()
    wait_idle(qtbot, window)

    window.editor.undo_stack.setClean()
    window.document.new_plan()
    assert window.plan.budget.dataset_size is None and len(window.plan) == 0
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a: (str(path), ""))
    window.import_csv_action.trigger()
    wait_idle(qtbot, window)
    assert refused == []
    plan = window.plan
    assert [s.name for s in plan] == names
    for i in needing_n:                                  # n came with the rows
        assert plan[i].n == n
        assert math.isfinite(plan.privacy(i).error)
