"""Where the documentation pages are, and which of them the window's Help menu opens.

The Help window shows the Markdown pages of docs/ themselves (one source: what a reader sees on
the repository page is what the window shows). They are found in a checkout (the repository's
README.md, CHANGELOG.md and docs/) and in the packaged app (PyInstaller unpacks the same files
under sys._MEIPASS: packaging/dpplanner.spec). No Qt here.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

#: A page every copy of the documentation has: how a folder is recognised as the documentation.
PROBE = Path("docs") / "guide" / "window.md"


@dataclass(frozen=True)
class Page:
    title: str
    path: str           # relative to the documentation root, e.g. "docs/guide/window.md"


#: The user guide, in the Help menu's order (the first one is what Help opens by default). Every
#: page of docs/guide is here or is BASICS (tests/gui/test_help.py): a new page gets a line.
BASICS = Page("What ε and δ mean, and how to choose them", "docs/guide/basics.md")
GUIDE: tuple[Page, ...] = (
    Page("The window", "docs/guide/window.md"),
    Page("Statistics and their errors", "docs/guide/statistics.md"),
    Page("Budgets and redistribution", "docs/guide/budget.md"),
    Page("Composition theorems", "docs/guide/theorems.md"),
    Page("Saving and exporting", "docs/guide/exports.md"),
    Page("From plan to release", "docs/guide/release.md"),
    Page("Tables by group and the unit of privacy", "docs/guide/groups.md"),
    Page("Installing the packaged app", "docs/guide/install.md"),
)
CONTENTS = Page("All documentation", "docs/README.md")
CHANGES = Page("What changed", "CHANGELOG.md")
THEOREMS = GUIDE[3]


def docs_root() -> Optional[Path]:
    """The folder holding README.md, CHANGELOG.md and docs/, or None if it cannot be found."""
    candidates = []
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        candidates.append(Path(frozen))
    candidates.append(Path(__file__).resolve().parents[1])      # <repo>/dpplanner/help_docs.py
    for root in candidates:
        if (root / PROBE).is_file():
            return root
    return None


def page_file(page: Page) -> Optional[Path]:
    root = docs_root()
    return None if root is None else root / page.path


def anchor(heading: str) -> str:
    """The anchor a repository page gives a heading (GitHub's rule): lower case, punctuation
    dropped, spaces to hyphens. Links like ``budget.md#the-budget`` use it."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def theorem_heading(title: str) -> str:
    """The heading of a theorem's section in docs/guide/theorems.md (tools/theorem_page.py)."""
    return title
