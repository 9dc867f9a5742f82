"""Light or dark: follow the system live, or the user's choice from View > Colour scheme.

The platform announces a new scheme through ``QStyleHints.colorSchemeChanged`` and a new palette
through ``ApplicationPaletteChange`` events; either restyles the plots at once. A chosen scheme is
also asked of Qt (``setColorScheme``), which restyles the widgets where the platform allows it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QGuiApplication
from PySide6.QtWidgets import QMenu, QWidget

from dpplanner.gui import theme
from dpplanner.gui.settings import Settings

_CHOICES = (("system", "Follow the &system"), ("light", "&Light"), ("dark", "&Dark"))
_QT_SCHEMES = {"light": Qt.ColorScheme.Light, "dark": Qt.ColorScheme.Dark}


class Appearance(QObject):
    """Owns the colour-scheme preference; ``changed`` fires whenever the plots should restyle."""

    changed = Signal()

    def __init__(self, settings: Settings, parent: QWidget) -> None:
        super().__init__(parent)
        self._settings = settings
        self.actions: dict[str, QAction] = {}
        self._group = QActionGroup(self)
        for key, text in _CHOICES:
            action = QAction(text, self, checkable=True)
            action.setToolTip("Colours of the window and the plots")
            action.triggered.connect(lambda _c=False, k=key: self.set_scheme(k))
            self._group.addAction(action)
            self.actions[key] = action
        app = QGuiApplication.instance()
        app.styleHints().colorSchemeChanged.connect(lambda _scheme: self._on_platform_change())
        parent.installEventFilter(self)     # the window only: a filter on the app sees every event
        choice = settings.get("colour_scheme")
        self.set_scheme(choice if choice in theme.PREFERENCES else "system")

    def menu(self, parent: QWidget) -> QMenu:
        menu = QMenu("&Colour scheme", parent)
        menu.addActions(list(self.actions.values()))
        return menu

    def scheme(self) -> str:
        return next(k for k, a in self.actions.items() if a.isChecked())

    def set_scheme(self, key: str) -> None:
        theme.set_preference(key)
        self.actions[key].setChecked(True)
        self._settings.set("colour_scheme", key)
        hints = QGuiApplication.styleHints()
        if key == "system":
            hints.unsetColorScheme()
        else:
            hints.setColorScheme(_QT_SCHEMES[key])
        self.changed.emit()

    def eventFilter(self, watched, event) -> bool:
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self._on_platform_change()
        return False

    def _on_platform_change(self) -> None:
        if self.scheme() == "system":
            self.changed.emit()
