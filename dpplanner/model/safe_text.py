"""Plan text made safe for where it is shown: a terminal, HTML or SVG, a spreadsheet.

A plan's names, variables, titles and descriptions are whatever a file or a user gave, and a plan
file may come from anyone. Each output escapes them for its own reader, with these functions:

- ``terminal``: control characters (NUL, ESC, DEL, C1, line and paragraph separators) and the
  invisible bidirectional controls (U+202E and its kin) become visible escapes (``\\x1b``,
  ``\\u202e``), so a name cannot move the cursor, recolour or retitle the terminal, or reorder
  what is printed after it.
- ``markup``: text for HTML and XML (SVG) content or attribute values: ``& < > " '`` escaped, and
  the same invisible characters as visible escapes (XML 1.0 forbids most of them, so a plan name
  holding one would make an SVG file unreadable).
- ``spreadsheet`` / ``from_spreadsheet``: a CSV cell that a spreadsheet would run as a formula
  (starting with = + - @, a tab or a carriage return) gets a leading apostrophe, which
  spreadsheets read as "this is text"; a cell starting with an apostrophe gets one more, so that
  import, which takes one off, gives back exactly what was exported.
"""

from __future__ import annotations

import html
import re

#: C0 and C1 controls, DEL, the line/paragraph separators and the bidirectional controls (LRM,
#: RLM, ALM, the embeddings and overrides U+202A-E, the isolates U+2066-9).
_INVISIBLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
#: What a spreadsheet runs as a formula when a cell starts with it (OWASP's list), and the
#: apostrophe that marks the neutralised ones.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


#: What a terminal may see of the controls: line ends and tabs (no escape sequence can start
#: with them), so that multi-line output keeps its lines.
_INVISIBLE_IN_LINES = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")


def terminal(text: str, *, lines: bool = False) -> str:
    """``text`` as it may be printed to a terminal: invisible controls written as escapes
    (``lines``: keep its line ends and tabs, for whole messages and tables)."""
    return (_INVISIBLE_IN_LINES if lines else _INVISIBLE).sub(_visible, str(text))


class TerminalStream:
    """A text stream (sys.stdout, sys.stderr) that passes on only ``terminal(lines=True)`` text:
    whatever a command prints, no plan string reaches the terminal raw."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(terminal(text, lines=True))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


#: In markup, tabs and line ends are white space like any other (XML allows them).
_INVISIBLE_IN_MARKUP = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")


def markup(text: str) -> str:
    """``text`` for HTML and XML content and (quoted) attribute values."""
    return html.escape(_INVISIBLE_IN_MARKUP.sub(_visible, str(text)), quote=True)


def spreadsheet(text: str) -> str:
    """A CSV text cell that no spreadsheet runs as a formula."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def from_spreadsheet(text: str) -> str:
    """What ``spreadsheet`` was given (a cell written by hand without the apostrophe is as it is)."""
    return text[1:] if text.startswith("'") else text
