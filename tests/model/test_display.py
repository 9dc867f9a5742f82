"""Printed bounds (CLI, report, window) are rounded in the safe direction."""

from dpplanner.cli import main
from dpplanner.model import display
from dpplanner.model.field_rules import FIELD_RULES
from dpplanner.model.typed import parse_text


def test_upper_rounds_up_and_lower_rounds_down():
    assert display.upper(0.2500004, 4) == "0.2501"
    assert display.lower(0.2500004, 4) == "0.2500"
    assert display.upper(1.0000001e-6, 3) == "1.01e-06"
    assert display.upper(float("inf")) == "∞"


def test_cli_prints_totals_rounded_up(capsys, monkeypatch):
    import dpplanner.cli.totals_commands as cli
    real = cli.plan_totals

    def nudged(plan, theorems=None, **options):
        totals, best = real(plan, theorems, **options)
        from dataclasses import replace
        totals = {k: replace(v, epsilon=0.25 + 4e-7) if v.feasible else v for k, v in totals.items()}
        return totals, best

    monkeypatch.setattr(cli, "plan_totals", nudged)
    assert main(["compose", "census", "--theorem", "basic", "--theorem", "pld"]) == 0
    out = capsys.readouterr().out
    # a total 4e-7 above census's 0.25 must never print as 0.250000
    assert "0.250001" in out and "epsilon = 0.250001" in out


def test_errors_round_up_and_group_their_digits():
    assert display.error(0.010783) == "0.01079"          # psi-survey's "share employed"
    assert display.error(9582875.2) == "9,582,876"
    assert display.error(999.99991) == "1,000"
    assert display.error(1000.0) == "1,000"
    assert display.error_with_units(9582875.2, "records") == "± 9,582,876 records"
    assert display.error_with_units(12826.1, "units of income") == "± 12,827 income"
    assert display.error_with_units(0.0123, "proportion") == "± 1.2300 % points"    # issue 24
    # in a field the user may type over: the same number, without the commas a typed one may not have
    assert display.error_field(9582875.2) == "9582876"
    assert display.error_field(0.010783) == "0.01079"
    assert parse_text(FIELD_RULES["error"], display.error_field(999.99991)) == 1000


def test_a_whole_error_of_discrete_noise_has_no_decimals():
    from dpplanner.model.examples import example_path
    from dpplanner.model.files import load_plan

    assert display.error(20.0) == "20" and display.error_with_units(81.0, "records") == "± 81 records"
    assert display.error(20.5) == "20.500"      # (decimals where the bound has them)
    privacy = [p for p in load_plan(example_path("psi-survey")).privacy_all() if p.error is not None]
    whole = [display.error_with_units(p.error, p.units) for p in privacy if p.error.is_integer()]
    assert whole and not any("." in t for t in whole), whole      # "± 23 records", not "± 23.000"


def test_exact_values_read_back_as_the_same_number():
    for value in (0.1234567, 1e-06, 2500.0, 12345.678, 1.2349e-6):
        assert float(display.exact(value).replace(",", "")) == value
    assert display.exact(100000.0) == "100,000"
    assert display.exact(12345.678) == "12,345.678"


def test_psi_survey_error_reads_the_same_in_table_cli_and_report(capsys, tmp_path):
    from dpplanner.model import report
    from dpplanner.model.files import load_plan

    assert main(["allocate", "psi-survey", "-o", str(tmp_path / "p.dpplan")]) == 0
    plan = load_plan(tmp_path / "p.dpplan")
    row = next(i for i, s in enumerate(plan.statistics) if s.name == "share employed")
    privacy = plan.privacy_all()[row]
    text, words = display.error_parts(privacy.error, privacy.units)     # in percentage points
    line = next(l for l in capsys.readouterr().out.splitlines() if "share employed" in l)
    assert text in line.split() and line.endswith(words)            # (the CLI's units column)
    assert f"± {text} {words}" in report.render_report(plan, totals={}, best=None, curve=None)


def test_numpy_scalars_format_like_floats():
    import numpy as np

    assert display.upper(np.float64(0.2)) == "0.2000"
    assert display.exact(np.float64(0.25)) == "0.25"


def test_percentages_round_up_and_never_overflow():
    assert display.percent_of(1, 1) == "100.0%"
    for x in (0.1, 0.3, 0.7, 0.8, 1e-3, 1e-15, 5e-324, 1.7976931348623157e308):
        assert display.percent_of(x, x) == "100.0%", x      # a total equal to its budget
    assert display.percent_of(1.0000000000000002, 1) == "100.1%"     # just over never reads 100.0%
    assert display.percent_of(0.1234, 1) == "12.4%"
    assert display.percent_of(1e-300, 1) == "0.1%"
    assert display.percent_of(5.0, 1e-320) == "5.001e+322%"          # 5 / 1e-320 overflows a float
    assert display.percent_of(99.999, 1) == "9999.9%"
    assert display.percent_of(999.99999, 1) == "1.000e+05%"


def test_counted_puts_the_noun_in_the_right_number():
    assert display.counted(1, "statistic") == "1 statistic"
    assert display.counted(0, "statistic") == "0 statistics"
    assert display.counted(12000, "statistic") == "12,000 statistics"
    assert display.counted(2, "query", "queries") == "2 queries"


def test_the_amount_over_rounds_up_and_the_amount_left_down():
    # 2.4000000000000004 - 0.5 is 1.9000000000000003552... exactly: "1.9000" would understate it
    assert display.excess(2.4000000000000004, 0.5) == "1.9001"
    # the doubles differ by 5.55e-17 while their shortest decimals differ by 4e-17
    assert display.excess(0.30000000000000004, 0.3) == "5.552e-17"
    assert display.excess(1.0000000000000002, 1.0) == "2.221e-16"
    # 0.5 - 0.4 is 0.0999999999999999777...: a user who adds "0.1000" would overspend
    assert display.room(0.5, 0.4) == "0.09999"
    assert display.room(1.0, 0.25) == "0.7500"
    assert display.excess(float("inf"), 1.0) == "∞"
    assert display.excess(1.0, 1.0) == "0"
