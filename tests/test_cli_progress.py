"""Issue 23.10 (in part): on a terminal, a command still working says so on one line rewritten in
place and wiped before any output; piped, nothing is shown; Ctrl+C ends it with one line and
status 130. No timing is asserted: the line is drawn on demand, or waited for."""

from __future__ import annotations

import io
import sys
import threading

from dpplanner.cli import terminal as cli_terminal
from dpplanner.cli.terminal import Progress, on_terminal


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_line_is_rewritten_in_place_and_wiped_when_stopped():
    tty = Terminal()
    progress = Progress(tty, "dpplanner-cli report")
    progress.show(1.2)
    progress.show(12.4)
    assert tty.getvalue() == ("\rdpplanner-cli report: working... 1 s (Ctrl+C stops it)\x1b[K"
                              "\rdpplanner-cli report: working... 12 s (Ctrl+C stops it)\x1b[K")
    progress.stop()
    assert tty.getvalue().endswith("\r\x1b[K")
    progress.show(13.0)                                  # after the end: never again
    assert tty.getvalue().endswith("\r\x1b[K")


def test_piped_or_redirected_nothing_is_shown():
    piped = io.StringIO()
    progress = Progress(piped, "dpplanner-cli compose").start()
    progress.show(5.0)
    progress.stop()
    assert piped.getvalue() == "" and progress._thread is None


def test_a_command_that_works_long_shows_the_line_and_wipes_it_before_printing(monkeypatch):
    tty = Terminal()                        # stdout and stderr on the same screen
    monkeypatch.setattr(sys, "stderr", tty)
    monkeypatch.setattr(sys, "stdout", tty)
    monkeypatch.setattr(Progress, "DELAY", 0.0)
    shown = threading.Event()

    def command() -> int:
        while "working..." not in tty.getvalue():        # the worker thread draws it
            shown.wait(0.01)
        print("the result")
        return 0

    assert on_terminal(command, "dpplanner-cli report") == 0
    shown_then_wiped, _, printed = tty.getvalue().rpartition("\r\x1b[K")
    assert shown_then_wiped.startswith("\rdpplanner-cli report: working...") and printed == "the result\n"


def test_ctrl_c_ends_a_command_with_one_line_and_status_130(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)

    def command() -> int:
        raise KeyboardInterrupt

    assert on_terminal(command, "dpplanner-cli allocate") == 130
    assert err.getvalue() == "dpplanner-cli allocate: interrupted\n"


def test_the_cli_names_its_command_on_the_line(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(cli_terminal, "Progress", lambda stream, what: seen.append(what) or
                        Progress(io.StringIO(), what))
    from dpplanner.cli import main
    assert main(["validate", "census"]) == 0
    assert seen == ["dpplanner-cli validate"]


def test_the_line_says_how_far_the_work_got_once_it_is_told():
    tty = Terminal()
    progress = Progress(tty, "dpplanner-cli curve")
    progress.show(1.0)
    progress.report("100 points: theorem 7 of 8 (pld), 40%")
    progress.show(12.0)
    assert tty.getvalue() == ("\rdpplanner-cli curve: working... 1 s (Ctrl+C stops it)\x1b[K"
                              "\rdpplanner-cli curve: 100 points: theorem 7 of 8 (pld), 40%, 12 s "
                              "(Ctrl+C stops it)\x1b[K")


def _reported(monkeypatch) -> list:
    """What the commands tell the progress line, in order (the engine's own callbacks drive it)."""
    told: list = []
    monkeypatch.setattr(cli_terminal, "_current", None)
    real = cli_terminal.Progress.report
    monkeypatch.setattr(cli_terminal.Progress, "report", lambda self, text: told.append(text) or real(self, text))
    return told


def test_curve_reports_each_theorem_from_the_engines_progress(monkeypatch, capsys):
    told = _reported(monkeypatch)
    from dpplanner.cli import main
    assert main(["curve", "psi-survey", "--points", "4", "--theorem", "basic", "--theorem", "optimal"]) == 0
    within = [t for t in told if t.startswith("4 points: theorem 2 of 2 (optimal), ")]
    assert within and all(t.endswith("%") for t in within)      # how far into the optimal curve
    assert told[-1] == "4 points: 2 of 2 theorems done"


def test_allocate_reports_each_composition_of_its_search(monkeypatch, capsys):
    told = _reported(monkeypatch)
    from dpplanner.cli import main
    assert main(["allocate", "psi-survey", "--json"]) == 0
    steps = [t for t in told if t.startswith("composition ")]
    assert steps[0] == "composition 1 of the search (each of all 8 statistics under pld)"
    assert [int(t.split()[1]) for t in steps] == list(range(1, len(steps) + 1))
    assert told[-1] == f"search done after {len(steps)} compositions"


def test_a_piped_command_writes_no_progress_and_its_json_stays_json(monkeypatch, capsys):
    import json
    from dpplanner.cli import main
    monkeypatch.setattr(Progress, "DELAY", 0.0)
    assert main(["compose", "census", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["statistics"] == 58
