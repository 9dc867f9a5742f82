"""The registry is the one home of the theorems: every consumer derives its list from it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpplanner import engine
from dpplanner.engine import theorems
from dpplanner.engine.types import Composition


def test_names_are_unique_and_entries_complete():
    names = [t.name for t in theorems.REGISTRY]
    assert len(names) == len(set(names))
    for t in theorems.REGISTRY:
        assert t.label and t.title and t.summary and t.help.strip()
        assert t.dash in ("solid", "dash", "dot")
        assert t.evaluated in ("here", "helper", "either")
        assert all(c.startswith("#") and len(c) == 7 for c in t.colours)
    assert engine.THEOREMS == tuple(names)
    assert set(engine.ALLOCATION_THEOREMS) == {t.name for t in theorems.REGISTRY if t.allocates}


def test_unknown_theorem_is_refused_with_the_known_list():
    with pytest.raises(ValueError, match="unknown theorem 'renyi'; known theorems are basic, advanced"):
        engine.compose([1.0], [0.0], 1e-6, theorem="renyi")


def test_dispatch_goes_through_the_registry(monkeypatch):
    """A new entry is composed, curved and allocated by the public API with no other edit."""
    def toy_compose(c):
        return Composition("toy", float(np.sum(c.plan.eps * c.plan.mult)) * 2.0, c.delta_g)

    def toy_curve(c):
        return np.cumsum(c.eps)[c.ks - 1] * 2.0, None

    toy = theorems.Theorem("toy", "toy", "Toy composition", "Twice the sum.", "<p>toy</p>",
                           toy_compose, toy_curve, allocates=True, colours=("#123456", "#654321"))
    monkeypatch.setitem(theorems.BY_NAME, "toy", toy)
    assert engine.compose([0.5, 0.25], [0.0, 0.0], 1e-6, theorem="toy").epsilon == 1.5
    results = engine.compose_all([0.5], [0.0], 1e-6, theorems=("basic", "toy"))
    assert results["toy"].epsilon == 1.0 and results["basic"].epsilon == 0.5
    c = engine.curve([0.5, 0.25], [0.0, 0.0], 1e-6, theorems=("toy",))
    assert list(c.upper["toy"]) == [1.0, 1.5]
    a = engine.allocate([0.1, 0.1], [0.0, 0.0], [False, False], [1.0, 1.0], 1.0, 1e-6, theorem="toy")
    assert a.composition.epsilon <= 1.0 and math.isclose(a.composition.epsilon, 1.0, rel_tol=1e-6)


def test_mechanism_tags_are_checked():
    with pytest.raises(ValueError, match=r"mechanisms\[0\] = 'lap' is not allowed"):
        engine.compose([1.0], [0.0], 1e-6, mechanisms=["lap"])
    with pytest.raises(ValueError, match=r"mechanisms\[0\] is 'laplace' but .* delta 0"):
        engine.compose([1.0], [1e-9], 1e-6, mechanisms=["laplace"])
    with pytest.raises(ValueError, match=r"mechanisms\[0\] is 'gaussian' but .* delta > 0"):
        engine.compose([1.0], [0.0], 1e-6, mechanisms=["gaussian"])
    # generic theorems ignore the tags
    tagged = engine.compose([1.0, 0.5], [0.0, 1e-8], 1e-6, theorem="basic", mechanisms=["laplace", "gaussian"])
    assert tagged.epsilon == engine.compose([1.0, 0.5], [0.0, 1e-8], 1e-6, theorem="basic").epsilon


def test_theorem_names_are_quoted_only_by_the_engine():
    """Outside the engine (which implements the theorems, each module naming its own), no code
    quotes a theorem's name: defaults, the evaluation's split, the profile's colour and the like
    come from the registry (engine/theorems.py), so a renamed or added theorem changes one place."""
    import ast
    from pathlib import Path

    from dpplanner.engine import THEOREMS

    root = Path(__file__).resolve().parents[2] / "dpplanner"
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.is_relative_to(root / "engine"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in THEOREMS and id(node) not in docstrings:
                found.append(f"{path.relative_to(root)}:{node.lineno} {node.value!r}")
    assert not found
