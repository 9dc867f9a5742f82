"""Issue 23.10 (in part): on a terminal, a command still working says so on one line rewritten in
place and wiped before any output; piped, nothing is shown; Ctrl+C ends it with one line and
status 130. No timing is asserted: the line is drawn on demand, or waited for."""

from __future__ import annotations

import io
import sys
import threading

from dpplanner import cli_terminal
from dpplanner.cli_terminal import Progress, on_terminal


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
