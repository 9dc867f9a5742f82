"""Where the example plans shipped with dpplanner live, from a checkout, a wheel or a frozen app."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

EXAMPLE_NAMES = ("psi-survey", "census", "census-tables", "synthetic-100", "synthetic-1000")


def examples_dir() -> Optional[Path]:
    """The folder holding the *.dpplan examples, or None if it cannot be found."""
    candidates = []
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:  # PyInstaller unpacks data files under sys._MEIPASS
        candidates.append(Path(frozen) / "resources" / "examples")
    # <repo>/dpplanner/model/examples.py -> <repo>/resources/examples
    candidates.append(Path(__file__).resolve().parents[2] / "resources" / "examples")
    try:
        from importlib import resources
        candidates.append(Path(str(resources.files("dpplanner"))).parent / "resources" / "examples")
    except (ImportError, TypeError, ModuleNotFoundError):
        pass
    for folder in candidates:
        if folder.is_dir() and any(folder.glob("*.dpplan")):
            return folder
    return None


def example_paths() -> dict[str, Path]:
    """Name (file stem) -> path of every example plan found, in a stable order."""
    folder = examples_dir()
    if folder is None:
        return {}
    found = {p.stem: p for p in sorted(folder.glob("*.dpplan"))}
    ordered = {name: found.pop(name) for name in EXAMPLE_NAMES if name in found}
    ordered.update(found)
    return ordered


def example_path(name: str) -> Path:
    """The path of one example by name (e.g. "census"); ValueError listing the known ones."""
    paths = example_paths()
    stem = name[:-len(".dpplan")] if name.endswith(".dpplan") else name
    if stem not in paths:
        known = ", ".join(paths) or "none found"
        raise ValueError(f"no example plan called {name!r}; known examples: {known}")
    return paths[stem]
