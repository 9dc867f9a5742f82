"""Strict JSON for plan files: structural limits checked before parsing, and the same checks on
what is written, so a saved plan always opens again.

The limits are checked on the text's skeleton (strings blanked out) before ``json.loads`` builds
anything, so a hostile file is refused after a few linear scans at C speed instead of after
building millions of Python objects. Numbers too long or too large and NaN and Infinity are
refused. ``check_text`` is the whole reader-side check, which the writer runs on its own output.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .fileio import PlanFileError

#: Deepest nesting of arrays and objects, counting the top-level object as 1.
MAX_DEPTH = 32
#: Most values (objects, arrays, strings, numbers, true/false/null) in one file: 20 000
#: statistics of 16 fields each use about 340 000.
MAX_VALUES = 1_000_000
#: Most digits in one number literal (mantissa and exponent); a double needs at most 17 + 3.
MAX_NUMBER_DIGITS = 30
#: A literal's negative exponent from which it may be nearer 0 than the least normal double,
#: 2.2e-308 (a mantissa of at most 30 digits moves it by at most 30).
NEAR_ZERO_EXPONENT = 307 - MAX_NUMBER_DIGITS

# a complete JSON string: the unrolled form has no nested quantifier to backtrack on
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# the characters a JSON number is written with
_NUMBER_CHARS = b"-+.eE0123456789"
# \uD800-\uDFFF escapes: only these can decode to a text that UTF-8 cannot hold
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_CHUNK = 1 << 22


def _skeleton(text: str) -> bytes:
    """The text with every string emptied: what is left is structure, numbers and literals."""
    return _STRING.sub('""', text).encode("utf-8", "surrogatepass")


def check_structure(skeleton: bytes) -> None:
    """Refuse nesting deeper than MAX_DEPTH or more than MAX_VALUES values, before parsing.

    Each value but the first in an array or object follows a comma, so the values number at most
    1 + commas + containers (counted outside strings). Unbalanced or unterminated text only makes
    these counts larger; json.loads refuses it afterwards.
    """
    containers = skeleton.count(b"[") + skeleton.count(b"{")
    values = 1 + skeleton.count(b",") + containers
    if values > MAX_VALUES:
        raise PlanFileError(f"the file holds about {values} values; at most {MAX_VALUES} are "
                            "allowed")
    if containers <= MAX_DEPTH:
        return
    import numpy as np      # here: importing the model imports no numpy

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


def check_numbers(skeleton: bytes) -> tuple[bool, bool]:
    """Refuse a number literal with more than MAX_NUMBER_DIGITS digits (integer or decimal);
    return whether a literal might overflow a double, and whether one might be nearer 0 than a
    normal double (then check_text checks the parsed value, or the literals).

    Works on the runs of number characters, found with numpy, so a file of a million short
    numbers costs a few vector passes. Only a run longer than MAX_NUMBER_DIGITS can hold that
    many digits; with at most 30 digits only a positive exponent of 3 or more digits can overflow,
    and only a negative one of at least NEAR_ZERO_EXPONENT come near the least normal double.
    """
    import numpy as np      # here: importing the model imports no numpy

    number_char = np.zeros(256, dtype=bool)
    number_char[list(_NUMBER_CHARS)] = True
    codes = np.frombuffer(skeleton, dtype=np.uint8)
    inside = np.zeros(len(codes) + 2, dtype=bool)
    inside[1:-1] = number_char[codes]
    edges = np.flatnonzero(inside[1:] != inside[:-1])     # run i is codes[edges[2i]:edges[2i+1]]
    starts, ends = edges[0::2], edges[1::2]
    long_runs = ends - starts > MAX_NUMBER_DIGITS
    for start, end in zip(starts[long_runs], ends[long_runs]):
        digits = sum(c in b"0123456789" for c in skeleton[start:end])
        if digits > MAX_NUMBER_DIGITS:
            raise PlanFileError(f"a number with {digits} digits is too large; at most "
                                f"{MAX_NUMBER_DIGITS} digits are allowed")
    marks = np.flatnonzero((codes == ord("e")) | (codes == ord("E")))
    if not len(marks):
        return False, False
    run_end = ends[np.searchsorted(ends, marks, side="right")]        # end of each mark's run
    after = np.append(codes, 0)[marks + 1]
    exponent_chars = run_end - marks - 1 - (after == ord("+"))
    negative = (after == ord("-")) & (exponent_chars >= 4)
    # (a run whose exponent is not all digits is no number: json.loads says so, with the place)
    tiny = any(skeleton[m + 2:e].isdigit() and int(skeleton[m + 2:e]) >= NEAR_ZERO_EXPONENT
               for m, e in zip(marks[negative], run_end[negative]))
    return bool(np.any((after != ord("-")) & (exponent_chars >= 3))), tiny


def _reject_constant(name: str):
    raise PlanFileError(f"the file contains {name}, which is not a valid number here")


def check_text(text: str) -> Any:
    """Parse strict JSON within the limits; the parsed value, or PlanFileError.

    json.loads parses numbers natively (a Python hook per number would triple the time of a
    file of numbers); the limits on them are checked on the skeleton instead.
    """
    skeleton = _skeleton(text)
    check_structure(skeleton)
    may_overflow, near_zero = check_numbers(skeleton)
    try:
        value = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except PlanFileError:
        raise
    except _DuplicateKey:
        raise PlanFileError(_where_duplicated(text)) from None
    except ValueError as exc:      # JSONDecodeError is a ValueError
        raise PlanFileError(f"the file is not valid JSON: {exc}") from None
    if may_overflow:
        _check_finite(value)
    if _SURROGATE_ESCAPE.search(text):
        _check_encodable(value)
    if near_zero:
        _check_stored(text)
    return value


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list) -> dict:
    """An object whose key repeats is refused: with "last wins" a second "epsilon": 1.0 would
    hide a first -7, a second "statistics": [] a whole plan. (One C-built dict per object; the
    comparison of lengths is all a valid file pays.)"""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _DuplicateKey
    return obj


def _where_duplicated(text: str) -> str:
    """Where the first repeated key is, for the message: parsed again (only after a refusal)
    with the objects that repeat a key remembered, then found in the document."""
    repeated: dict[int, str] = {}

    def remember(pairs: list) -> dict:
        obj = dict(pairs)
        if len(obj) != len(pairs) and not repeated:
            seen: set = set()
            for k, _ in pairs:
                if k in seen:
                    repeated[id(obj)] = k
                    break
                seen.add(k)
        return obj

    doc = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=remember)
    (target, key), = repeated.items()
    path = _find(doc, lambda value: id(value) == target)[0]
    where = f"in {_described(path)}" if path else "at the top level"
    return (f"the key {_preview(key)} appears more than once {where}; a plan file may give "
            "each field once (which one was meant is not known)")


def _find(doc: Any, found) -> tuple[str, Any]:
    """(path, value) of a value in ``doc`` for which ``found`` is true ("statistics[3].delta"; ""
    for the whole document), or ("", None)."""
    stack: list[tuple[Any, str]] = [(doc, "")]
    while stack:
        value, path = stack.pop()
        if found(value):
            return path, value
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for k, v in items:
            stack.append((v, f"{path}[{k}]" if isinstance(k, int) else f"{path}.{k}" if path else k))
    return "", None


class _Unstored(str):
    """A number literal that would be stored as a different number (see _check_stored)."""


def _check_stored(text: str) -> None:
    """A number nearer 0 than the least normal double, written by hand ("1e-400" reads as 0, "3e-324"
    as 4.94e-324), is refused with its place named, as where it is typed. The shortest text of its
    double ("1e-310") reads back as the same number: a field's rule refuses it as it refuses it
    typed (FieldRule.check); under a key no field reads it is kept as written. Parsed again with a
    hook per number: only files with such small exponents pay for it."""
    from .validation import read_as_another, too_close_to_zero

    def number(literal: str):
        value = float(literal)
        return _Unstored(literal) if read_as_another(literal, value) else value

    doc = json.loads(text, parse_float=number, parse_constant=_reject_constant)
    path, literal = _find(doc, lambda value: isinstance(value, _Unstored))
    if literal is not None:
        raise PlanFileError(too_close_to_zero(_described(path) if path else "the file's number", literal))


def _described(path: str) -> str:
    """"statistics[3]" -> "statistic 4", "budget" -> "the budget", "budget.x" -> "the budget's x"."""
    match = re.fullmatch(r"statistics\[(\d+)\]\.?(.*)", path)
    if match:
        return f"statistic {int(match.group(1)) + 1}" + (f"'s {match.group(2)}" if match.group(2) else "")
    head, _, rest = path.partition(".")
    return f"the {head}" + (f"'s {rest}" if rest else "") if head == "budget" else path


def _preview(key: str) -> str:
    text = repr(key)
    return text if len(text) <= 100 else text[:100] + "…"


def _check_finite(value: Any) -> None:
    """A literal like 1e999 parses to inf: checked once on the whole value, at C speed."""
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        raise PlanFileError("the file holds a number too large for a double (above "
                            "1.8e308)") from None


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
