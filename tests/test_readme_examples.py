"""The Python examples of README.md and docs/ run, and print what the text says they print.

A statement followed by comment lines (``# ...``) must produce that text: what it prints (print
calls and loops: every comment line), or its value (the first comment line: its repr, str, or a
tuple's items joined by spaces; runs of spaces do not count). ``1.2345...`` stands for a number
within one unit of its last digit; a note after four or more spaces, ``(like this)``, is not
output.
Blocks that extend the package itself (relative imports) are left out.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _blocks() -> list[tuple[str, int, str]]:
    """(page, line number of the first line, code) of each ```python block that imports dpplanner."""
    return [(page.relative_to(ROOT).as_posix(), line, code) for page in PAGES
            for line, code in _page_blocks(page)]


def _page_blocks(page: Path) -> list[tuple[int, str]]:
    out, lines = [], page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            j = i + 1
            while lines[j].strip() != "```":
                j += 1
            code = "\n".join(lines[i + 1:j])
            if code.lstrip().startswith(("from dpplanner", "import dpplanner")):
                out.append((i + 2, code))
            i = j
        i += 1
    return out


def _expected(lines: list[str], end: int, first_only: bool) -> list[str]:
    """The comment lines right after line ``end`` (1-based within the block), notes removed; for
    a value only the first (the lines after it are prose)."""
    text = []
    for line in lines[end:]:
        stripped = line.strip()
        if not stripped.startswith("# "):
            break
        text.append(re.sub(r"\s{4,}\(.*\)$", "", stripped[2:]))
    return text[:1] if first_only else text


_SHORTENED = re.compile(r"(-?\d+\.(\d+))\.\.\.")


def _normal(text: str) -> str:
    """numpy's column padding and other runs of spaces do not count."""
    return re.sub(r"\s+\]", "]", re.sub(r"\[\s+", "[", re.sub(r"\s+", " ", text.strip())))


def _matches(expected: str, candidates: list[str]) -> bool:
    """``1.2345...`` stands for a number within one unit of its last digit shown."""
    expected = _normal(expected)
    parts = _SHORTENED.split(expected)
    pattern = "".join(re.escape(part) if i % 3 == 0 else ("(-?[0-9.e+-]+)" if i % 3 == 1 else "")
                      for i, part in enumerate(parts))
    shown = [(float(m.group(1)), 10.0 ** -len(m.group(2))) for m in _SHORTENED.finditer(expected)]
    for candidate in candidates:
        found = re.fullmatch(pattern, _normal(candidate))
        if found and all(abs(float(g) - v) <= unit for g, (v, unit) in zip(found.groups(), shown)):
            return True
    return False


def _shown(value) -> list[str]:
    shown = [repr(value), str(value)]
    if isinstance(value, tuple):
        shown.append(" ".join(str(v) for v in value))
    return shown


@pytest.mark.parametrize("page, first_line, code", _blocks(),
                         ids=lambda x: x if isinstance(x, str) and x.endswith(".md") else
                         (str(x) if isinstance(x, int) else ""))
def test_an_example_runs_and_prints_what_it_says(page, first_line, code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                   # (an example saves a file)
    lines = code.splitlines()
    namespace: dict = {"__name__": "readme"}
    checked = 0
    for node in ast.parse(code).body:
        source = compile(ast.Module([node], []), f"{page}:{first_line + node.lineno - 1}", "exec")
        printing = isinstance(node, (ast.For, ast.With)) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", "") == "print")
        expected = _expected(lines, node.end_lineno, first_only=not printing)
        if isinstance(node, ast.Expr) and not printing:
            value = eval(compile(ast.Expression(node.value), source.co_filename, "eval"), namespace)
            if expected:
                assert _matches(" ".join(expected), _shown(value)), \
                    f"{source.co_filename}: the text says {expected}, the code gives {_shown(value)[0]}"
                checked += 1
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(source, namespace)
        if printing and expected:
            got = out.getvalue().splitlines()
            assert len(got) == len(expected) and all(_matches(e, [g]) for e, g in zip(expected, got)), \
                f"{source.co_filename}: the text says\n" + "\n".join(expected) + "\nthe code prints\n" + "\n".join(got)
            checked += 1
    assert checked or not any(line.strip().startswith("# ") for line in lines)
