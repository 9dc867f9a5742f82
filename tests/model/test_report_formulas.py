"""Issue 24.9: the report's formulas are the model's. It said "quantile/CDF: Δ₁ = m, Δ₂ = √m" while
its own noise scale implied Δ₁ = 1, and it named neither pld nor zcdp. Each statistic's steps are
read back from the HTML and checked against what the model computed for that statistic; the
formulas section's sensitivities against ``accuracy.sensitivity``; every theorem of the totals is
there with its assumption."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from dpplanner import engine
from dpplanner.model import Budget, Kind, Mechanism, Neighbouring, Plan, Statistic, sensitivity
from dpplanner.model.opendp_sensitivity import certified
from dpplanner.model.statistic import Noise
from dpplanner.model.derivation import shown
from dpplanner.model.examples import example_path
from dpplanner.model.files import load_plan
from dpplanner.model.report import plan_totals, render_report, save_report


class Report(HTMLParser):
    """The derivation steps (row -> key -> (value, text)) and the formulas list (dt -> dd)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.steps: dict[int, dict[str, tuple[float, str]]] = {}
        self.formulas: dict[str, str] = {}
        self._row = None
        self._step = None
        self._text = ""
        self._dt = None
        self._in = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-row" in a:
            self._row = int(a["data-row"])
            self.steps[self._row] = {}
        elif tag == "span" and a.get("class") == "step":
            self._step = (a["data-key"], float(a["data-value"]))
            self._text = ""
        elif tag in ("dt", "dd"):
            self._in, self._text = tag, ""

    def handle_data(self, data):
        if self._step is not None or self._in is not None:
            self._text += data

    def handle_endtag(self, tag):
        if tag == "span" and self._step is not None:
            key, value = self._step
            self.steps[self._row][key] = (value, self._text)
            self._step = None
        elif tag == "dt" and self._in == "dt":
            self._dt, self._in = self._text.strip(), None
        elif tag == "dd" and self._in == "dd":
            self.formulas[self._dt] = self._text.strip()
            self._in = None


def plans():
    census = load_plan(example_path("census"))
    survey = load_plan(example_path("psi-survey"))
    replace = load_plan(example_path("psi-survey"))
    replace.set_budget(neighbouring=Neighbouring.REPLACE_ONE)
    add = load_plan(example_path("psi-survey"))
    add.set_budget(neighbouring=Neighbouring.ADD_REMOVE)
    def stats(noise):
        return [Statistic("quartiles", kind=Kind.QUANTILE, lower=0, upper=100, granularity=5,
                          epsilon=0.3, noise=noise),
                Statistic("hist", kind=Kind.HISTOGRAM, bins=4, mechanism=Mechanism.GAUSSIAN,
                          epsilon=0.3, noise=noise),
                Statistic("income", "income", kind=Kind.MEAN, lower=0, upper=9e4, epsilon=0.2,
                          noise=noise),
                Statistic("total", "hours", kind=Kind.SUM, lower=0, upper=80, epsilon=0.2,
                          mechanism=Mechanism.GAUSSIAN, noise=noise, integer=True),
                Statistic("custom", kind=Kind.CUSTOM, epsilon=0.1, delta=1e-8)]
    sampled = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=1000, population=50_000),
                   stats(Noise.CONTINUOUS))
    opendp = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=1000), stats(Noise.OPENDP))
    opendp_replace = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=1000,
                                 neighbouring=Neighbouring.REPLACE_ONE), stats(Noise.OPENDP))
    return {"census": census, "survey": survey, "replace-one": replace, "add-remove": add,
            "amplified": sampled, "opendp": opendp, "opendp replace-one": opendp_replace}


@pytest.mark.parametrize("name", list(plans()))
def test_every_step_of_every_statistic_is_the_models_value(name):
    plan = plans()[name]
    report = Report(render_report(plan, totals={}, best=None, curve=None))
    b = plan.budget
    for i, (stat, privacy) in enumerate(zip(plan.statistics, plan.privacy_all())):
        if stat.kind is Kind.CUSTOM:
            assert not report.steps.get(i)
            continue
        steps = report.steps[i]
        for key, (value, text) in steps.items():
            assert text.endswith(shown(value)) or f"= {shown(value)} (" in text, (i, key, text)
        sens = sensitivity(stat, b.neighbouring, b.dataset_size)
        assert steps["coordinates"][0] == sens.coordinates
        assert steps["scale"][0] == pytest.approx(privacy.scale, rel=1e-12)
        assert steps["error"][0] == pytest.approx(privacy.error, rel=1e-12)
        eps = steps["functioning_epsilon"][0] if "functioning_epsilon" in steps else stat.epsilon
        assert eps == pytest.approx(privacy.functioning_epsilon, rel=1e-12)
        if stat.noise is Noise.OPENDP:
            # OpenDP's noise: the certified sensitivity, error = J lattice steps over the divisor
            cert = certified(stat, b)
            key, value = ("l2", cert.l2) if stat.mechanism is Mechanism.GAUSSIAN else ("l1", cert.l1)
            assert steps[key][0] == value
            lattice = steps["lattice"][0] if "lattice" in steps else 1.0
            assert steps["error"][0] == pytest.approx(steps["factor"][0] * lattice / cert.divisor, rel=1e-12)
            assert steps["scale"][0] == pytest.approx(
                steps["lattice_scale"][0] * lattice / cert.divisor, rel=1e-12)
            if stat.mechanism is Mechanism.LAPLACE:
                # t = C·S / ε: a replace-one histogram moves two cells (contributions.py)
                assert steps["lattice_scale"][0] == pytest.approx(cert.cells * steps["shift"][0] / eps, rel=1e-9)
            continue
        assert steps["error"][0] == pytest.approx(steps["scale"][0] * steps["factor"][0], rel=1e-12)
        if stat.mechanism is Mechanism.LAPLACE:
            assert steps["l1"][0] == sens.l1
            assert steps["scale"][0] == pytest.approx(sens.l1 / eps, rel=1e-12)     # b = Δ₁ / ε
            assert "b = Δ₁ / ε" in steps["scale"][1]
        else:
            assert steps["l2"][0] == sens.l2
            z = steps["z"][0]
            m = sens.coordinates
            assert steps["factor"][0] == pytest.approx(z * math.sqrt(m) if stat.kind is Kind.QUANTILE else z)


