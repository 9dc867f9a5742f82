"""The Totals table's tooltips say each total's method, or why its theorem does not apply, in the
plan's words (as the report and dpplanner-cli compose do), not in the engine's."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner import engine
from dpplanner.engine import theorems
from dpplanner.model.explanations import composition_note
from keys import handle_posted_events, open_cell, retype, wait_idle


def _tooltips(panel) -> dict[str, str]:
    """Each row's tooltip, by its theorem (every cell of a row has the row's)."""
    table = panel.table
    out = {}
    for row in range(table.rowCount()):
        tips = {table.item(row, col).toolTip() for col in range(table.columnCount())}
        assert len(tips) == 1
        out[table.item(row, 0).data(Qt.ItemDataRole.UserRole)] = tips.pop()
    return out


def test_the_method_in_each_totals_tooltip_is_in_the_plans_words(qtbot, window):
    editor = open_cell(window, 1, "epsilon")
    retype(editor, "0.4")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    handle_posted_events()
    result = window.evaluation.last_result
    assert window.plan[1].epsilon == 0.4 and window.evaluation.result_is_current(result)
    tips = _tooltips(window.results_panel)
    assert set(tips) == set(result.totals)
    for name, total in result.totals.items():
        note = composition_note(window.plan, name, total)
        said = f"Method: {note}" if total.applicable and total.reason is None else note
        assert tips[name] == f"{engine.theorem(name).summary}\n\n{said}", name
    assert "Method: noise-aware (PLD): privacy losses on a lattice of step" in tips[theorems.PLD]
    assert "Method: ρ = " in tips[theorems.ZCDP]
    assert "statistic 2 ('mean b') gets ε_i = 0.4" in tips[theorems.KOV]
    methods = [tip.removeprefix(engine.theorem(name).summary) for name, tip in tips.items()]
    for engine_word in ("lattice 0.", "query", "eps=", "rho", "delta ="):
        assert all(engine_word not in method for method in methods), engine_word


def test_an_infeasible_totals_cell_gives_its_reason_in_the_plans_words(qtbot, window):
    """REVIEW18 R3: an infeasible row's cell showed the engine's reason as it came ("delta_g = 1e-06
    is too small: the queries' own deltas ..."), where its tooltip is in the plan's words."""
    from dpplanner import engine

    totals = engine.compose_all([0.1, 0.2], [1e-6, 1e-6], 1e-6, eta=1e-3)
    infeasible = [name for name, c in totals.items() if c.applicable and c.epsilon == float("inf")]
    panel = window.results_panel
    panel.set_results(totals, None)
    panel.draw_now()
    assert len(infeasible) >= 5
    for name in infeasible:
        cell = panel.text_at(name, "exact total lies in")
        assert cell == composition_note(None, name, totals[name]) and "δ_g = 1e-06" in cell, cell
        for word in ("delta", "queries", "query"):
            assert word not in cell, (word, cell)
