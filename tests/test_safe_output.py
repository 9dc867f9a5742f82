"""Issue 23 (points 8, 9, 12): plan text from a hostile file is shown as the text it is, in every
output: the terminal (no control or bidirectional character printed raw), the HTML report (no
element the plan did not ask for, no raw control character), CSV (no cell a spreadsheet runs as a
formula, and import gives back exactly what export wrote); CLI messages carry no numpy reprs and
no RuntimeWarning."""

from __future__ import annotations

import csv
import io
import json
import warnings
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as st

from dpplanner.cli import main
from dpplanner.model import Budget, Kind, Plan, Statistic, safe_text
from dpplanner.model.csvio import export_csv, parse_csv
from dpplanner.model.files import save_plan
from dpplanner.model.report import render_report

SCRIPT = "<script>alert(1)</script><img src=x onerror=alert(2)>"
ESCAPES = "\x1b[31m\x1b]0;title\x07\u202eevil\x00"
#: What no output may carry raw (a terminal runs them, XML forbids most, bidi reorders text).
RAW = set("\x00\x07\x1b\u202e")


def hostile_plan(redistribute: bool = False) -> Plan:
    budget = Budget(epsilon=1.0, delta=1e-6, theorem="basic", redistribute=redistribute,
                    dataset_size=1000)
    stats = [Statistic("=HYPERLINK(\"http://x\")" + ESCAPES, variable="+cmd|' /C calc'!A0",
                       kind=Kind.COUNT, epsilon=0.25, description="@SUM(1+1)" + ESCAPES),
             Statistic("-2+3", variable=SCRIPT + ESCAPES, kind=Kind.MEAN, lower=0, upper=100,
                       epsilon=0.25, description="'quoted", extra={"note": "=1+1", "=col": "x"})]
    plan = Plan(budget, stats)
    plan.set_metadata(title="T" + ESCAPES + SCRIPT, description=SCRIPT + ESCAPES)
    return plan


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- the terminal ---------------------------------------------------------------------------------
def test_the_cli_prints_control_and_bidi_characters_as_visible_escapes(tmp_path, capsys):
    path = tmp_path / "hostile.dpplan"
    save_plan(hostile_plan(), path)
    for command in (["compose", "--theorem", "basic"], ["allocate"], ["validate"],
                    ["target", "2", "0.001"]):
        code, out, err = run(capsys, command[0], path, *command[1:])
        assert not RAW & set(out + err), (command, out + err)
    code, out, _ = run(capsys, "allocate", path)
    assert code == 0 and "T\\x1b[31m\\x1b]0;title\\x07\\u202eevil\\x00" in out
    # the table's columns line up on what is printed (widths of the escaped names)
    lines = out.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("#"))
    rows = [line for line in lines if line.lstrip()[:2] in ("1 ", "2 ")]
    assert all(line.index("count" if "HYPER" in line else "mean") == header.index("kind") for line in rows)
    save_plan(hostile_plan(redistribute=True), path)
    code, _, err = run(capsys, "target", path, "1", "1e-9")        # a refusal that quotes the name
    assert code == 2 and "\\x1b" in err and not RAW & set(err)


def test_json_output_keeps_the_exact_text(tmp_path, capsys):
    path = tmp_path / "hostile.dpplan"
    save_plan(hostile_plan(), path)
    code, out, _ = run(capsys, "allocate", path, "--json")
    assert code == 0 and json.loads(out)["statistics"][0]["name"].endswith(ESCAPES)


# -- the HTML report ------------------------------------------------------------------------------
class _Reader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_the_report_shows_every_plan_string_as_text(tmp_path, capsys):
    path, html = tmp_path / "hostile.dpplan", tmp_path / "r.html"
    save_plan(hostile_plan(), path)
    assert run(capsys, "report", path, "-o", html)[0] == 0
    text = html.read_text(encoding="utf-8")
    assert not RAW & set(text)
    reader = _Reader()
    reader.feed(text)
    assert not {"script", "img"} & reader.tags
    shown = "".join(reader.text)
    assert SCRIPT in shown                                   # as text, in the statistics' tables
    assert "units of " + SCRIPT in shown                     # the mean's error column (point 8)
    assert "T\\x1b[31m" in shown and "\\u202eevil" in shown  # the title, with visible escapes


