"""The window's Help shows the documentation's own pages (docs/): every Help menu entry opens a
page of the user guide, rendered from its Markdown file, so the Help and the repository page
cannot drift apart; theorem entries land on their section; links, images and the About box work."""

from __future__ import annotations

import re
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextDocument

import dpplanner
from dpplanner import help_docs
from dpplanner.engine.theorems import REGISTRY
from dpplanner.gui.help_pages import HelpWindow, about_html
from dpplanner.help_docs import BASICS, CHANGES, CONTENTS, GUIDE, THEOREMS, anchor

ROOT = Path(__file__).resolve().parents[2]


def _help_menu(window):
    return next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")


def _as_markdown_renders(path: Path) -> str:
    doc = QTextDocument()
    doc.setMarkdown(path.read_text(encoding="utf-8"))
    return doc.toPlainText()


def _anchors(browser) -> set[str]:
    names, block = set(), browser.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            names.update(it.fragment().charFormat().anchorNames())
            it += 1
        block = block.next()
    return names


def test_every_user_guide_page_is_in_the_help_menu():
    in_help = {BASICS.path, *(p.path for p in GUIDE)}
    on_disk = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs" / "guide").glob("*.md")}
    assert on_disk == in_help, "add the new page to dpplanner/help_docs.py GUIDE (it is the Help menu)"
    assert help_docs.docs_root() == ROOT


def test_each_help_entry_shows_its_docs_page_as_written(window):
    menu = _help_menu(window)
    for page in (BASICS, *GUIDE, CONTENTS, CHANGES):
        action = next(a for a in menu.actions() if a.text() == page.title)
        action.trigger()
        browser = window.help_window.browser
        shown = Path(browser.source().toLocalFile())
        assert shown == ROOT / page.path
        assert browser.toPlainText() == _as_markdown_renders(shown), f"{page.path} is not what Help shows"
        assert window.help_window.isVisible()


def test_each_theorem_entry_lands_on_its_section(window):
    submenu = next(a.menu() for a in _help_menu(window).actions() if a.menu() is not None)
    titles = [a.text() for a in submenu.actions()]
    assert titles == [t.title for t in REGISTRY]
    last = submenu.actions()[-1]
    last.trigger()
    browser = window.help_window.browser
    assert Path(browser.source().toLocalFile()) == ROOT / THEOREMS.path
    assert browser.source().fragment() == anchor(REGISTRY[-1].title) in _anchors(browser)
    assert browser.verticalScrollBar().value() > 0          # scrolled down to its section
    assert REGISTRY[-1].help.split("\n\n")[0].split()[0] in browser.toPlainText()


def test_headings_get_the_anchors_the_repository_page_gives_them(qtbot):
    help_window = HelpWindow()
    qtbot.addWidget(help_window)
    assert help_window.open(BASICS)
    assert {"choosing-the-budget", "choosing-value-bounds", "confidence"} <= _anchors(help_window.browser)
    # a link with a fragment, followed as a click would
    help_window.browser.setSource(help_window.browser.source().resolved(QUrl("budget.md#redistribution")))
    assert help_window.browser.source().fileName() == "budget.md"
    assert "redistribution" in _anchors(help_window.browser)
    help_window.browser.backward()
    assert help_window.browser.source().fileName() == "basics.md"


def test_screenshots_fit_the_page(qtbot):
    help_window = HelpWindow()
    qtbot.addWidget(help_window)
    help_window.resize(800, 600)
    help_window.show()
    assert help_window.open(GUIDE[0])
    widths, block = [], help_window.browser.document().begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isImageFormat():
                widths.append(fmt.toImageFormat().width())
            it += 1
        block = block.next()
    assert widths and all(0 < w <= help_window.browser.viewport().width() for w in widths)


def test_without_the_documentation_help_says_where_it_is(qtbot, monkeypatch):
    monkeypatch.setattr("dpplanner.gui.help_pages.docs_root", lambda: None)
    help_window = HelpWindow()
    qtbot.addWidget(help_window)
    assert not help_window.open(GUIDE[0])
    assert "not installed" in help_window.missing.text() and not help_window.missing.isHidden()


def test_about_shows_the_version():
    assert f"dpplanner {dpplanner.__version__}" in about_html()


def test_the_guide_names_every_menu_entry(window):
    """A new menu entry gets its line in the user guide (docs/guide/window.md, "Menus")."""
    guide = " ".join((ROOT / GUIDE[0].path).read_text(encoding="utf-8").split()).lower()
    for menu in (a.menu() for a in window.menuBar().actions() if a.text() != "&Help"):
        for action in menu.actions():
            if action.isSeparator():
                continue
            name = action.menu().title() if action.menu() else action.text()
            name = name.replace("&", "").rstrip("…").split(" ")[0] if name.startswith(("&Undo", "&Redo")) \
                else name.replace("&", "").rstrip("…")
            assert " ".join(name.split()).lower() in guide, f"the guide does not name the menu entry {name!r}"


def test_the_guide_writes_powers_as_superscripts_not_carets(qtbot):
    """"e^ε" read as a literal caret in Help (markdown has no powers): written e<sup>ε</sup>, which
    Help and the rendered docs show raised."""
    for page in (BASICS, *GUIDE):
        text = (ROOT / page.path).read_text(encoding="utf-8")
        prose = re.sub(r"```.*?```", "", text, flags=re.S)      # (code blocks print what they print)
        prose = re.sub(r"`[^`]*`", "", prose)
        assert "^" not in prose, f"{page.path}: {prose[prose.index('^') - 30:prose.index('^') + 10]!r}"
    doc = QTextDocument()
    doc.setMarkdown((ROOT / BASICS.path).read_text(encoding="utf-8"))
    assert "vertical-align:super" in doc.toHtml()
