"""The user guide's theorem page is the registry's text: tools/theorem_page.py writes it from
dpplanner/engine/theorems.py, and this test fails when the page and the registry drift apart."""

from __future__ import annotations

import sys

from doc_pages import ROOT
from dpplanner.engine.theorems import REGISTRY
from dpplanner.help_docs import THEOREMS, anchor

sys.path.insert(0, str(ROOT / "tools"))
import theorem_page  # noqa: E402


def test_the_page_is_what_the_registry_gives():
    page = (ROOT / THEOREMS.path).read_text(encoding="utf-8")
    assert page == theorem_page.render(), \
        "docs/guide/theorems.md drifted from the registry: run .venv/bin/python tools/theorem_page.py"


def test_every_theorem_has_its_section_with_its_help():
    page = theorem_page.render()
    for t in REGISTRY:
        assert f"\n## {t.title}\n" in page and t.help.strip() in page
        assert f"(#{anchor(t.title)})" in page


def test_check_mode_reports_drift(tmp_path, monkeypatch, capsys):
    stale = tmp_path / "theorems.md"
    stale.write_text("# an old page\n", encoding="utf-8")
    monkeypatch.setattr(theorem_page, "PAGE", stale)
    monkeypatch.setattr(theorem_page, "ROOT", tmp_path)
    assert theorem_page.main(["--check"]) == 1 and "run tools/theorem_page.py" in capsys.readouterr().out
    assert theorem_page.main([]) == 0 and theorem_page.main(["--check"]) == 0
