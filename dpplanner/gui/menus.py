"""The main window's menus and toolbar, built from the actions and panels the window owns."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMainWindow, QMessageBox, QToolButton

from dpplanner.engine.theorems import REGISTRY
from dpplanner.gui.help_pages import about_html
from dpplanner.help_docs import BASICS, CHANGES, CONTENTS, GUIDE, THEOREMS, anchor, theorem_heading
from dpplanner.model.examples import example_paths


def build_menus(window: QMainWindow) -> None:
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    file_menu.addActions([window.new_action, window.open_action])
    window.recent_menu = file_menu.addMenu("Open &Recent")
    window.recent_menu.setToolTipsVisible(True)
    window.recent_menu.aboutToShow.connect(lambda: window.document.fill_recent_menu(window.recent_menu))
    window.examples_menu = file_menu.addMenu("E&xamples")
    window.examples_menu.setToolTipsVisible(True)
    for name, path in example_paths().items():
        action = window.examples_menu.addAction(name)
        action.setToolTip(f"Open the example plan {path.name} (as an untitled copy)")
        action.triggered.connect(lambda _c=False, p=path: window.document.open_example(p))
    file_menu.addSeparator()
    file_menu.addActions([window.save_action, window.save_as_action])
    file_menu.addSeparator()
    file_menu.addAction(window.details_action)
    file_menu.addSeparator()
    file_menu.addActions([window.import_csv_action, window.export_csv_action,
                          window.export_report_action, window.export_plot_action,
                          window.export_release_action])
    file_menu.addSeparator()
    file_menu.addAction(window.quit_action)

    edit_menu = bar.addMenu("&Edit")
    edit_menu.addActions([window.undo_action, window.redo_action])
    edit_menu.addSeparator()
    add_menu = window.statistics_panel.add_menu
    add_menu.setTitle("Add &statistic")
    edit_menu.addMenu(add_menu)
    panel = window.statistics_panel
    edit_menu.addActions([panel.duplicate_action, panel.remove_action, panel.up_action,
                          panel.down_action])
    edit_menu.addSeparator()
    edit_menu.addActions([window.rebalance_action, window.cancel_action])

    view_menu = bar.addMenu("&View")
    for i, title in enumerate(("&Cost vs k", "Privacy &profile", "&Shares and errors")):
        action = view_menu.addAction(title)
        action.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
        action.setToolTip(f"Show the {title.replace('&', '').lower()} plot")
        action.triggered.connect(lambda _c=False, i=i: window.plots.setCurrentIndex(i))
    view_menu.addSeparator()
    prefix = view_menu.addAction("Plot plan &prefixes")
    prefix.triggered.connect(lambda: window.cost_plot.set_mode("prefix"))
    repeat = view_menu.addAction("Plot selected query &repeated")
    repeat.triggered.connect(lambda: window.cost_plot.set_mode("repeat"))
    view_menu.addSeparator()
    columns = view_menu.addMenu("Table &Columns")
    columns.aboutToShow.connect(lambda: window.statistics_panel.columns.fill_menu(columns))
    view_menu.addMenu(window.appearance.menu(view_menu))
    reset = view_menu.addAction("Reset &layout")
    reset.setToolTip("Put the panels back to their default sizes")
    reset.triggered.connect(window.default_layout)

    help_menu = bar.addMenu("&Help")
    help_menu.setToolTipsVisible(True)
    basics = help_menu.addAction(BASICS.title)
    basics.setToolTip("The user guide's page on ε, δ, the budget and value bounds")
    basics.triggered.connect(lambda: window.show_help(BASICS))
    guide = help_menu.addAction("&Getting started guide")
    guide.setToolTip("Show the three first steps above the budget again")
    guide.triggered.connect(window.guide.reopen)
    help_menu.addSeparator()
    for page in GUIDE:          # the user guide's pages (docs/guide), as on the repository page
        action = help_menu.addAction(page.title)
        action.setToolTip(f"The user guide's page “{page.title}”")
        action.triggered.connect(lambda _c=False, p=page: window.show_help(p))
    theorems = help_menu.addMenu("Each composition &theorem")
    theorems.setToolTipsVisible(True)
    for t in REGISTRY:          # one section of docs/guide/theorems.md per registry entry
        action = theorems.addAction(t.title)
        action.setToolTip(f"What {t.label} says and when it holds")
        action.triggered.connect(lambda _c=False, h=theorem_heading(t.title): window.show_help(THEOREMS, anchor(h)))
    help_menu.addSeparator()
    for page in (CONTENTS, CHANGES):
        action = help_menu.addAction(page.title)
        action.triggered.connect(lambda _c=False, p=page: window.show_help(p))
    about = help_menu.addAction("&About dpplanner")
    about.triggered.connect(lambda: QMessageBox.about(window, "About dpplanner", about_html()))
    for menu in (file_menu, edit_menu, view_menu):
        menu.setToolTipsVisible(True)

def build_toolbar(window: QMainWindow) -> None:
    tools = window.addToolBar("Main")
    tools.setObjectName("main-toolbar")
    tools.addActions([window.new_action, window.open_action, window.save_action])
    tools.addSeparator()
    add = QToolButton()
    add.setText("+ Statistic")
    add.setToolTip("Add a statistic: choose its kind")
    add.setMenu(window.statistics_panel.add_menu)
    add.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    tools.addWidget(add)
    tools.addActions([window.statistics_panel.duplicate_action, window.statistics_panel.remove_action])
    tools.addSeparator()
    tools.addActions([window.undo_action, window.redo_action])
