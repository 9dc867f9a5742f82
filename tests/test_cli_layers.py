"""dpplanner-cli works over the engine and the model alone: its commands never load the window's
compute layer (threads, the engine process), which the model's own functions replace."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("argv", [["compose", "psi-survey"], ["curve", "psi-survey", "--points", "5"],
                                  ["report", "psi-survey", "-o", "{tmp}/r.html"]])
def test_the_cli_commands_load_no_compute_module(tmp_path, argv):
    argv = [a.format(tmp=tmp_path) for a in argv]
    code = ("import sys\n"
            "from dpplanner.cli import main\n"
            f"assert main({argv!r}) == 0\n"
            "print('LOADED', sorted(m for m in sys.modules if m.startswith('dpplanner.compute')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "LOADED []"
