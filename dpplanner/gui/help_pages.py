"""Plain-language help: one short page per composition theorem (from the registry), and the About box."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

import dpplanner
from dpplanner.engine.theorems import REGISTRY

#: One page per registered theorem: key -> (title, html).
PAGES: dict[str, tuple[str, str]] = {t.name: (t.title, t.help_html) for t in REGISTRY}


def about_html() -> str:
    return (f"<h3>dpplanner {dpplanner.__version__}</h3>"
            "<p>Plan differential-privacy budgets: compose (ε<sub>i</sub>, δ<sub>i</sub>) releases "
            "under every composition theorem, with a sound optimal-composition engine. Every total "
            "ε shown is a valid upper bound.</p><p>MIT licence.</p>")


class HelpDialog(QDialog):
    """A small non-modal reader for one page."""

    def __init__(self, title: str, html: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(f"<h3>{title}</h3>{html}")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        self.resize(520, 380)
