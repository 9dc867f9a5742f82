"""What dpplanner-cli writes to a terminal: plan text made safe, messages in plain numbers.

A plan's names, titles and variables are whatever a file gave; every command's output goes
through ``safe_text.TerminalStream``, so control and bidirectional characters reach the terminal
as visible escapes, never as the raw bytes that would recolour, retitle or clear it.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Callable

from dpplanner.model.safe_text import TerminalStream


def on_terminal(command: Callable[[], int]) -> int:
    """``command()`` with stdout and stderr passed through ``TerminalStream``; a reader that went
    away (``| head``) ends it quietly with status 0."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalStream(sys.stdout), TerminalStream(sys.stderr)
    try:
        return command()
    except BrokenPipeError:
        sys.stdout, sys.stderr = streams
        try:        # so that the interpreter's last flush at exit does not complain either
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):   # not a real file (tests capture the output)
            pass
        return 0
    finally:
        sys.stdout, sys.stderr = streams


#: A numpy scalar's repr (np.float64(0.5)) where a message formatted one: the user reads 0.5.
_NUMPY_REPR = re.compile(r"\bnp\.(?:float|int|uint|complex)\d*\(([^()]*)\)")


def plain(message: str) -> str:
    """An error message with numpy scalars' reprs written as the numbers they are."""
    return _NUMPY_REPR.sub(r"\1", message)
