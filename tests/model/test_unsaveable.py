"""Saving does what a desktop user expects (issue 23.7): a read-only file is not replaced but
refused with the reason, a file with other hard links is replaced and the save says the other
names keep the old contents, and a plan whose text no plan file can hold is refused by the model
at the edit - not at every later save and autosave."""

from __future__ import annotations

import os
import stat

import pytest

from dpplanner.cli import main as cli
from dpplanner.model import Budget, Kind, Plan, PlanError, Statistic, files
from dpplanner.model.csvio import save_csv
from dpplanner.model.files import MAX_FILE_BYTES, PlanFileError, load_plan, save_plan
from dpplanner.model.report import save_report


def small() -> Plan:
    return Plan(Budget(epsilon=1.0, delta=1e-6, redistribute=False, dataset_size=1000),
                [Statistic("n", kind=Kind.COUNT, epsilon=0.5)], title="small")


@pytest.mark.parametrize("write", [
    lambda plan, path: save_plan(plan, path),
    lambda plan, path: save_csv(plan, path),
    lambda plan, path: save_report(plan, path),
], ids=["plan", "csv", "report"])
def test_a_read_only_file_is_refused_and_left_as_it_was(tmp_path, write):
    path = tmp_path / "kept.out"
    path.write_bytes(b"the user's old file")
    os.chmod(path, 0o444)
    with pytest.raises(PlanFileError, match="kept.out: the file is read-only; nothing was written"):
        write(small(), path)
    assert path.read_bytes() == b"the user's old file"
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert sorted(os.listdir(tmp_path)) == ["kept.out"]          # no temporary file left


def test_a_hard_linked_file_is_saved_and_the_save_says_the_other_name_keeps_the_old(tmp_path):
    path, other = tmp_path / "plan.dpplan", tmp_path / "backup-link.dpplan"
    save_plan(small(), path)
    os.link(path, other)
    old = other.read_bytes()
    changed = small()
    changed.set_metadata(title="changed")
    note = save_plan(changed, path)
    assert note == f"{path} had 1 other hard link: it keeps the previous contents (a save writes a new file)"
    assert load_plan(path).title == "changed" and other.read_bytes() == old
    assert save_plan(changed, path) is None                        # no other link any more


def test_the_command_line_refuses_a_read_only_output_and_notes_a_hard_link(tmp_path, capsys):
    out = tmp_path / "report.html"
    out.write_text("old")
    os.chmod(out, 0o444)
    assert cli(["report", "psi-survey", "-o", str(out)]) == 2
    assert "the file is read-only; nothing was written" in capsys.readouterr().err
    os.chmod(out, 0o644)
    os.link(out, tmp_path / "alias.html")
    assert cli(["report", "psi-survey", "-o", str(out)]) == 0
    assert "(note: " in capsys.readouterr().out and (tmp_path / "alias.html").read_text() == "old"


def test_a_title_no_file_can_hold_is_refused_at_the_edit():
    plan = small()
    with pytest.raises(PlanError, match=r"title holds a lone UTF-16 surrogate \('\\ud800'\)"):
        plan.set_metadata(title="a\ud800b")
    with pytest.raises(PlanError, match="description holds a lone UTF-16 surrogate"):
        Plan(Budget(), [], description="\udfff")
    assert plan.title == "small"
    files.dumps_plan(plan)                                         # still saveable


def test_a_plan_past_the_file_size_limit_is_refused_at_the_edit(tmp_path):
    plan = small()
    revision = plan.revision
    huge = "x" * (MAX_FILE_BYTES + 1)
    with pytest.raises(PlanError, match=r"a plan file could not hold this plan: .* \(the longest text "
                                        r"is the plan's description: 20,971,521 characters; shorten it"):
        plan.set_metadata(description=huge)
    with pytest.raises(PlanError, match="the longest text is statistic 1's description"):
        plan.update_statistic(0, plan[0].replace(description=huge))
    assert plan.revision == revision and plan.description == ""
    # just under the limit is fine: the model takes it and a save writes it
    fits = "é" * (4 * 1024 * 1024)                                 # 8 MB of UTF-8, 24 MB bound
    plan.set_metadata(description=fits)
    save_plan(plan, tmp_path / "big.dpplan")
    assert load_plan(tmp_path / "big.dpplan").description == fits


def test_unknown_fields_no_file_can_hold_are_refused_at_the_edit():
    with pytest.raises(PlanError, match="a plan file could not hold this plan: the plan holds a "
                                        "value JSON cannot represent"):
        Plan(Budget(), [Statistic("n", extra={"when": float("nan")})])
    nested: object = 0
    for _ in range(40):
        nested = [nested]
    with pytest.raises(PlanError, match="nested more than 32 levels"):
        Plan(Budget(extra={"deep": nested}), [])
