"""dpplanner-cli end to end on the shipped examples: in-process main(argv) and one subprocess."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from dpplanner import engine

from dpplanner.cli import main
from dpplanner.engine import theorems
from dpplanner.model.explanations import composition_note
from dpplanner.model.examples import example_path
from dpplanner.model.files import load_plan, save_plan
from dpplanner.model.report import plan_totals
from dpplanner.model.statistic import Noise


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_compose_text_marks_the_best(capsys):
    code, out, err = run(capsys, "compose", "psi-survey", "--theorem", "basic", "--theorem", "advanced",
                         "--theorem", "kov")
    assert code == 0 and err == ""
    assert "plan: PSI-style survey release: 8 statistics, k = 8 queries" in out
    lines = out.splitlines()
    assert lines[2].split()[:3] == ["theorem", "total", "eps"]
    assert any(line.startswith("basic *") or line.startswith("advanced *") for line in lines)
    assert "KOV (homogeneous) applies only when every statistic gets the same" in out
    assert "* best valid total:" in out


def test_compose_table_says_each_method_in_the_plans_words(capsys):
    """The detail column as the window and the report word it, not in the engine's words."""
    code, out, _ = run(capsys, "compose", "census")
    plan = load_plan(example_path("census"))
    totals, _ = plan_totals(plan, engine.THEOREMS)
    rows = {line.split()[0]: line for line in out.splitlines()[3:3 + len(totals)]}
    assert code == 0 and set(rows) == set(totals)
    for name, total in totals.items():
        assert rows[name].endswith("  " + composition_note(plan, name, total))
    assert "noise-aware (PLD): privacy losses on a lattice of step" in rows[theorems.PLD]
    assert "statistic 2 ('" in rows[theorems.KOV] and "ρ = " in rows[theorems.ZCDP]
    for engine_word in ("lattice 0.", "query", "eps=", "rho", "delta ="):
        assert all(engine_word not in row for row in rows.values()), engine_word


def test_compose_json(capsys):
    code, out, _ = run(capsys, "compose", "census", "--json", "--theorem", "basic",
                       "--theorem", "advanced")
    doc = json.loads(out)
    assert code == 0 and doc["statistics"] == len(load_plan(example_path("census")))
    assert set(doc["totals"]) == {"basic", "advanced"}
    assert doc["best"] in doc["totals"]
    assert doc["totals"]["advanced"]["epsilon"] <= doc["totals"]["basic"]["epsilon"] + 1e-12


@pytest.mark.parametrize("name", ["psi-survey", "census", "synthetic-100"])
def test_compose_every_theorem_on_examples(capsys, name):
    code, out, _ = run(capsys, "compose", name, "--json")
    doc = json.loads(out)
    assert code == 0 and tuple(doc["totals"]) == engine.THEOREMS
    opt = doc["totals"]["optimal"]
    assert opt["epsilon_lower"] <= opt["epsilon"] <= doc["totals"]["basic"]["epsilon"] + 1e-9
    pld = doc["totals"]["pld"]   # the noise the plan really adds: never above optimal, here below
    assert pld["epsilon_lower"] <= pld["epsilon"] < opt["epsilon"]
    assert doc["best"] == "pld"


def test_allocate_saves_a_balanced_plan(tmp_path, capsys):
    out_path = tmp_path / "balanced.dpplan"
    code, out, err = run(capsys, "allocate", "psi-survey", "--theorem", "basic", "-o", str(out_path))
    assert code == 0 and err == "" and f"saved to {out_path}" in out
    plan = load_plan(out_path)
    assert plan.budget.theorem == "basic"
    assert sum(s.epsilon * s.repetitions for s in plan) == pytest.approx(plan.budget.epsilon, rel=1e-6)
    assert "mean income" in out and "units of income" in out


