"""Light/dark colours for the plots and the window's marks, following the system colour scheme."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QBrush, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QWidget

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


#: The error red (a refusal, an overspend, the global budget's line): text on a light window, and
#: the fill of red marks in either scheme (the pin; the over-budget bar, white text on it at 5.4:1).
ERROR_RED = "#c0392b"
#: The error red of text on a dark window, where ERROR_RED reads at ~2.6:1 (#2b2b2b); this at 6:1.
ERROR_RED_ON_DARK = "#ff8a80"

# Colour-blind-safe (Okabe-Ito) hues; the dark variants are lightened for contrast on dark grey.
LIGHT = PlotTheme(
    name="light", background="#ffffff", foreground="#303030", grid_alpha=0.25,
    budget_line=ERROR_RED, marker_line="#7f7f7f",
    curves={t.name: t.colours[0] for t in REGISTRY},
    bar="#0072b2", bar_second="#e69f00",
)
DARK = PlotTheme(
    name="dark", background="#1e1e1e", foreground="#dcdcdc", grid_alpha=0.3,
    budget_line=ERROR_RED_ON_DARK, marker_line="#a0a0a0",
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


def contrast(a: QColor, b: QColor) -> float:
    """WCAG's contrast ratio of two colours (1 to 21; text wants at least 4.5)."""
    def luminance(c: QColor) -> float:
        linear = [v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4
                  for v in (c.redF(), c.greenF(), c.blueF())]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    lighter, darker = sorted((luminance(a), luminance(b)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def error_red(palette: Optional[QPalette] = None) -> str:
    """The error red of text on the window of ``palette`` (the application's by default): of the
    two, the one that reads better on its background. Judged by the palette drawn, not the scheme
    asked for (a platform may keep a light window under a dark choice)."""
    window = (palette or QGuiApplication.palette()).color(QPalette.ColorRole.Window)
    return max((ERROR_RED, ERROR_RED_ON_DARK), key=lambda red: contrast(QColor(red), window))


def follow_scheme(widget: QWidget, style: Callable[[], str]) -> None:
    """Give ``widget`` the style sheet ``style()`` now, and again after every change of the
    application's palette (a light/dark switch) while it keeps that style sheet: ``style`` reads
    the colours of the scheme of the moment (error_red). A later call replaces ``style``; a style
    sheet set otherwise (``setStyleSheet("")``) ends the following."""
    keeper = widget.findChild(_StyleKeeper, options=Qt.FindChildOption.FindDirectChildrenOnly)
    if keeper is None:
        keeper = _StyleKeeper(widget)
    keeper.style = style
    keeper.restyle()


def red_text(widget: QWidget, on: bool = True) -> None:
    """``widget``'s text in the error red of the scheme of the moment (``on=False``: in the
    palette's own colour again)."""
    follow_scheme(widget, (lambda: f"color: {error_red()};") if on else str)


class _StyleKeeper(QObject):
    """Qt tells the windows of a new palette (ApplicationPaletteChange), not a widget with a
    style sheet of its own: the keeper watches the window its widget is in, found again when the
    widget is shown or moves (a panel's labels are made before the panel is put in the window)."""

    def __init__(self, widget: QWidget) -> None:
        super().__init__(widget)
        self.style: Callable[[], str] = str
        self._sheet = ""
        self._window: Optional[QWidget] = None
        widget.installEventFilter(self)
        self._watch()

    def restyle(self) -> None:
        widget, self._sheet = self.parent(), self.style()
        if widget.styleSheet() != self._sheet:
            widget.setStyleSheet(self._sheet)

    def _watch(self) -> None:
        widget = self.parent()
        window = widget.window()
        if window is not self._window:
            if self._window is not None and self._window is not widget:
                self._window.removeEventFilter(self)
            if window is not widget:
                window.installEventFilter(self)
            self._window = window

    def eventFilter(self, watched, event) -> bool:      # noqa: N802  (Qt's name)
        # (the event's type first: a widget being destroyed still sends others, to a keeper
        # whose attributes are gone)
        kind = event.type()
        if kind == QEvent.Type.Show or kind == QEvent.Type.ParentChange:
            if watched is not self.parent():
                return False
            self._watch()       # (and a switch made while it was in another window)
        elif kind != QEvent.Type.ApplicationPaletteChange or watched is not self._window:
            return False
        if self.parent().styleSheet() == self._sheet:
            self.restyle()
        return False
