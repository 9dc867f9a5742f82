"""Issue 24.3 and 24.8 at the command line: `target` pins a statistic at an error the plan keeps
(saved, met after later changes), `allocate` shows it, a version-1 file has none, and `compose`
says what the spent total assumes."""

from __future__ import annotations

import json

from dpplanner.cli import main
from dpplanner.model import files
from dpplanner.model.redistribution import rebalanced_edit


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_target_pins_an_error_saves_it_and_later_edits_keep_it(capsys, tmp_path):
    out_path = tmp_path / "survey.dpplan"
    code, out, err = run(capsys, "target", "psi-survey", "mean age", "0.5", "-o", out_path)
    assert code == 0 and err == "", err
    assert "mean age: target error 0.5 age" in out and "redistributed" in out
    plan = files.load_plan(out_path)
    assert plan[1].target_error == 0.5 and plan.privacy(1).error <= 0.5
    rebalanced_edit(plan, lambda p: p.set_budget(confidence=0.99))
    assert plan.privacy(1).error <= 0.5
    code, out, _ = run(capsys, "allocate", out_path, "--json")
    row = json.loads(out)["statistics"][1]
    assert row["target_error"] == 0.5 and row["error"] <= 0.5
    code, out, _ = run(capsys, "allocate", out_path)
    assert "T pinned at its target error" in out


def test_target_by_number_and_refusals_name_the_problem(capsys, tmp_path):
    code, out, _ = run(capsys, "target", "psi-survey", "2", "0.5", "--json")
    assert code == 0 and json.loads(out)["statistic"] == "mean age"
    code, _, err = run(capsys, "target", "psi-survey", "nine", "0.5")
    assert code == 2 and "no statistic 'nine'" in err
    code, _, err = run(capsys, "target", "psi-survey", "2", "-1")
    assert code == 2 and "error: target error = -1 is not allowed" in err, err
    code, _, err = run(capsys, "target", "psi-survey", "2", "0,5")    # the field named, once
    assert code == 2 and "error: Target error: '0,5' is not a number" in err, err
    code, _, err = run(capsys, "target", "psi-survey", "2", "0.0001")      # needs ε > ε_g
    assert code == 2 and "mean age" in err


def test_a_version_1_file_has_no_targets_and_validate_says_it_was_migrated(capsys, tmp_path):
    path = tmp_path / "old.dpplan"
    path.write_text(json.dumps({"format_version": 1, "budget": {"epsilon": 1.0, "delta": 1e-5},
                                "statistics": [{"name": "a", "kind": "count", "mechanism": "laplace",
                                                "epsilon": 0.5, "held": True}]}))
    code, out, _ = run(capsys, "validate", path)
    assert code == 0 and "saving writes format_version 2" in out
    assert files.load_plan(path)[0].target_error is None
    files.save_plan(files.load_plan(path), path)
    code, out, _ = run(capsys, "validate", path, "--json")
    assert not any("format_version" in w for w in json.loads(out)["warnings"])


def test_compose_says_what_the_noise_aware_total_assumes(capsys):
    code, out, _ = run(capsys, "compose", "psi-survey")
    assert code == 0
    note = next(line for line in out.splitlines() if line.startswith("note: "))
    assert "the noise it is planned with" in note and "under optimal composition" in note
