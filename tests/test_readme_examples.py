"""The Python examples of README.md and docs/ run, and print what the text says they print.

A statement followed by comment lines (``# ...``) must produce that text: what it prints (print
calls and loops: every comment line), or its value (the first comment line: its repr, str, or a
tuple's items joined by spaces; runs of spaces do not count). ``1.2345...`` stands for a number
within one unit of its last digit shown; a note after four or more spaces, ``(like this)``, is not
output. A page's blocks run in order as one session (a later block may use an earlier one's
names). A block followed by a paragraph "prints" and a ```text block must print exactly that
block. Blocks run in a fresh folder with benchmarks/ importable (the page on measuring shows a
bench row). Blocks that extend the package itself (relative imports, fragments of a module) are
run by test_docs_worked_example.py instead; a block that uses an optional peer (dp_accounting, opendp) needs that extra installed.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import re

import pytest

from doc_pages import ROOT, Block, blocks

#: Packages an example may use that `make test` does not install (extras for benchmarks).
OPTIONAL = ("dp_accounting", "opendp")


def extends_the_package(block: Block) -> bool:
    """A module of the package (relative imports) or a fragment of one (indented): the worked
    example of a new theorem, run by test_docs_worked_example.py instead."""
    return bool(re.search(r"^\s*from \.", block.code, re.M)) or block.code[:1].isspace()


def _examples() -> list[Block]:
    return [b for b in blocks() if b.lang == "python" and not extends_the_package(b)]


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


def test_every_page_example_is_collected():
    pages = {b.page for b in _examples()}
    assert {"docs/reference/engine-api.md", "docs/reference/plan-api.md"} <= pages


def _pages() -> list[tuple[str, list[Block]]]:
    """Each page with its examples, in order: a page's examples run as one session, so a later
    block may use what an earlier one defined."""
    pages: dict[str, list[Block]] = {}
    for b in _examples():
        pages.setdefault(b.page, []).append(b)
    return list(pages.items())


@pytest.mark.parametrize("page, examples", _pages(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_pages_examples_run_and_print_what_they_say(page, examples, tmp_path, monkeypatch):
    for name in OPTIONAL:
        if any(re.search(rf"^\s*(from|import) {name}\b", b.code, re.M) for b in examples) \
                and not importlib.util.find_spec(name):
            pytest.skip(f"{page} uses {name}, an optional extra that is not installed")
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    monkeypatch.chdir(tmp_path)                   # (an example saves a file)
    namespace: dict = {"__name__": "readme"}
    for block in examples:
        _run_block(block, namespace)


def _run_block(block: Block, namespace: dict) -> None:
    page, first_line, code = block.page, block.line, block.code
    lines = code.splitlines()
    checked = 0
    printed = io.StringIO()
    for node in ast.parse(code).body:
        source = compile(ast.Module([node], []), f"{page}:{first_line + node.lineno - 1}", "exec")
        printing = isinstance(node, (ast.For, ast.With)) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and getattr(node.value.func, "id", "") == "print")
        expected = _expected(lines, node.end_lineno, first_only=not printing)
        if isinstance(node, ast.Expr) and not printing:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                value = eval(compile(ast.Expression(node.value), source.co_filename, "eval"), namespace)
            printed.write(out.getvalue())
            if expected:
                assert _matches(" ".join(expected), _shown(value)), \
                    f"{source.co_filename}: the text says {expected}, the code gives {_shown(value)[0]}"
                checked += 1
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(source, namespace)
        printed.write(out.getvalue())
        # an output under a statement that shows nothing (an assignment) would go unchecked
        assert printing or not expected or out.getvalue(), \
            f"{source.co_filename}: output {expected} under a statement that shows no value"
        if printing and expected:
            got = out.getvalue().splitlines()
            assert len(got) == len(expected) and all(_matches(e, [g]) for e, g in zip(expected, got)), \
                f"{source.co_filename}: the text says\n" + "\n".join(expected) + "\nthe code prints\n" + "\n".join(got)
            checked += 1
    if block.prints is not None:
        got, said = printed.getvalue().splitlines(), block.prints.splitlines()
        assert len(got) == len(said) and all(_matches(e, [g]) for e, g in zip(said, got)), \
            f"{block.where}: the text says it prints\n{block.prints}\nit prints\n{printed.getvalue()}"
        checked += 1
    assert checked or not any(line.strip().startswith("# ") for line in lines)
