"""The peers the tests compare against (dp_accounting, opendp, resvg-py) are extras: a test file
reaches them through pytest.importorskip only, so the suite still runs where one is missing."""

from __future__ import annotations

import ast
from pathlib import Path

PEERS = ("dp_accounting", "opendp", "resvg_py")
TESTS = Path(__file__).resolve().parent


def plain_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of every import statement of a peer, at any depth of the file."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        found += [(node.lineno, n) for n in names if n.split(".")[0] in PEERS]
    return found


def test_no_test_imports_a_peer_without_importorskip():
    bad = [f"{path.relative_to(TESTS)}:{line}: import {name}"
           for path in sorted(TESTS.rglob("*.py"))
           for line, name in plain_imports(path.read_text(encoding="utf-8"))]
    assert not bad, "use pytest.importorskip for a test extra:\n" + "\n".join(bad)


def test_the_scan_sees_imports_inside_functions():
    src = "def f():\n    from dp_accounting.pld import common\n    import opendp.prelude as dp\n"
    assert plain_imports(src) == [(2, "dp_accounting.pld"), (3, "opendp.prelude")]
    assert plain_imports('pld = pytest.importorskip("dp_accounting.pld")\nimport numpy\n') == []
