"""Package names imported from their modules when first read (PEP 562).

A package's ``__init__`` that imported every name it exports would import scipy and every theorem
for a caller that needs one small module (the window's GUI process needs CancelToken and the
registry's words before its first paint; the numbers come from the engine process).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Callable


def exports(package: str, homes: dict[str, str]) -> tuple[Callable, Callable]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public names live in the modules
    ``homes`` names (name -> module relative to the package)."""

    def __getattr__(name: str):
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        sys.modules[package].__dict__[name] = value     # later reads are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(sys.modules[package].__dict__) | set(homes))

    return __getattr__, __dir__


def keep_functions(package: str, homes: dict[str, str]) -> None:
    """Where a public function has its module's name (``engine.compose`` in compose.py), keep the
    function: importing the module would otherwise set the package's attribute to the module, as
    Python does for every submodule it imports."""

    class Package(types.ModuleType):
        def __setattr__(self, name: str, value) -> None:
            if not (isinstance(value, types.ModuleType) and homes.get(name) == name):
                super().__setattr__(name, value)

    sys.modules[package].__class__ = Package
