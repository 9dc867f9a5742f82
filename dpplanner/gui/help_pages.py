"""The Help window: the documentation's Markdown pages (docs/), rendered by Qt, with their links,
images and headings working as on the repository page; and the About box."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from PySide6.QtCore import QUrl
from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPushButton, QTextBrowser,
                               QVBoxLayout, QWidget)

import dpplanner
from dpplanner.help_docs import CHANGES, CONTENTS, Page, anchor, docs_root


def about_html() -> str:
    return (f"<h3>dpplanner {dpplanner.__version__}</h3>"
            "<p>Plan differential-privacy budgets: compose (ε<sub>i</sub>, δ<sub>i</sub>) releases "
            "under every composition theorem, with a sound optimal-composition engine. Every total "
            "ε shown is a valid upper bound.</p>"
            f"<p>Help &gt; {CHANGES.title} lists what changed in each version.</p><p>MIT licence.</p>")


class DocBrowser(QTextBrowser):
    """A QTextBrowser for the docs' Markdown: headings get the anchors a repository page gives
    them, so links such as ``budget.md#the-budget`` land on their section."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setOpenExternalLinks(True)           # http(s) links open in the user's browser

    def setSource(self, url: QUrl, kind=QTextDocument.ResourceType.UnknownResource) -> None:  # noqa: N802
        if url.isLocalFile() and url.toLocalFile().endswith(".md"):
            kind = QTextDocument.ResourceType.MarkdownResource
        super().setSource(url, kind)
        self.name_headings()
        self.fit_images()
        if url.hasFragment():
            self.scrollToAnchor(url.fragment())

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.fit_images()

    def fit_images(self) -> None:
        """Images no wider than the page (a screenshot is 1440 px wide), in proportion; in a table
        they share its width."""
        room = max(120, self.viewport().width() - 40)
        block = self.document().begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                fmt = fragment.charFormat()
                if fmt.isImageFormat():
                    image = fmt.toImageFormat()
                    natural = self.document().resource(QTextDocument.ResourceType.ImageResource,
                                                       QUrl(image.name()))
                    size = getattr(natural, "size", lambda: None)()
                    if size is not None and size.width() > 0:
                        cell = QTextCursor(self.document())
                        cell.setPosition(fragment.position())
                        table = cell.currentTable()
                        width = room / table.columns() - 12 if table is not None else room
                        width = min(float(size.width()), width)
                        if abs(image.width() - width) > 0.5:
                            image.setWidth(width)
                            image.setHeight(width * size.height() / size.width())
                            cell.setPosition(fragment.position() + fragment.length(),
                                             QTextCursor.MoveMode.KeepAnchor)
                            cell.setCharFormat(image)
                it += 1
            block = block.next()

    def name_headings(self) -> None:
        """Give every heading block the anchor GitHub gives it (repeated ones numbered)."""
        seen: dict[str, int] = {}
        block = self.document().begin()
        while block.isValid():
            if block.blockFormat().headingLevel() > 0:
                base = anchor(block.text())
                n = seen.get(base, 0)
                seen[base] = n + 1
                cursor = QTextCursor(block)
                cursor.select(QTextCursor.SelectionType.BlockUnderCursor)
                fmt = cursor.charFormat()
                fmt.setAnchor(True)
                fmt.setAnchorNames([base if n == 0 else f"{base}-{n}"])
                cursor.mergeCharFormat(fmt)
            block = block.next()


class HelpWindow(QDialog):
    """One non-modal window for every Help page, with Back, Forward and Contents; the Help menu
    opens the user guide's pages in it."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("dpplanner Help")
        self.browser = DocBrowser()
        self.browser.setAccessibleName("Help page")
        bar = QHBoxLayout()
        self.back = QPushButton("Back")
        self.back.clicked.connect(self.browser.backward)
        self.browser.backwardAvailable.connect(self.back.setEnabled)
        self.forward = QPushButton("Forward")
        self.forward.clicked.connect(self.browser.forward)
        self.browser.forwardAvailable.connect(self.forward.setEnabled)
        self.back.setEnabled(False)
        self.forward.setEnabled(False)
        self.contents = QPushButton("Contents")
        self.contents.setToolTip("Every page of the documentation")
        self.contents.clicked.connect(lambda: self.open(CONTENTS))
        for button in (self.back, self.forward, self.contents):
            bar.addWidget(button)
        bar.addStretch(1)
        self.missing = QLabel()
        self.missing.setWordWrap(True)
        self.missing.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.missing)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        self.resize(900, 700)

    def open(self, page: Page, section: str = "") -> bool:
        """Show ``page`` (at the heading whose anchor is ``section``); False if the documentation
        cannot be found (the window then says so)."""
        root = docs_root()
        path: Optional[Path] = None if root is None else root / page.path
        if path is None or not path.is_file():
            self.missing.setText(f"The documentation page {page.path} is not installed with this copy of "
                                 "dpplanner; it is in the docs folder of the source repository.")
            self.missing.show()
            return False
        self.missing.hide()
        url = QUrl.fromLocalFile(str(path))
        if section:
            url.setFragment(section)
        self.browser.setSource(url)
        self.setWindowTitle(f"dpplanner Help: {page.title}")
        return True