def test_allocate_json(capsys):
    code, out, _ = run(capsys, "allocate", "census", "--theorem", "advanced", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["theorem"] == "advanced"
    assert doc["spent_epsilon"] <= doc["epsilon_g"] and doc["spent_epsilon"] == pytest.approx(
        doc["epsilon_g"], rel=1e-5)
    held = [s for s in doc["statistics"] if s["held"]]
    assert held and all(s["epsilon"] > 0 for s in doc["statistics"])


def test_curve_csv(tmp_path, capsys):
    out_path = tmp_path / "curve.csv"
    code, out, _ = run(capsys, "curve", "census", "--theorem", "basic", "--theorem", "advanced",
                       "--points", "20", "-o", str(out_path))
    assert code == 0 and "theorems to" in out
    rows = list(csv.reader(io.StringIO(out_path.read_text())))
    assert rows[0] == ["k", "basic", "advanced"]
    ks = [int(r[0]) for r in rows[1:]]
    assert ks == sorted(ks) and ks[-1] == load_plan(example_path("census")).k
    basic = [float(r[1]) for r in rows[1:]]
    assert basic == sorted(basic)


def test_curve_json_to_stdout(capsys):
    code, out, _ = run(capsys, "curve", "psi-survey", "--theorem", "basic", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["k"][-1] == 8 and len(doc["upper"]["basic"]) == len(doc["k"])


def test_curve_at_the_plans_k_is_met_with_the_totals_compose_prints(capsys):
    """On the census example the optimal curve's point at k (at the curve's coarser accuracy) is
    above compose's total: the curve prints the lower of the two, both sound upper bounds."""
    from dpplanner.model.report import plan_curve
    names = ("optimal", "zcdp", "basic")
    plan = load_plan(example_path("census"))
    unmet = plan_curve(plan, names, points=5)
    flags = [w for n in names for w in ("--theorem", n)]
    totals = json.loads(run(capsys, "compose", "census", "--json", *flags)[1])["totals"]
    curve = json.loads(run(capsys, "curve", "census", "--json", "--points", "5", *flags)[1])
    assert curve["k"][-1] == plan.k
    assert unmet.upper["optimal"][-1] > totals["optimal"]["epsilon"]     # they differ here
    for n in names:
        assert curve["upper"][n][-1] == min(float(unmet.upper[n][-1]), totals[n]["epsilon"]), n
        assert curve["upper"][n][:-1] == [float(v) for v in unmet.upper[n][:-1]], n
    csv_rows = list(csv.reader(io.StringIO(run(capsys, "curve", "census", "--points", "5", *flags)[1])))
    assert [float(v) for v in csv_rows[-1][1:]] == [curve["upper"][n][-1] for n in names]


def test_the_reports_curve_is_met_with_its_totals(tmp_path, capsys, monkeypatch):
    from dpplanner.cli import totals_commands
    from dpplanner.model import report
    given, plotted = {}, {}
    real_save, real_plot = totals_commands.save_report, report.line_plot
    monkeypatch.setattr(totals_commands, "save_report",
                        lambda plan, path, **kw: given.update(kw) or real_save(plan, path, **kw))
    monkeypatch.setattr(report, "line_plot",
                        lambda xs, series, **kw: plotted.update(series) or real_plot(xs, series, **kw))
    assert run(capsys, "report", "census", "-o", str(tmp_path / "r.html"))[0] == 0
    totals, curve = given["totals"], given["curve"]
    assert curve.upper["optimal"][-1] > totals["optimal"].epsilon     # met by the report itself
    assert plotted[engine.theorem("optimal").label][-1] == totals["optimal"].epsilon
    assert all(plotted[engine.theorem(n).label][-1] <= t.epsilon for n, t in totals.items() if t.applicable)


def test_report(tmp_path, capsys):
    out_path = tmp_path / "r.html"
    code, out, _ = run(capsys, "report", "psi-survey", "-o", str(out_path))
    assert code == 0 and "wrote" in out
    html = out_path.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "mean income" in html


def test_validate(capsys):
    code, out, _ = run(capsys, "validate", "census")
    assert code == 0 and "valid: 58 statistics" in out and "within budget" in out
    code, out, _ = run(capsys, "validate", "census", "--json")
    doc = json.loads(out)
    assert doc["valid"] is True and doc["over_budget"] is False and doc["warnings"] == []


def test_validate_warns_when_a_manual_plan_is_over_budget(tmp_path, capsys):
    path = tmp_path / "over.dpplan"
    path.write_text(json.dumps({"format_version": 1,
                                "budget": {"epsilon": 2.0, "delta": 1e-6, "theorem": "basic",
                                           "redistribute": False},
                                "statistics": [{"name": "a", "kind": "count", "mechanism": "laplace",
                                                "epsilon": 1.5},
                                               {"name": "b", "kind": "count", "mechanism": "laplace",
                                                "epsilon": 1.0}]}))
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 0
    assert "warning: global epsilon 2 is above 1" in out
    assert "warning: under the basic theorem the plan is over budget by 0.5" in out


def test_validate_says_a_plan_saved_at_the_budget_by_an_earlier_version_is_over_and_how_to_fit(tmp_path, capsys):
    """psi-survey as an earlier version balanced it to the bit (its totals came out a hair lower):
    validate says it is over and names the fix; allocate's output is within the budget."""
    from pathlib import Path

    saved = Path(__file__).resolve().parent / "data" / "psi-survey-balanced-by-an-earlier-version.dpplan"
    code, out, _ = run(capsys, "validate", str(saved))
    assert code == 0 and "warning: under the pld theorem the plan is over budget by 3." in out
    assert f"to fit: dpplanner-cli allocate {saved} -o OUT" in out
    fixed = tmp_path / "fixed.dpplan"
    code, _, _ = run(capsys, "allocate", str(saved), "-o", str(fixed))
    code, out, _ = run(capsys, "validate", str(fixed), "--json")
    assert code == 0 and json.loads(out)["over_budget"] is False


@pytest.mark.parametrize("content, match", [
    ('{"format_version": 9}', "newer dpplanner"),
    ('{"format_version": 1, "budget": {"epsilon": 1, "delta": 1e-6}, "statistics": [{"name": "x", '
     '"kind": "count", "mechanism": "laplace", "epsilon": 0}]}',
     r"statistic 1 \('x'\): epsilon = 0 is not allowed"),
    ('{"format_version": 1, "statistics": []}', "the plan has no 'budget': the field is required"),
    ("not json", "not valid JSON"),
])
def test_bad_input_exits_2_with_message_and_no_traceback(tmp_path, capsys, content, match):
    bad = tmp_path / "bad.dpplan"
    bad.write_text(content)
    code, out, err = run(capsys, "validate", str(bad))
    assert code == 2 and out == ""
    assert err.startswith("dpplanner-cli: error:") and "Traceback" not in err
    import re
    assert re.search(match, err)


def test_missing_file_and_bad_arguments(capsys):
    code, _, err = run(capsys, "compose", "no-such-plan")
    assert code == 2 and "no such file (and not an example name; examples: psi-survey" in err
    code, _, err = run(capsys, "curve", "census", "--points", "1")
    assert code == 2 and "--points must be at least 2" in err
    code, _, err = run(capsys, "curve", "census", "--eta", "0")
    assert code == 2 and "--eta: engine accuracy eta = 0 is not allowed; it must be a number in [1e-06, 1]" in err
    code, _, err = run(capsys, "curve", "census", "--eta", "1e-7")
    assert code == 2 and "must be a number in [1e-06, 1]" in err
    code, _, err = run(capsys, "frobnicate", "census")
    assert code == 2 and "invalid choice" in err
    code, _, err = run(capsys, "allocate", "census", "--theorem", "filter")
    assert code == 2 and "invalid choice" in err


def test_allocate_refusal_is_a_user_error(tmp_path, capsys):
    plan = tmp_path / "held.dpplan"
    plan.write_text(json.dumps({"format_version": 1, "budget": {"epsilon": 1.0, "delta": 1e-6,
                                                                "theorem": "basic"},
                                "statistics": [{"name": "a", "kind": "count", "mechanism": "laplace",
                                                "epsilon": 2.0, "held": True},
                                               {"name": "b", "kind": "count", "mechanism": "laplace",
                                                "epsilon": 0.1}]}))
    code, out, err = run(capsys, "allocate", str(plan))
    assert code == 2 and "unpin or lower some of: 1 ('a')" in err and "Traceback" not in err


def test_help_is_useful(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for word in ("compose", "allocate", "curve", "report", "validate", "examples:"):
        assert word in out


@pytest.mark.slow
def test_console_script_in_a_subprocess(tmp_path):
    out = subprocess.run([sys.executable, "-m", "dpplanner.cli", "compose", "psi-survey", "--json",
                          "--theorem", "basic"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    plan = load_plan(example_path("psi-survey"))
    assert json.loads(out.stdout)["totals"]["basic"]["epsilon"] == pytest.approx(
        sum(s.epsilon * s.repetitions for s in plan), rel=1e-9)
    bad = subprocess.run([sys.executable, "-m", "dpplanner.cli", "validate", str(tmp_path / "x")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "no such file" in bad.stderr


def test_allocate_shows_functioning_epsilon_with_amplification(tmp_path, capsys):
    path = tmp_path / "amp.dpplan"
    path.write_text(json.dumps({"format_version": 1,
                                "budget": {"epsilon": 0.5, "delta": 1e-6, "theorem": "basic",
                                           "dataset_size": 1000, "population": 10000},
                                "statistics": [{"name": n, "kind": "count", "mechanism": "laplace",
                                                "epsilon": 0.1} for n in "ab"]}))
    code, out, _ = run(capsys, "allocate", str(path), "--json")
    rows = json.loads(out)["statistics"]
    assert code == 0 and rows[0]["epsilon"] == pytest.approx(0.25, rel=1e-6)
    import math
    assert rows[0]["functioning_epsilon"] == pytest.approx(math.log1p(10 * math.expm1(0.25)), rel=1e-6)
    code, out, _ = run(capsys, "allocate", str(path))
    assert "functioning eps" in out and "amplification by sampling: N/n = 10" in out



def _uncertifiable_plan(path):
    """A plan of discrete Laplace counts (one pinned) at eta = 1e-6 that redistributes: its total
    cannot be certified within eta (the bracket stays wider on the finest lattices)."""
    doc = json.loads(example_path("census").read_text(encoding="utf-8"))
    base = doc["statistics"][0]
    doc["budget"].update(epsilon=2.0, eta=1e-6, redistribute=True)
    doc["statistics"] = [dict(base, name="pinned", held=True, epsilon=0.01),
                         dict(base, name="free 1"), dict(base, name="free 2")]
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_allocate_says_when_the_total_is_not_certified_within_eta(tmp_path, capsys):
    """A plan whose total cannot be certified within its eta (here two finer lattices in a row did
    not narrow the bracket): allocate's text says so, as its JSON's unspent_reason does, and the
    saved plan composes to the total it printed."""
    path, saved = _uncertifiable_plan(tmp_path / "fine.dpplan"), tmp_path / "out.dpplan"
    code, out, _ = run(capsys, "allocate", str(path), "-o", str(saved))
    assert code == 0 and "more than eta = 1e-06" in out
    code, text, _ = run(capsys, "allocate", str(path), "--json")
    result = json.loads(text)
    assert f"note: {result['unspent_reason']}" in out.splitlines()
    code, text, _ = run(capsys, "compose", str(saved), "--theorem", "pld", "--json")
    assert json.loads(text)["totals"]["pld"]["epsilon"] == result["spent_epsilon"] <= 2.0


def test_target_says_when_the_redistributed_total_is_not_certified_within_eta(tmp_path, capsys):
    """target redistributes by the same search as allocate: where the total it lands on cannot be
    certified within eta, its text says so in the same note as allocate, its JSON in unspent_reason."""
    path = _uncertifiable_plan(tmp_path / "fine.dpplan")
    code, out, _ = run(capsys, "target", str(path), "free 1", "2.5")
    assert code == 0 and "more than eta = 1e-06" in out and "left unspent" in out
    code, text, _ = run(capsys, "target", str(path), "free 1", "2.5", "--json")
    assert code == 0 and f"note: {json.loads(text)['unspent_reason']}" in out.splitlines()


def test_allocate_names_the_noise_as_the_window_does(tmp_path, capsys):
    """The noise column says "Laplace", "Gaussian (ideal)", as the window's noise column does
    (display.noise), not "lap" / "gau"; a custom statistic has none."""
    plan = load_plan(example_path("psi-survey"))
    plan.update_statistic(7, plan[7].replace(noise=Noise.CONTINUOUS))     # mean household size
    save_plan(plan, tmp_path / "p.dpplan")
    code, out, _ = run(capsys, "allocate", str(tmp_path / "p.dpplan"))
    lines = out.splitlines()
    assert code == 0 and lines[2].split()[:5] == ["#", "name", "kind", "noise", "epsilon"]
    noise = {line.split("  ")[1].strip(): line for line in lines[3:11]}
    assert "  Laplace  " in noise["respondents"] and "  Gaussian  " in noise["education"]
    assert "  Gaussian (ideal)  " in noise["mean household size"]
    assert not any(f"  {short}  " in out for short in ("lap", "gau"))
    code, out, _ = run(capsys, "allocate", "census")
    headline = next(line for line in out.splitlines() if "pre-released headline" in line)
    assert headline.split()[3:5] == ["custom", "-"]


def test_one_statistic_is_said_in_the_singular(tmp_path, capsys):
    """"1 statistic, k = 1 query", not "1 statistics, k = 1 queries" (a new plan's first table)."""
    plan = load_plan(example_path("psi-survey"))
    plan.replace_all(plan.statistics[:1])
    save_plan(plan, tmp_path / "one.dpplan")
    for argv in (["compose", "--theorem", "basic"], ["allocate"], ["validate"],
                 ["report", "-o", str(tmp_path / "one.html")]):
        code, out, _ = run(capsys, argv[0], str(tmp_path / "one.dpplan"), *argv[1:])
        assert code == 0 and "1 statistic, k = 1 query" in out, argv
        assert "statistics" not in out.split("\n")[0] and "queries" not in out.split("\n")[0]
