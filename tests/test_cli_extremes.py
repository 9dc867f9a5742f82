"""The command line on plans at the edges of what a plan may hold: a clear message (exit 2, no
traceback) or a sound answer."""

from __future__ import annotations

from dpplanner.cli import main
from dpplanner.model.examples import example_path
from dpplanner.model.files import load_plan, save_plan


def test_a_release_script_under_a_theorem_that_does_not_apply_says_so(tmp_path, capsys):
    """kov on unequal releases: the export said the target delta could not be met."""
    plan = load_plan(example_path("psi-survey"))
    plan.set_budget(theorem="kov", redistribute=False)
    path = tmp_path / "kov.dpplan"
    save_plan(plan, str(path))
    assert main(["export-opendp", str(path), "-o", str(tmp_path / "release.py")]) == 2
    err = capsys.readouterr().err
    assert ("cannot write a release script for this plan: KOV (homogeneous) applies only when "
            "every statistic gets the same ε_i and δ_i: statistic 3 ('mean income') gets") in err
    assert err.count("KOV (homogeneous)") == 1, err       # (named once, not also in parentheses)
    assert "delta cannot be met" not in err and "Traceback" not in err
    assert not (tmp_path / "release.py").exists()
