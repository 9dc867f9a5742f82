"""One version, everywhere: dpplanner.__version__ is the package metadata's (pyproject.toml reads
it), `dpplanner --version` and `dpplanner-cli --version` print it, and the packaging reads it.
(The About box: tests/gui/test_help.py; the frozen app: packaging/package_test.py.)"""

from __future__ import annotations

import sys
import tomllib

import pytest

import dpplanner
from doc_pages import ROOT
from dpplanner.__main__ import main as window_main
from dpplanner.cli import main as cli_main

sys.path.insert(0, str(ROOT / "packaging"))
import build_info  # noqa: E402


def test_pyproject_takes_the_version_from_the_package():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "dpplanner.__version__"}


@pytest.mark.parametrize("main, program", [(window_main, "dpplanner"), (cli_main, "dpplanner-cli")])
def test_both_programs_print_it(main, program, capsys):
    try:
        code = main(["--version"])
    except SystemExit as exc:        # argparse's version action exits
        code = exc.code
    assert code in (0, None)
    assert capsys.readouterr().out.strip() == f"{program} {dpplanner.__version__}"


def test_the_packaging_reads_it():
    assert build_info.read_version() == dpplanner.__version__
    assert build_info.archive_stem().startswith(f"dpplanner-{dpplanner.__version__}-")
