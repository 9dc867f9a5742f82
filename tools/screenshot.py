"""Render the real dpplanner window with an example plan to docs/screenshot.png.

    .venv/bin/python tools/screenshot.py [--example census] [--out docs/screenshot.png]
    .venv/bin/python tools/screenshot.py --suite shots/

``--suite FOLDER`` renders every screen of the screenshot suite (gui/screens.py: every example and
a new plan, 1280x800 and 1920x1080, light and dark, as opened, with the statistic tab, after
hovering the plot and after a refusal) into FOLDER, prints what a person would find wrong on each
(gui/audit.py) and exits with status 1 if anything is.

Works under Xvfb (``xvfb-run -a .venv/bin/python tools/screenshot.py``) or offscreen
(``QT_QPA_PLATFORM=offscreen``). Uses a throw-away settings folder, so the user's window layout
and recent files are neither used nor changed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wait(ms: int) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--example", default="psi-survey", help="example plan name (default psi-survey)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "screenshot.png"))
    parser.add_argument("--size", default="1440x900", help="window size WIDTHxHEIGHT")
    parser.add_argument("--tab", type=int, default=0, help="plot tab to show (0 cost, 1 profile, 2 shares)")
    parser.add_argument("--select", type=int, default=2, help="table row to select (-1: none)")
    parser.add_argument("--dark", action="store_true", help="View > Colour scheme > Dark")
    parser.add_argument("--part", choices=("window", "plots", "inspector"), default="window",
                        help="what to save: the whole window, the plot tabs or the inspector")
    parser.add_argument("--suite", metavar="FOLDER", help="render and check every screen of the suite")
    args = parser.parse_args(argv)

    scratch = tempfile.mkdtemp(prefix="dpplanner-shot-")
    os.environ["XDG_CONFIG_HOME"] = os.path.join(scratch, "config")
    os.environ["XDG_DATA_HOME"] = os.path.join(scratch, "data")

    from PySide6.QtCore import QSettings

    from dpplanner.gui.app import make_application
    from dpplanner.gui.main_window import MainWindow
    from dpplanner.gui.settings import Settings
    from dpplanner.model.examples import example_path

    app = make_application([sys.argv[0]])

    settings = Settings(QSettings(os.path.join(scratch, "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, recovery_dir=os.path.join(scratch, "recovery"))
    if args.suite:
        return suite(window, Path(args.suite))
    width, height = (int(v) for v in args.size.split("x"))
    window.resize(width, height)
    window.default_layout()
    if args.dark:
        window.appearance.set_scheme("dark")     # View > Colour scheme > Dark
    window.document.open_example(example_path(args.example), confirm=False)
    window.show()
    if args.select >= 0:
        window.statistics_panel.select_row(args.select)
    window.plots.setCurrentIndex(args.tab)
    for _ in range(300):                  # up to 30 s for the first result
        wait(100)
        if window.evaluation.last_result is not None and not window.controller.is_busy():
            break
    for _ in range(300):                  # the profile is computed once its tab is shown
        wait(100)
        profile_done = args.tab != 1 or len(window.profile_plot._eps) > 0
        if profile_done and not window.controller.is_busy():
            break
    wait(300)                             # let the plots repaint
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    part = {"window": window, "plots": window.plots,
            "inspector": window.statistics_panel.inspector}[args.part]
    if not part.grab().save(str(out)):
        print(f"could not write {out}", file=sys.stderr)
        return 1
    print(f"wrote {out} ({width}x{height}, example {args.example})")
    window.editor.undo_stack.setClean()
    window.close()
    del app
    return 0


def suite(window, out: Path) -> int:
    from dpplanner.gui.screens import screens

    out.mkdir(parents=True, exist_ok=True)
    window.show()

    def settle() -> None:
        for _ in range(600):              # up to 60 s for the engine
            wait(100)
            if not window.controller.is_busy() and not window.editor.is_redistributing():
                break
        wait(150)                         # let the plots repaint

    failed = 0
    for screen in screens(window, settle, out):
        print(f"{screen.name}: {'ok' if not screen.problems else 'PROBLEMS'}")
        for problem in screen.problems:
            print(f"    {problem}")
        failed += bool(screen.problems)
    window.editor.undo_stack.setClean()
    window.close()
    print(f"{failed} screens with problems; PNGs in {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
