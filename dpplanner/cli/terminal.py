"""What dpplanner-cli writes to a terminal: plan text made safe, messages in plain numbers.

A plan's names, titles and variables are whatever a file gave; every command's output goes
through ``safe_text.TerminalStream``, so control and bidirectional characters reach the terminal
as visible escapes, never as the raw bytes that would recolour, retitle or clear it.

On a terminal, a command still working after a second says so on stderr, one line rewritten in
place and wiped before the command prints anything: how far it got when the computation reports
it (``report(text)``, e.g. "dpplanner-cli curve: theorem 7 of 8 (pld), 40%, 12 s (Ctrl+C stops
it)"), else "working... 12 s"; piped or redirected, nothing is shown. Ctrl+C ends a command with
status 130 and one line, not a traceback.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from typing import Callable, Optional, TextIO

from dpplanner.model.safe_text import TerminalStream


class Progress:
    """The "still working" line on a terminal ``stream`` (nothing at all when it is not one)."""

    #: Seconds before the line first shows (a quick command shows nothing), and between updates.
    DELAY, EVERY = 1.0, 1.0

    def __init__(self, stream: TextIO, what: str) -> None:
        self._stream, self._what = stream, what
        self._shown = False
        self._detail = ""
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: Optional[threading.Thread] = None
        try:
            self._tty = stream.isatty()
        except (AttributeError, ValueError):
            self._tty = False

    def start(self) -> "Progress":
        if self._tty:
            self._thread = threading.Thread(target=self._run, name="cli-progress", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        started = time.monotonic()
        if self._done.wait(self.DELAY):
            return
        while True:
            self.show(time.monotonic() - started)
            if self._done.wait(self.EVERY):
                return

    def report(self, detail: str) -> None:
        """How far the work got (shown from the next update on): the computation's own progress."""
        with self._lock:
            self._detail = detail

    def show(self, elapsed: float) -> None:
        """Write the line for ``elapsed`` seconds (over the last one), unless output began."""
        with self._lock:
            if self._tty and not self._done.is_set():
                done = f"{self._detail}," if self._detail else "working..."
                self._stream.write(f"\r{self._what}: {done} {elapsed:.0f} s (Ctrl+C stops it)\x1b[K")
                self._stream.flush()
                self._shown = True

    def stop(self) -> None:
        """No more updates; the line, if shown, is wiped (before any output, and at the end)."""
        with self._lock:
            self._done.set()
            if self._shown:
                self._stream.write("\r\x1b[K")
                self._stream.flush()
                self._shown = False


class _Output(TerminalStream):
    """A command's output stream: the first write ends the progress line."""

    def __init__(self, stream, progress: Progress) -> None:
        super().__init__(stream)
        self._progress = progress

    def write(self, text: str) -> int:
        self._progress.stop()
        return super().write(text)


#: The running command's progress line (None outside ``on_terminal``).
_current: Optional[Progress] = None


def report(detail: str) -> None:
    """Tell the running command's progress line how far the work got (nothing if there is none)."""
    if _current is not None:
        _current.report(detail)


def on_terminal(command: Callable[[], int], what: str = "dpplanner-cli") -> int:
    """``command()`` with stdout and stderr passed through ``TerminalStream`` and a progress line
    on a terminal; a reader that went away (``| head``) ends it quietly with status 0, Ctrl+C with
    status 130."""
    global _current
    streams = sys.stdout, sys.stderr
    progress = _current = Progress(sys.stderr, what)
    sys.stdout, sys.stderr = _Output(sys.stdout, progress), _Output(sys.stderr, progress)
    progress.start()
    try:
        return command()
    except KeyboardInterrupt:
        progress.stop()
        print(f"{what}: interrupted", file=streams[1])
        return 130
    except BrokenPipeError:
        sys.stdout, sys.stderr = streams
        try:        # so that the interpreter's last flush at exit does not complain either
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):   # not a real file (tests capture the output)
            pass
        return 0
    finally:
        progress.stop()
        _current = None
        sys.stdout, sys.stderr = streams


#: A numpy scalar's repr (np.float64(0.5)) where a message formatted one: the user reads 0.5.
_NUMPY_REPR = re.compile(r"\bnp\.(?:float|int|uint|complex)\d*\(([^()]*)\)")


def plain(message: str) -> str:
    """An error message with numpy scalars' reprs written as the numbers they are."""
    return _NUMPY_REPR.sub(r"\1", message)
