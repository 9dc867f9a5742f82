"""Every view that lists theorems lists exactly the registry's, with its label, colour and help."""

from __future__ import annotations

from pathlib import Path

from dpplanner import engine
from dpplanner.cli import build_parser
from dpplanner.gui import theme
from dpplanner.help_docs import THEOREMS
from dpplanner.model.report import plan_totals
from dpplanner.model.examples import example_path
from dpplanner.model.files import load_plan

ROOT = Path(__file__).resolve().parents[2]


def _choices(parser, command):
    sub = next(a for a in parser._actions if a.dest == "command")
    p = sub.choices[command]
    return tuple(next(a for a in p._actions if a.dest == "theorem").choices)


def test_views_follow_the_registry():
    page = (ROOT / THEOREMS.path).read_text(encoding="utf-8")       # what Help shows
    assert all(f"## {t.title}" in page and t.help.strip() in page for t in engine.REGISTRY)
    for t in engine.REGISTRY:
        assert theme.LIGHT.curves[t.name] == t.colours[0] and theme.DARK.curves[t.name] == t.colours[1]
    parser = build_parser()
    assert _choices(parser, "compose") == engine.THEOREMS
    assert _choices(parser, "allocate") == engine.ALLOCATION_THEOREMS
    totals, _best = plan_totals(load_plan(example_path("psi-survey")))
    assert tuple(totals) == engine.THEOREMS