@pytest.mark.parametrize("name", ["census", "replace-one", "add-remove"])
def test_the_sensitivity_rules_state_what_the_model_computes(name):
    plan = plans()[name]
    report = Report(render_report(plan, totals={}, best=None, curve=None))
    b = plan.budget
    for stat in plan:
        if stat.kind is Kind.CUSTOM or stat.noise is Noise.OPENDP:
            continue        # (OpenDP's noise: the certified sensitivity, checked step by step)
        rule = report.formulas[f"Sensitivity: {stat.kind.label}"]
        l1, l2 = re.match(r"Δ₁ = (.+?), Δ₂ = ([^:]+):", rule).groups()
        sens = sensitivity(stat, b.neighbouring, b.dataset_size)
        n = stat.n or b.dataset_size
        values = {"a": stat.lower, "b": stat.upper, "n": n}
        for text, expected in ((l1, sens.l1), (l2, sens.l2)):
            python = (text.replace("√2", "2 ** 0.5").replace("max(|a|, |b|)", "max(abs(a), abs(b))")
                      .replace("−", "-"))
            assert eval(python, {}, values) == pytest.approx(expected, rel=1e-12), (stat.kind, text)
    assert not re.search(r"Δ₁ = m(?![a-z(])", str(report.formulas)) and "√m" not in str(report.formulas)


def test_the_quantile_rule_is_one_cell_not_m():
    report = Report(render_report(plans()["add-remove"], totals={}, best=None, curve=None))
    assert report.formulas["Sensitivity: Quantile / CDF"].startswith("Δ₁ = 1, Δ₂ = 1:")


def test_every_theorem_of_the_totals_is_named_with_what_it_assumes():
    plan = plans()["survey"]
    from dpplanner.model.report import plan_totals
    totals, best = plan_totals(plan)
    report = Report(render_report(plan, totals=totals, best=best, curve=None))
    for name in engine.THEOREMS:
        t = engine.theorem(name)
        entry = report.formulas[f"{t.label}: {t.title}"]
        assert t.assumption in entry
    assert any(key.startswith("noise-aware (PLD)") for key in report.formulas)
    assert any(key.startswith("zCDP") for key in report.formulas)


def test_the_budget_names_its_theorem_as_the_window_does():
    plan = load_plan(example_path("psi-survey"))
    html = render_report(plan, totals={}, best=None, curve=None)
    assert plan.budget.theorem == "pld" and plan.budget.redistribute
    assert "automatic, under noise-aware (PLD)" in html and "theorem pld" not in html


def test_statistics_that_differ_only_in_name_share_steps_but_not_rows():
    # the report writes the steps of look-alike statistics once; every row keeps its own name, and
    # one field apart (epsilon 0.2 vs 0.25, or delta 0.0 vs -0.0 as typed) is a different text
    base = Statistic("a", kind=Kind.MEAN, lower=0, upper=100, epsilon=0.2)
    stats = [base, base.replace(name="b"), base.replace(name="c", epsilon=0.25),
             base.replace(name="d", mechanism=Mechanism.GAUSSIAN, delta=1e-7)]
    plan = Plan(Budget(epsilon=2.0, delta=1e-6, dataset_size=1000), stats)
    html = render_report(plan, totals={}, best=None, curve=None)
    report = Report(html)
    assert report.steps[0] == report.steps[1]
    assert report.steps[2]["scale"][0] == pytest.approx(report.steps[0]["scale"][0] * 0.2 / 0.25)
    assert report.steps[3] != report.steps[0]
    for i, name in enumerate("abcd"):
        assert re.search(rf'<tr data-row="{i}"><td>{i + 1}</td><td class="name">{name}</td>', html)


