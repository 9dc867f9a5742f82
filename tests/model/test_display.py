"""Printed bounds (CLI, report, window) are rounded in the safe direction."""

from dpplanner.cli import main
from dpplanner.model import display


def test_upper_rounds_up_and_lower_rounds_down():
    assert display.upper(0.2500004, 4) == "0.2501"
    assert display.lower(0.2500004, 4) == "0.2500"
    assert display.upper(1.0000001e-6, 3) == "1.01e-06"
    assert display.upper(float("inf")) == "∞"


def test_cli_prints_totals_rounded_up(capsys, monkeypatch):
    import dpplanner.cli as cli
    real = cli.plan_totals

    def nudged(plan, theorems=None):
        totals, best = real(plan, theorems)
        from dataclasses import replace
        totals = {k: replace(v, epsilon=v.epsilon + 4e-7) if v.feasible else v for k, v in totals.items()}
        return totals, best

    monkeypatch.setattr(cli, "plan_totals", nudged)
    assert main(["compose", "census"]) == 0
    out = capsys.readouterr().out
    # optimal spends the whole 0.25; 0.25 + 4e-7 must never be printed as 0.250000
    assert "0.250001" in out and "epsilon = 0.250001" in out
