"""dpplanner-cli export-opendp / check-opendp, and what implementing each statistic needs in
compose/allocate --json."""

from __future__ import annotations

import json

import pytest

from dpplanner.cli import main
from dpplanner.engine.theorems import REGISTRY
from dpplanner.model.files import load_plan, save_plan
from dpplanner.release.export import plan_text, script_plan
from release_scripts import opendp_example


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    """psi-survey and census (the shipped examples have OpenDP noise)."""
    folder = tmp_path_factory.mktemp("plans")
    out = {}
    for name in ("psi-survey", "census"):
        out[name] = folder / f"{name}.dpplan"
        save_plan(opendp_example(name), out[name])
    return out


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_export_then_check_matches(capsys, tmp_path, plans):
    script = tmp_path / "release.py"
    code, out, _ = run(capsys, "export-opendp", str(plans["psi-survey"]), "-o", str(script))
    assert code == 0 and "pinned to opendp==0.16.*" in out
    code, out, _ = run(capsys, "check-opendp", str(script), str(plans["psi-survey"]))
    assert code == 0 and "matches the plan" in out


def test_an_edited_scale_is_named_and_exits_1(capsys, tmp_path, plans):
    script = tmp_path / "release.py"
    run(capsys, "export-opendp", str(plans["psi-survey"]), "-o", str(script))
    text = script.read_text()
    scale = load_plan(plans["psi-survey"]).privacy(0).opendp.scale
    script.write_text(text.replace(f"'scale': {scale!r}", f"'scale': {scale * 0.99!r}", 1))
    code, out, _ = run(capsys, "check-opendp", str(script), str(plans["psi-survey"]), "--json")
    doc = json.loads(out)
    assert code == 1 and doc["matches"] is False
    assert any(d.startswith("PLAN.statistics[0].scale is ") for d in doc["differences"])
    assert any("PLAN_DIGEST does not match" in d for d in doc["differences"])


def test_edited_code_is_found_but_the_data_block_may_change(capsys, tmp_path, plans):
    script = tmp_path / "release.py"
    run(capsys, "export-opendp", str(plans["census"]), "-o", str(script))
    text = script.read_text().replace('OUT_DIR = "release-output"', 'OUT_DIR = "results"')
    script.write_text(text)
    assert run(capsys, "check-opendp", str(script), str(plans["census"]))[0] == 0
    script.write_text(text.replace("SCALE_RAISE_LIMIT = 1e-9", "SCALE_RAISE_LIMIT = 1e-3"))
    code, out, _ = run(capsys, "check-opendp", str(script), str(plans["census"]))
    assert code == 1 and "code differs from the generated one at line" in out


def test_a_plan_opendp_cannot_release_is_refused_with_the_reason(capsys, tmp_path):
    plan = tmp_path / "old.dpplan"
    plan.write_text(json.dumps({"format_version": 1, "budget": {"epsilon": 1.0, "delta": 1e-6},
                                "statistics": [{"name": "n", "kind": "count", "mechanism": "laplace",
                                                "epsilon": 0.5}]}))
    code, _, err = run(capsys, "export-opendp", str(plan), "-o", str(tmp_path / "r.py"))
    assert code == 2 and "planned with continuous noise" in err
    assert not (tmp_path / "r.py").exists()


def test_validate_tells_a_migrated_plan(capsys, tmp_path):
    plan = tmp_path / "old.dpplan"
    plan.write_text(json.dumps({"format_version": 1, "budget": {"epsilon": 1.0, "delta": 1e-6},
                                "statistics": [{"name": "n", "kind": "count", "mechanism": "laplace",
                                                "epsilon": 0.5}]}))
    code, out, _ = run(capsys, "validate", str(plan), "--json")
    assert code == 0 and any("continuous noise it was planned with" in w for w in json.loads(out)["warnings"])


@pytest.mark.parametrize("command", ["compose", "allocate"])
def test_json_says_what_implementing_each_statistic_needs(capsys, command, plans):
    code, out, _ = run(capsys, command, str(plans["psi-survey"]), "--json", "--theorem", "basic")
    doc = json.loads(out)
    rows = doc["implementations"] if command == "compose" else doc["statistics"]
    mean = next(r for r in rows if r["name"] == "mean household size")["implementation"]
    assert mean["noise"] == "opendp" and mean["noise_kind"] == "discrete Gaussian"
    assert mean["d_in"] == 2 and mean["bounds"] == [1.0, 12.0] and mean["divisor"] == 2500
    assert mean["rho"] > 0 and mean["delta"] > 0 and mean["lattice"].startswith("multiples of 2^")
    assert mean["sensitivity_l2"] > 11.0



def _named_the_old_way(block: dict) -> dict:
    """A PLAN block as exported before the theorems were written by their labels: by name."""
    names = {t.label: t.name for t in REGISTRY}
    return dict(block, theorem=names[block["theorem"]],
                totals={names[label]: total for label, total in block["totals"].items()})


def test_a_script_naming_its_theorems_the_old_way_still_matches(capsys, tmp_path, plans):
    script = tmp_path / "release.py"
    run(capsys, "export-opendp", str(plans["psi-survey"]), "-o", str(script))
    plan = load_plan(plans["psi-survey"])
    block, text = script_plan(plan), script.read_text()
    old = _named_the_old_way(block)
    assert plan_text(block) in text
    assert old["theorem"] != block["theorem"] and old["totals"].keys() != block["totals"].keys()

    def check(edited: dict) -> tuple[int, list]:
        script.write_text(text.replace(plan_text(block), plan_text(edited)))
        code, out, _ = run(capsys, "check-opendp", str(script), str(plans["psi-survey"]), "--json")
        return code, json.loads(out)["differences"]

    assert check(old) == (0, [])
    # ... but not one whose noise differs, nor one that names another theorem
    scale = plan.privacy(0).opendp.scale
    noisier = dict(old, statistics=[dict(old["statistics"][0], scale=scale * 0.99), *old["statistics"][1:]])
    assert check(noisier) == (1, [f"PLAN.statistics[0].scale is {scale * 0.99!r}; the plan has {scale!r}"])
    other = next(t for t in REGISTRY if t.name != t.label != block["theorem"])
    code, differences = check(dict(old, theorem=other.name))
    assert code == 1 and differences == [f"PLAN.theorem is {other.label!r}; the plan has {block['theorem']!r}"]
