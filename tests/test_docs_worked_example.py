"""The development guide's worked example, "Adding a theorem", works as written: its module and
its registry entry give a theorem that the public API composes, curves and allocates."""

from __future__ import annotations

import math
import types

from doc_pages import blocks
from dpplanner import engine
from dpplanner.engine import theorems
from test_readme_examples import extends_the_package


def _worked_example():
    return [b for b in blocks() if b.lang == "python" and extends_the_package(b)]


def test_the_worked_example_is_every_block_the_example_test_leaves_out():
    assert [b.page for b in _worked_example()] == ["docs/development/architecture.md"] * 2


def test_adding_a_theorem_as_the_guide_says(monkeypatch):
    module_block, entry_block = _worked_example()
    module = types.ModuleType("dpplanner.engine.twice")
    module.__package__ = "dpplanner.engine"          # its relative imports, as in the package
    exec(compile(module_block.code, module_block.where, "exec"), module.__dict__)
    entry = eval(compile(entry_block.code.strip().rstrip(","), entry_block.where, "eval"),
                 {"Theorem": theorems.Theorem, "twice": module.twice, "twice_curve": module.twice_curve})
    monkeypatch.setitem(theorems.BY_NAME, entry.name, entry)

    eps, deltas = [0.5, 0.25], [0.0, 0.0]
    basic = engine.compose(eps, deltas, 1e-6, theorem="basic").epsilon
    assert engine.compose(eps, deltas, 1e-6, theorem="twice").epsilon == 2 * basic
    c = engine.curve(eps, deltas, 1e-6, theorems=("basic", "twice"))
    assert list(c.upper["twice"]) == [2 * v for v in c.upper["basic"]] and c.lower["twice"] is None
    a = engine.allocate([0.1, 0.1], deltas, [False, False], [1.0, 1.0], 1.0, 1e-6, theorem="twice")
    assert a.composition.epsilon <= 1.0 and math.isclose(a.composition.epsilon, 1.0, rel_tol=1e-6)
