"""The engine and the model must import without loading any Qt module (STYLE.md pattern 1)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

QT_MODULES = ("PySide6", "pyqtgraph", "shiboken6")


def test_engine_and_model_import_no_qt():
    packages = ["dpplanner.engine"]
    if importlib.util.find_spec("dpplanner.model") is not None:
        # every model module (files, CSV, report) and the command line must stay Qt-free too
        packages += ["dpplanner.model", "dpplanner.model.files", "dpplanner.model.csvio",
                     "dpplanner.model.report", "dpplanner.model.examples", "dpplanner.cli",
                     # what the window computes runs headless too (and in the engine process)
                     "dpplanner.compute.jobs", "dpplanner.compute.engine_process",
                     "dpplanner.compute.helper_process", "dpplanner.compute.handover",
                     "dpplanner.compute.profile_job"]
    code = (
        "import sys\n"
        + "".join(f"import {p}\n" for p in packages)
        + f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r})\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"Qt modules loaded by {packages}: {out.stdout.strip()}"


def test_the_check_detects_qt_when_loaded():
    # Guard against a check that cannot fail: importing PySide6 must show up in the same probe.
    code = ("import sys, PySide6\n"
            f"print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "PySide6" in out.stdout
