"""CSV import/export of the statistics table, the SVG plot and the HTML report."""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpplanner import engine
from dpplanner.model import Budget, Kind, Mechanism, Plan, Statistic
from dpplanner.model.csvio import export_csv, import_csv, parse_csv, save_csv
from dpplanner.model.files import PlanFileError
from dpplanner.model.report import render_report
from dpplanner.model.svgplot import line_plot, nice_ticks


def _plan():
    return Plan(Budget(epsilon=1, delta=1e-6, dataset_size=1000, theorem="basic"),
                [Statistic("n <all>", epsilon=0.3, extra={"owner": "ana"}),
                 Statistic("mean, age", "age", Kind.MEAN, Mechanism.GAUSSIAN, epsilon=0.4, lower=0,
                           upper=100, held=True, repetitions=2),
                 Statistic("q", "rent", Kind.QUANTILE, epsilon=0.3, lower=0, upper=500,
                           granularity=25, description='says "hi"')],
                title="Report <test> & co")


def test_csv_round_trip(tmp_path):
    plan = _plan()
    path = tmp_path / "stats.csv"
    save_csv(plan, path)
    header = path.read_text().splitlines()[0]
    assert header.startswith("name,variable,kind,mechanism,epsilon") and header.endswith("explanation,data_type,sensitivity_l1,sensitivity_l2,noise_kind,noise_scale,lattice,divisor,rho,"
                                                                               "error_one_group,cells_moved,selection_threshold")
    other = Plan(plan.budget, [Statistic("placeholder")])
    import_csv(other, path)
    assert other.statistics == plan.statistics       # including the unknown field "owner"


def test_csv_keeps_unknown_columns_and_ignores_derived_ones():
    text = "name,kind,bins,error,colour\nages,histogram,5,999,blue\n"
    (stat,) = parse_csv(text)
    assert stat.kind is Kind.HISTOGRAM and stat.bins == 5 and stat.extra == {"colour": "blue"}


@pytest.mark.parametrize("text, match", [
    ("kind\ncount\n", "needs a header row with at least a 'name' column"),
    ("name,epsilon\na,lots\n", "CSV line 2: epsilon = 'lots' is not a number"),
    ("name,bins\na,2.5\n", "CSV line 2: bins = '2.5' must be a whole number"),
    ("name,kind\na,histogram\n", r"CSV line 2: statistic 1 \('a'\): a histogram statistic needs"),
    ("name,held\na,maybe\n", "held = 'maybe' must be true or false"),
    ("name,kind\na,pie\n", "kind = 'pie' is not allowed"),
    # (read as 0 and as 4.94e-324: another number than the one written)
    ("name,epsilon\na,1e-400\n", "CSV line 2: epsilon = '1e-400' is too close to 0 to store exactly"),
    ("name,delta\na,3e-324\n", "CSV line 2: delta = '3e-324' is too close to 0 to store exactly"),
])
def test_csv_errors_name_the_line(text, match):
    with pytest.raises(PlanFileError, match=match):
        parse_csv(text)


def test_csv_export_has_errors_in_units():
    rows = export_csv(_plan()).splitlines()
    assert len(rows) == 4 and "units of age" in rows[2]


def test_nice_ticks():
    assert nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0, 7.3) == [0, 2, 4, 6]
    assert nice_ticks(3, 3) == [3]


def test_svg_plot_is_valid_xml_and_breaks_lines_at_inf_and_nan():
    svg = line_plot([1, 2, 3, 4], {"a": [0.1, 0.2, float("inf"), 0.4], "b & c": [float("nan")] * 4},
                    hline=0.3, hline_label="budget", vline=2, title="t")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{ns}polyline")) == 1        # [1,2] joined; 4 alone is a dot
    assert len(root.findall(f"{ns}circle")) == 1
    assert "b &amp; c" in svg


def test_report_is_self_contained_and_escaped():
    plan = _plan()
    totals = engine.compose_all([0.3, 0.4, 0.3], plan.deltas(), 1e-6, multiplicities=[1, 2, 1],
                                theorems=("basic", "advanced", "kov"))
    curve = engine.curve([0.3, 0.4, 0.3], plan.deltas(), 1e-6, multiplicities=[1, 2, 1],
                         theorems=("basic", "advanced"))
    html = render_report(plan, totals=totals, best=engine.best(totals), curve=curve)
    assert "<svg" in html and "Report &lt;test&gt; &amp; co" in html and "n &lt;all&gt;" in html
    assert not re.search(r"<(script|link|img)\b", html)     # nothing fetched from elsewhere
    assert 'class="best"' in html and "Balle &amp; Wang 2018" in html
    assert "KOV (homogeneous) applies only when every statistic gets the same ε_i and δ_i" in html  # the reason
    for s, p in zip(plan.statistics, plan.privacy_all()):
        if p.error is not None:
            assert p.explanation.replace('"', "&quot;")[:40] in html


def test_report_of_an_empty_plan_says_so():
    html = render_report(Plan(Budget(epsilon=0.5, delta=1e-7), [], title="empty"))
    assert "no statistics yet" in html and "<svg" not in html


_cells = st.one_of(st.sampled_from(["", "1", "0.5", "-3", "1e999", "nan", "true", "maybe", "count",
                                    "histogram", "gaussian", "mean", "x"]), st.text(max_size=5))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["name", "kind", "mechanism", "epsilon", "bins", "lower", "upper",
                                 "n", "held", "repetitions", "granularity", "error", "other"]),
                min_size=1, max_size=6, unique=True),
       st.lists(st.lists(_cells, min_size=6, max_size=6), max_size=4))
@pytest.mark.slow
def test_fuzz_csv_import_only_raises_plan_file_error(header, rows):
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    for row in rows:
        writer.writerow(row[: len(header)])
    try:
        stats = parse_csv(buf.getvalue())
    except PlanFileError:
        return
    assert all(isinstance(s, Statistic) for s in stats)


def test_integer_ticks_for_a_count_axis():
    assert nice_ticks(1, 2, integer=True) == [1, 2]
    assert nice_ticks(1, 6, integer=True) == [1, 2, 3, 4, 5, 6]
    assert all(t == int(t) for t in nice_ticks(1, 13, integer=True))


def test_report_curves_take_the_registry_colours_and_labels():
    """Issue 12.8: the report's colours were a palette of their own, unlike the window's."""
    plan = _plan()
    curve = engine.curve([0.3, 0.4, 0.3], plan.deltas(), 1e-6, multiplicities=[1, 2, 1],
                         theorems=("basic", "advanced", "concurrent"))
    html = render_report(plan, totals={}, best=None, curve=curve)
    svg = ET.fromstring(html[html.index("<svg"):html.index("</svg>") + 6])
    ns = "{http://www.w3.org/2000/svg}"
    strokes = {line.get("stroke") for line in svg.iter(f"{ns}polyline")}
    for name in ("basic", "advanced", "concurrent"):
        t = engine.theorem(name)
        assert t.colours[0] in strokes and t.label in html
    concurrent = [p for p in svg.iter(f"{ns}polyline") if p.get("stroke") == engine.theorem("concurrent").colours[0]]
    assert concurrent[0].get("stroke-dasharray")