# -- CSV ------------------------------------------------------------------------------------------
def test_csv_cells_never_start_a_formula_and_import_gives_back_the_plan(tmp_path):
    plan = hostile_plan()
    text = export_csv(plan)
    rows = list(csv.reader(io.StringIO(text)))
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell
            # a "-" cell is a number or neutralised text (spreadsheets read -0.5 as a number)
            if cell.startswith("-"):
                float(cell)
    assert "'=col" in rows[0]
    back = parse_csv(text, plan.budget)
    for old, new in zip(plan.statistics, back):
        assert (new.name, new.variable, new.description) == (old.name, old.variable, old.description)
        assert new.extra == old.extra


@given(st.text())
def test_spreadsheet_text_round_trips_and_is_never_a_formula(text):
    cell = safe_text.spreadsheet(text)
    assert safe_text.from_spreadsheet(cell) == text
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))


@given(st.text())
def test_terminal_and_markup_text_carries_no_invisible_character(text):
    for shown in (safe_text.terminal(text), safe_text.markup(text)):
        assert not any(ord(c) < 0x09 or 0x0e <= ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0
                       or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069" for c in shown)
    assert "<" not in safe_text.markup(text) and '"' not in safe_text.markup(text)


# -- CLI messages (point 12) ----------------------------------------------------------------------
def test_a_calibration_refusal_names_plain_numbers_and_warns_nothing(tmp_path, capsys):
    """202 Gaussian statistics share delta_g x 1e-300: each delta_i is subnormal and cannot be
    calibrated. The message said epsilon = np.float64(0.0123) after a numpy RuntimeWarning."""
    stats = [{"name": f"g{i}", "kind": "count", "mechanism": "gaussian", "epsilon": 0.0123,
              "noise": "continuous"} for i in range(202)]
    path = tmp_path / "p.dpplan"
    path.write_text(json.dumps({"format_version": 2, "budget": {
        "epsilon": 1.0, "delta": 1e-6, "delta_split": 1e-300, "redistribute": False},
        "statistics": stats}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, out, err = run(capsys, "compose", path)
    assert code == 2 and "epsilon = 0.0123 with delta = 4.95" in err, err
    assert "np." not in err + out
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_a_quantile_whose_error_is_infinite_is_explained_not_a_traceback(tmp_path, capsys):
    stat = {"name": "median", "kind": "quantile", "mechanism": "laplace", "epsilon": 2.2250738585072014e-308,
            "lower": 0.0, "upper": 100.0, "granularity": 5.0, "noise": "continuous"}
    path = tmp_path / "p.dpplan"
    path.write_text(json.dumps({"format_version": 2, "budget": {
        "epsilon": 1.0, "delta": 1e-6, "redistribute": False, "dataset_size": 1000},
        "statistics": [stat]}))
    code, out, err = run(capsys, "validate", path)
    assert code == 0 and "Traceback" not in err
    from dpplanner.model.files import load_plan
    assert "between the true 0th and 100th percentiles" in load_plan(path).privacy(0).explanation


def test_a_numpy_scalar_in_any_engine_message_reaches_the_user_as_a_plain_number(capsys, monkeypatch):
    import numpy as np

    from dpplanner.cli import arguments as cli

    def refuse(args):
        raise ValueError(f"epsilon = {np.float64(0.5)!r}, k = {np.int64(3)!r}")
    monkeypatch.setattr(cli, "cmd_validate", refuse)
    code, _, err = run(capsys, "validate", "census")
    assert code == 2 and err == "dpplanner-cli: error: epsilon = 0.5, k = 3\n"