@pytest.mark.parametrize("noise", list(Noise))
def test_a_grouped_statistic_derives_the_error_of_one_group_the_table_shows(noise):
    """The table shows a grouped statistic's error in one group (β for that group alone); the
    report derived only the error of all groups at once, so the number leading "What each budget
    buys" had no derivation."""
    plan = load_plan(example_path("census-tables"))
    plan.replace_all([s.replace(noise=noise) for s in plan.statistics])
    report = Report(render_report(plan, totals={}, best=None, curve=None))
    grouped = 0
    for i, (stat, privacy) in enumerate(zip(plan.statistics, plan.privacy_all())):
        steps = report.steps.get(i, {})
        if not stat.group_by or stat.kind is Kind.CUSTOM:
            assert "cell_error" not in steps
            continue
        grouped += 1
        for key, (value, text) in steps.items():
            assert text.endswith(shown(value)) or f"= {shown(value)} (" in text, (i, key, text)
        assert steps["error"][0] == pytest.approx(privacy.error, rel=1e-12)
        assert steps["cell_error"][0] == pytest.approx(privacy.cell_error, rel=1e-12)
        assert steps["cell_error"][0] < steps["error"][0]          # one group against all of them
        assert steps["cell_factor"][0] < steps["factor"][0]
    assert grouped >= 2


def test_the_totals_detail_column_speaks_the_windows_and_the_plans_words(tmp_path):
    """QA17 N2: the saved report's Totals table said "pld lattice 0.00195" and, for KOV, "query 3 is
    (eps=0.257477, delta=0)": the engine's names. Read back from the file: the theorems by the
    window's labels, the releases as the plan's statistics with their ε_i and δ_i."""
    plan = load_plan(example_path("psi-survey"))
    totals, best = plan_totals(plan, (engine.theorems.KOV, engine.theorems.PLD, engine.theorems.ZCDP))
    path = tmp_path / "report.html"
    save_report(plan, path, totals=totals, best=best, curve=None)
    details = [row[-1] for row in _totals_rows(path.read_text(encoding="utf-8"))]
    kov, pld, zcdp = (engine.theorem(name).label for name in (engine.theorems.KOV, engine.theorems.PLD,
                                                               engine.theorems.ZCDP))
    assert details[0] == (f"{kov} applies only when every statistic gets the same ε_i and δ_i: "
                          f"statistic 3 ('{plan[2].name}') gets ε_i = {plan[2].epsilon:.6g}, δ_i = 0, but "
                          f"statistic 1 ('{plan[0].name}') gets ε_i = {plan[0].epsilon:.6g}, δ_i = 0; "
                          "optimal takes unequal statistics"), details[0]
    assert details[1].startswith(f"{pld}: privacy losses on a lattice of step "), details[1]
    assert details[2].startswith("ρ = ") and "converted at δ = " in details[2], details[2]
    for words in ("pld", "kov", "zcdp", "query", "eps=", "delta", "rho"):
        assert not any(re.search(rf"\b{words}", d) for d in details), (words, details)


def _totals_rows(html: str) -> list[list[str]]:
    """The cells of the Totals table's rows, as text (the header row left out)."""
    table = html.split("<h2>Totals under every theorem</h2>")[1].split("</table>")[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)[1:]
    return [[_cell_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)] for row in rows]


def _cell_text(cell: str) -> str:
    from html import unescape
    return unescape(re.sub(r"<[^>]+>", "", cell))


def test_advanced_compositions_detail_says_its_least_bound_was_taken(tmp_path):
    """QA18 N2: the advanced row's detail was the name of the least of its bounds alone ("basic",
    "KOV Thm 3.5 (b)"), which read as if that theorem had been used instead of advanced
    composition. Read back from the saved report: it says that bound is the least of its own."""
    from dpplanner.engine.advanced import CANDIDATES

    plan = load_plan(example_path("census"))
    totals, best = plan_totals(plan, ("advanced",))
    path = tmp_path / "report.html"
    save_report(plan, path, totals=totals, best=best, curve=None)
    detail, = [row[-1] for row in _totals_rows(path.read_text(encoding="utf-8"))]
    winner = totals["advanced"].detail
    assert winner in CANDIDATES and detail == f"the least of its bounds here, {winner}", detail


def test_wording_a_total_imports_no_theorem_into_the_window():
    """The window words every result's totals on its GUI thread (the Totals tooltips): doing so
    imports none of the engine's mathematics (engine.advanced and what it needs took ~18 ms there
    at the first result)."""
    child = ("import sys\n"
             "from dpplanner.engine.types import Composition\n"
             "from dpplanner.model.explanations import composition_note\n"
             "for name in ('advanced', 'pld', 'zcdp'):\n"
             "    composition_note(None, name, Composition(name, 1.0, 1e-6, detail='basic'))\n"
             "print(sorted(m for m in sys.modules if m.startswith('dpplanner.engine.')))\n")
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True).stdout
    assert "dpplanner.engine.advanced" not in out and "dpplanner.engine.validation" not in out, out
