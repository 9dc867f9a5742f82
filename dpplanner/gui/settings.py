"""A small typed wrapper over QSettings: every key, its type and its default in one table.

Window state (geometry, splitter/dock layout) is kept apart from preferences. The engine never
reads settings; values the computation needs travel in the request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

MAX_RECENT_FILES = 8


@dataclass(frozen=True)
class _Key:
    name: str
    type: type
    default: Any


# Preferences a user may change; defaults live here and nowhere else.
PREFERENCES = {
    "curve_mode": _Key("plots/curve_mode", str, "prefix"),     # "prefix" or "repeat"
    "curve_k_max": _Key("plots/curve_k_max", int, 0),          # 0: the plan's own k
    "curve_points": _Key("plots/curve_points", int, 100),
    "hidden_curves": _Key("plots/hidden_curves", list, []),
    "curve_log_k": _Key("plots/curve_log_k", bool, False),
    "colour_scheme": _Key("view/colour_scheme", str, "system"),    # "system", "light" or "dark"
    "show_guide": _Key("view/show_guide", bool, True),             # the first-start guide
    # The statistics table's columns by key ([]: the default set).
    "table_columns": _Key("view/table_columns", list, []),
    "autosave_seconds": _Key("recovery/autosave_seconds", int, 5),   # after the first unsaved edit
    # Engine jobs in a child process (no GIL contention with the window); False: worker thread.
    "engine_in_process": _Key("engine/in_process", bool, True),
}


class Settings:
    """Typed access to the application's settings. Pass a QSettings to isolate (tests)."""

    def __init__(self, qsettings: QSettings | None = None) -> None:
        self._s = qsettings if qsettings is not None else QSettings()

    # -- preferences --------------------------------------------------------------------------
    def get(self, name: str) -> Any:
        key = PREFERENCES[name]
        value = self._s.value(key.name, key.default)
        return _coerce(value, key.type, key.default)

    def set(self, name: str, value: Any) -> None:
        key = PREFERENCES[name]
        self._s.setValue(key.name, _coerce(value, key.type, key.default))

    # -- window state -------------------------------------------------------------------------
    def window_geometry(self) -> QByteArray | None:
        return _bytes(self._s.value("window/geometry"))

    def window_state(self) -> QByteArray | None:
        return _bytes(self._s.value("window/state"))

    def splitter_state(self, name: str) -> QByteArray | None:
        return _bytes(self._s.value(f"window/splitter/{name}"))

    def layout_version(self) -> int:
        """The panel arrangement the saved splitter states are for (0: none saved, or saved by a
        version that did not say)."""
        return _coerce(self._s.value("window/layout_version", 0), int, 0)

    def save_window(self, geometry: QByteArray, state: QByteArray, splitters: dict[str, QByteArray],
                    layout_version: int = 0) -> None:
        self._s.setValue("window/geometry", geometry)
        self._s.setValue("window/state", state)
        self._s.setValue("window/layout_version", layout_version)
        for name, value in splitters.items():
            self._s.setValue(f"window/splitter/{name}", value)

    # -- recent files -------------------------------------------------------------------------
    def recent_files(self) -> list[str]:
        return _coerce(self._s.value("files/recent", []), list, [])[:MAX_RECENT_FILES]

    def add_recent_file(self, path: str) -> list[str]:
        files = [path] + [p for p in self.recent_files() if p != path]
        files = files[:MAX_RECENT_FILES]
        self._s.setValue("files/recent", files)
        return files

    def remove_recent_file(self, path: str) -> list[str]:
        files = [p for p in self.recent_files() if p != path]
        self._s.setValue("files/recent", files)
        return files

    def sync(self) -> None:
        self._s.sync()


def _bytes(value: Any) -> QByteArray | None:
    if isinstance(value, QByteArray) and not value.isEmpty():
        return value
    return None


def _coerce(value: Any, kind: type, default: Any) -> Any:
    """QSettings returns strings from INI files and a bare str for one-element lists."""
    if value is None:
        return default
    try:
        if kind is list:
            if isinstance(value, str):
                return [value] if value else []
            return [str(v) for v in value]
        if kind is bool:
            if isinstance(value, str):
                return value.lower() in ("1", "true", "yes")
            return bool(value)
        return kind(value)
    except (TypeError, ValueError):
        return default
