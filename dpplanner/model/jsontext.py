"""Strict JSON for plan files: structural limits checked before parsing, and the same checks on
what is written, so a saved plan always opens again.

The limits are checked on the text's skeleton (strings blanked out) before ``json.loads`` builds
anything, so a hostile file is refused after a few linear scans at C speed instead of after
building millions of Python objects. Numbers are limited while parsing; NaN and Infinity are
refused. ``check_text`` is the whole reader-side check, which the writer runs on its own output.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np

from .fileio import PlanFileError

#: Deepest nesting of arrays and objects, counting the top-level object as 1.
MAX_DEPTH = 32
#: Most values (objects, arrays, strings, numbers, true/false/null) in one file: 20 000
#: statistics of 16 fields each use about 340 000.
MAX_VALUES = 1_000_000
#: Most digits in one number literal (mantissa and exponent); a double needs at most 17 + 3.
MAX_NUMBER_DIGITS = 30

# a complete JSON string: the unrolled form has no nested quantifier to backtrack on
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# \uD800-\uDFFF escapes: only these can decode to a text that UTF-8 cannot hold
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_CHUNK = 1 << 22


def check_structure(text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH or more than MAX_VALUES values, before parsing.

    Each value but the first in an array or object follows a comma, so the values number at most
    1 + commas + containers (counted outside strings). Unbalanced or unterminated text only makes
    these counts larger; json.loads refuses it afterwards.
    """
    skeleton = _STRING.sub('""', text).encode("utf-8", "surrogatepass")
    containers = skeleton.count(b"[") + skeleton.count(b"{")
    values = 1 + skeleton.count(b",") + containers
    if values > MAX_VALUES:
        raise PlanFileError(f"the file holds about {values} values; at most {MAX_VALUES} are "
                             "allowed")
    if containers <= MAX_DEPTH:
        return
    codes = np.frombuffer(skeleton, dtype=np.uint8)
    level = 0
    for start in range(0, len(codes), _CHUNK):
        chunk = codes[start:start + _CHUNK]
        step = ((chunk == ord("[")) | (chunk == ord("{"))).astype(np.int32)
        step -= (chunk == ord("]")) | (chunk == ord("}"))
        depth = level + np.cumsum(step)
        if depth.max() > MAX_DEPTH:
            raise PlanFileError(f"the file is nested more than {MAX_DEPTH} levels deep")
        level = int(depth[-1])


def _reject_constant(name: str):
    raise PlanFileError(f"the file contains {name}, which is not a valid number here")


def _digits(text: str) -> int:
    return sum(c.isdigit() for c in text)


def _parse_float(text: str) -> float:
    if len(text) > MAX_NUMBER_DIGITS and _digits(text) > MAX_NUMBER_DIGITS:
        raise PlanFileError(f"a number with {_digits(text)} digits is too long; at most "
                             f"{MAX_NUMBER_DIGITS} are allowed")
    value = float(text)
    if not math.isfinite(value):
        raise PlanFileError(f"the number {text} is too large for a double")
    return value


def _parse_int(text: str) -> int:
    if len(text) > MAX_NUMBER_DIGITS and _digits(text) > MAX_NUMBER_DIGITS:
        raise PlanFileError(f"a whole number with {_digits(text)} digits is too large; at most "
                             f"{MAX_NUMBER_DIGITS} are allowed")
    return int(text)


def check_text(text: str) -> Any:
    """Parse strict JSON within the limits; the parsed value, or PlanFileError."""
    check_structure(text)
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_parse_float,
                           parse_int=_parse_int)
    except PlanFileError:
        raise
    except ValueError as exc:      # JSONDecodeError is a ValueError
        raise PlanFileError(f"the file is not valid JSON: {exc}") from None
    if _SURROGATE_ESCAPE.search(text):
        _check_encodable(value)
    return value


def _check_encodable(value: Any) -> None:
    """A "\\ud800" escape alone decodes to a lone surrogate: it loads, but no UTF-8 file can hold
    it, so the plan could never be saved. Refused here; valid pairs are joined by json.loads."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PlanFileError(f"the file holds a text with a lone UTF-16 surrogate "
                             f"({exc.object[exc.start]!r}), which is not valid Unicode") from None


def encode(value: Any, max_bytes: int) -> bytes:
    """UTF-8 JSON of ``value`` that ``check_text`` accepts and that fits ``max_bytes``: indented
    if that fits, else compact. Raises PlanFileError saying why it cannot be written."""
    for options in ({"indent": 1}, {"separators": (",", ":")}):
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False, **options) + "\n"
        except (ValueError, TypeError, RecursionError) as exc:   # NaN, a set, a cycle
            raise PlanFileError(f"the plan holds a value JSON cannot represent: {exc}") from None
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise PlanFileError(f"a text holds a lone UTF-16 surrogate "
                                 f"({exc.object[exc.start]!r}), which a UTF-8 file cannot hold"
                                 ) from None
        if len(data) <= max_bytes:
            check_text(text)      # the reader's own checks: what is written opens again
            return data
    raise PlanFileError(f"the plan takes {len(data)} bytes even without indentation; a plan file "
                         f"may have at most {max_bytes}")
