"""The screenshot suite: the window on every shipped example and on a new plan, at 1280 x 800 and
1920 x 1080, light and dark, as opened, with the statistic tab shown, after hovering the cost plot
and after a refused value, and once made narrow again after the largest size, each screen checked
as a person would (``audit``).

``tools/screenshot.py --suite FOLDER`` saves every screen as a PNG (to look at) and prints the
problems; ``tests/gui/test_screens.py`` fails on any. Both drive the real widgets: the mouse
moves over the plot, the refused value is typed into the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional

from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest

from dpplanner.gui.audit import audit

SIZES = ((1280, 800), (1920, 1080))
SCHEMES = ("light", "dark")
#: What is typed to get a refusal: a global δ of 2 (it must lie in [0, 1)).
REFUSED = ("Global delta", "2")


@dataclass
class Screen:
    plan: str
    size: tuple[int, int]
    scheme: str
    state: str
    problems: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.plan}-{self.size[0]}x{self.size[1]}-{self.scheme}-{self.state}"


def plan_names() -> list[str]:
    from dpplanner.model.examples import example_paths
    return [*example_paths(), "new plan"]


def open_plan(window, name: str) -> None:
    from dpplanner.model.examples import example_paths

    window.editor.undo_stack.setClean()
    if name == "new plan":
        window.document.new_plan()
    else:
        window.document.open_example(example_paths()[name], confirm=False)


def screens(window, settle: Callable[[], None], out: Optional[Path] = None,
            plans: Optional[list[str]] = None) -> Iterator[Screen]:
    """Every screen of the suite, audited (and saved to ``out`` as PNG if given). ``settle()``
    returns once the window has nothing left to compute and has painted."""
    for plan in plans or plan_names():
        open_plan(window, plan)
        settle()
        for size in SIZES:
            window.resize(*size)
            window.default_layout()
            settle()
            for scheme in SCHEMES:
                window.appearance.set_scheme(scheme)
                settle()
                yield from _states(window, settle, plan, size, scheme, out)
        yield _narrowed(window, settle, plan, out)


def _narrowed(window, settle, plan, out) -> Screen:
    """Back from the largest size to the smallest, as a user restores a maximised window, with
    each plot tab shown (a legend fitted to the wide tab kept its width and cut the plot off)."""
    size = SIZES[0]
    window.resize(*size)
    problems = []
    for index in (2, 1, 0):
        window.plots.setCurrentIndex(index)
        settle()
        problems += [p for p in audit(window) if p not in problems]
    s = Screen(plan, size, window.appearance.scheme(), "narrowed", problems)
    if out is not None:
        window.grab().save(str(Path(out) / f"{s.name}.png"))
    return s


def _states(window, settle, plan, size, scheme, out) -> Iterator[Screen]:
    minimum = window.minimumSizeHint().width()

    def screen(state: str, extra: list[str] = ()) -> Screen:
        s = Screen(plan, size, scheme, state, audit(window) + list(extra))
        if window.minimumSizeHint().width() > 1280:
            s.problems.append(f"the window cannot be narrower than {window.minimumSizeHint().width()} px")
        if out is not None:
            window.grab().save(str(Path(out) / f"{s.name}.png"))
        return s

    window.plots.setCurrentIndex(0)
    settle()
    yield screen("opened")
    hover(window)
    settle()
    grown = window.minimumSizeHint().width()
    yield screen("hover", [] if grown == minimum else
                 [f"hovering the plot raised the window's minimum width from {minimum} to {grown} px"])
    if len(window.plan):
        window.statistics_panel.select_row(0)
        window.plots.setCurrentWidget(window.statistics_panel.inspector)
        settle()
        yield screen("statistic")
        window.plots.setCurrentIndex(0)
    edit = next(f.edit for f in window.budget_panel.fields.values()
                if f.edit.accessibleName() == REFUSED[0])
    edit.setFocus()
    edit.selectAll()
    QTest.keyClicks(edit, REFUSED[1])
    QTest.keyClick(edit, Qt.Key.Key_Return)
    settle()
    refused = [] if edit.accessibleDescription().startswith("Not applied") else \
        [f"typing {REFUSED[1]!r} as {REFUSED[0]} was not refused at the field"]
    yield screen("refusal", refused)
    QTest.keyClick(edit, Qt.Key.Key_Escape)
    settle()


def hover(window) -> None:
    """The mouse over the middle of the cost plot's curves (the read-out fills in)."""
    plot = window.cost_plot
    (x0, x1), (y0, y1) = plot.plot_item.vb.viewRange()
    scene = plot.plot_item.vb.mapViewToScene(QPointF((x0 + x1) / 2, (y0 + y1) / 2))
    QTest.mouseMove(plot.view.viewport(), plot.view.mapFromScene(scene))
