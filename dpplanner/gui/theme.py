"""Light/dark colours for the plots and the window's marks, following the system colour scheme."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QGuiApplication, QPalette

from dpplanner.engine.theorems import REGISTRY


@dataclass(frozen=True)
class PlotTheme:
    name: str
    background: str
    foreground: str
    grid_alpha: float
    budget_line: str
    marker_line: str
    curves: dict[str, str]      # theorem -> colour
    bar: str
    bar_second: str


# Colour-blind-safe (Okabe-Ito) hues; the dark variants are lightened for contrast on dark grey.
LIGHT = PlotTheme(
    name="light", background="#ffffff", foreground="#303030", grid_alpha=0.25,
    budget_line="#c0392b", marker_line="#7f7f7f",
    curves={t.name: t.colours[0] for t in REGISTRY},
    bar="#0072b2", bar_second="#e69f00",
)
DARK = PlotTheme(
    name="dark", background="#1e1e1e", foreground="#dcdcdc", grid_alpha=0.3,
    budget_line="#ff6b5b", marker_line="#a0a0a0",
    curves={t.name: t.colours[1] for t in REGISTRY},
    bar="#4ea8ff", bar_second="#ffc14d",
)


#: "system" follows the platform's colour scheme; "light" or "dark" is the user's choice (View menu).
_preference = "system"
PREFERENCES = ("system", "light", "dark")


def set_preference(value: str) -> None:
    global _preference
    if value not in PREFERENCES:
        raise ValueError(f"colour scheme {value!r} is not one of {', '.join(PREFERENCES)}")
    _preference = value


def is_dark() -> bool:
    if _preference != "system":
        return _preference == "dark"
    app = QGuiApplication.instance()
    if app is None:
        return False
    scheme = app.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Dark:
        return True
    if scheme == Qt.ColorScheme.Light:
        return False
    # Unknown scheme (some platforms): judge by the window colour's lightness.
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def current() -> PlotTheme:
    return DARK if is_dark() else LIGHT


def curve_colour(theme: PlotTheme, theorem: str) -> str:
    return theme.curves.get(theorem, theme.foreground)


def late_text(palette: Optional[QPalette] = None) -> QBrush:
    """The text of numbers drawn from before the plan's last change while its result is late (the
    Totals table's, the statistics table's waiting cells): ``palette``'s, else the application's."""
    return (palette or QGuiApplication.palette()).placeholderText()
