"""Issue 23.10: --time-limit on the long commands. The limit is simulated by an injected clock (the
engine's one clock, ``deadline.now``): each reading advances it by a second, so a limit of one
second is past at the engine's first check, on any machine. What is reported then is a sound bound and
says so, in text and in JSON; without the option the clock is never read. Every long command
(report's per-statistic tables, validate and target too) states it in the same fields and lines."""

from __future__ import annotations

import json
import re

import pytest

from dpplanner.cli import main
from dpplanner.engine.memo import forget
from dpplanner.engine.optimal import deadline
from dpplanner.model.files import load_plan
from dpplanner.model.privacy import BLOCK


class SlowClock:
    """A clock that advances by ``step`` seconds at every reading."""

    def __init__(self, step: float = 1.0) -> None:
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def slow_clock(monkeypatch, step: float = 1.0) -> None:
    """The injected clock, and the engine's memories emptied (a result remembered from a run
    without the limit is the full answer, which the limit then never cuts short)."""
    forget()
    monkeypatch.setattr(deadline, "now", SlowClock(step))


@pytest.fixture
def slow(monkeypatch):
    slow_clock(monkeypatch)


def test_compose_at_the_limit_reports_sound_bounds_and_says_so_in_json(capsys, monkeypatch):
    code, out, _ = run(capsys, "compose", "census", "--json")
    free = json.loads(out)["totals"]
    slow_clock(monkeypatch)
    code, out, _ = run(capsys, "compose", "census", "--json", "--time-limit", "1")
    doc = json.loads(out)
    monkeypatch.undo()          # a result cut short is not remembered: the full run is as before
    again = json.loads(run(capsys, "compose", "census", "--json")[1])["totals"]
    assert {n: (t["epsilon"], t["detail"]) for n, t in again.items()} == \
        {n: (t["epsilon"], t["detail"]) for n, t in free.items()}
    assert code == 0 and doc["time_limit"] == 1 and doc["time_limit_reached"] is True
    stopped = doc["stopped_by_time_limit"]
    assert "pld" in stopped
    for name in stopped:
        limited = doc["totals"][name]
        assert limited["stopped_by_time_limit"] and "stopped at the time limit" in limited["detail"]
        # still an upper bound: never below what the full computation certifies from below
        assert limited["epsilon"] >= (free[name]["epsilon_lower"] or free[name]["epsilon"])
    for name, total in doc["totals"].items():
        if name not in stopped:
            assert total["epsilon"] == free[name]["epsilon"]


def test_compose_at_the_limit_says_so_in_text(capsys, slow):
    code, out, _ = run(capsys, "compose", "census", "--time-limit", "1")
    assert code == 0
    line = [s for s in out.splitlines() if s.startswith("time limit:")]
    assert line and "stopped at the time limit of 1 s for" in line[0] and "pld" in line[0]


def test_a_limit_not_reached_changes_nothing(capsys, monkeypatch):
    code, out, _ = run(capsys, "compose", "psi-survey", "--json")
    free = json.loads(out)
    slow_clock(monkeypatch, step=0.0)       # time stands still
    code, out, _ = run(capsys, "compose", "psi-survey", "--json", "--time-limit", "5")
    doc = json.loads(out)
    assert doc["time_limit_reached"] is False and doc["stopped_by_time_limit"] == []
    assert {n: t["epsilon"] for n, t in doc["totals"].items()} == \
        {n: t["epsilon"] for n, t in free["totals"].items()}


def test_without_the_option_the_clock_is_never_read(capsys, monkeypatch):
    def no_clock():
        raise AssertionError("the clock was read without --time-limit")
    monkeypatch.setattr(deadline, "now", no_clock)
    for argv in (["compose", "census"], ["curve", "census", "--points", "4"], ["allocate", "psi-survey"]):
        code, out, _ = run(capsys, *argv, "--json")
        assert code == 0 and json.loads(out)


def test_curve_at_the_limit_gives_cheaper_bounds_and_says_so(capsys, monkeypatch):
    code, out, _ = run(capsys, "curve", "census", "--points", "5", "--json")
    free = json.loads(out)
    slow_clock(monkeypatch)
    code, out, err = run(capsys, "curve", "census", "--points", "5", "--json", "--time-limit", "1")
    doc = json.loads(out)
    assert code == 0 and doc["time_limit_reached"] is True and "optimal" in doc["stopped_by_time_limit"]
    assert doc["k"] == free["k"]
    for name in doc["stopped_by_time_limit"]:
        for limited, lower, upper in zip(doc["upper"][name], free["lower"][name], free["upper"][name]):
            assert limited is None or limited >= (lower if lower is not None else upper)
    # the CSV on stdout stays CSV; the note goes to stderr
    code, out, err = run(capsys, "curve", "census", "--points", "5", "--time-limit", "1")
    assert out.splitlines()[0].startswith("k,") and "time limit:" not in out
    assert "stopped at the time limit of 1 s" in err


def test_curve_spends_part_of_its_limit_on_the_totals(capsys, monkeypatch):
    """The plan's totals, which the curve's last point meets, are composed first under the limit;
    the points get what is left of it (as docs/reference/cli.md says)."""
    from dpplanner.cli import totals_commands

    seen = []
    for name in ("plan_totals", "plan_curve"):
        real = getattr(totals_commands, name)
        monkeypatch.setattr(totals_commands, name, lambda *a, real=real, name=name, **k:
                            seen.append((name, k["time_limit"])) or real(*a, **k))
    slow_clock(monkeypatch)
    code, _, _ = run(capsys, "curve", "psi-survey", "--points", "3", "--time-limit", "1000")
    assert code == 0 and [name for name, _ in seen] == ["plan_totals", "plan_curve"]
    assert seen[1][1] < seen[0][1] <= 1000


def test_allocate_at_the_limit_stays_within_budget_and_says_so(capsys, slow, tmp_path):
    out_path = tmp_path / "a.dpplan"
    code, out, _ = run(capsys, "allocate", "psi-survey", "--json", "--time-limit", "1", "-o", str(out_path))
    doc = json.loads(out)
    assert code == 0 and doc["time_limit_reached"] is True
    assert "stopped at the time limit" in doc["unspent_reason"]
    assert doc["spent_epsilon"] <= doc["epsilon_g"]


def test_allocate_at_the_limit_saves_a_plan_the_full_computation_finds_within_budget(capsys, monkeypatch,
                                                                                      tmp_path):
    out_path = tmp_path / "a.dpplan"
    slow_clock(monkeypatch)
    code, out, _ = run(capsys, "allocate", "psi-survey", "--time-limit", "1", "-o", str(out_path))
    assert code == 0 and "time limit: stopped at the time limit" in out
    monkeypatch.undo()
    plan = load_plan(out_path)
    assert plan.total().epsilon <= plan.budget.spendable_epsilon


def test_report_at_the_limit_says_so(capsys, slow, tmp_path):
    code, out, _ = run(capsys, "report", "census", "-o", str(tmp_path / "r.html"), "--json",
                       "--time-limit", "1")
    doc = json.loads(out)
    assert code == 0 and doc["time_limit_reached"] is True and doc["stopped_by_time_limit"]
    assert "stopped at the time limit" in (tmp_path / "r.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_time_limit_that_is_not_a_positive_number_is_refused(capsys, value):
    code, out, err = run(capsys, "compose", "census", "--time-limit", value)
    assert code == 2 and out == "" and "time-limit" in err


def test_a_total_cut_short_is_never_remembered(monkeypatch):
    from dpplanner.engine import compose
    plan = ([0.01, 0.02, 0.05] * 30, [0.0] * 90, 1e-6)
    full = compose(*plan, theorem="pld", eta=1e-6)
    slow_clock(monkeypatch)
    cut = compose(*plan, theorem="pld", eta=1e-6, time_limit=1)
    assert "stopped at the time limit" in cut.detail and cut.epsilon >= full.epsilon_lower
    monkeypatch.undo()
    again = compose(*plan, theorem="pld", eta=1e-6)
    assert (again.epsilon, again.epsilon_lower, again.detail) == (full.epsilon, full.epsilon_lower, full.detail)


#: an example with more statistics than one block of per-statistic work
BIG = "synthetic-1000"


def _size(name: str) -> int:
    from dpplanner.model.examples import example_paths
    return len(load_plan(example_paths()[name]))


def _rows(html: str) -> set[int]:
    """The statistic numbers of the derivations table's rows."""
    return {int(i) for i in re.findall(r'<tr data-row="(\d+)">', html)}


def test_report_tables_stop_at_the_limit_and_name_what_is_left_out(capsys, slow, tmp_path):
    out_path = tmp_path / "r.html"
    code, out, _ = run(capsys, "report", BIG, "-o", str(out_path), "--json", "--time-limit", "1")
    doc = json.loads(out)
    html = out_path.read_text(encoding="utf-8")
    n = _size(BIG)
    left = f"(statistics {BLOCK + 1} to {n})"
    assert code == 0 and doc["time_limit_reached"] is True
    for section in ("statistics tables", "implementation table", "derivations"):
        assert f"report: {section} {left}" in doc["stopped_by_time_limit"]
    assert f"statistics {BLOCK + 1} to {n} are not in this table" in html
    assert _rows(html) == set(range(BLOCK))
    code, out, _ = run(capsys, "report", BIG, "-o", str(out_path), "--time-limit", "1")
    assert f"report: derivations {left}" in out and "left out of the report" in out


def test_report_without_the_limit_has_every_statistic(capsys, tmp_path):
    out_path = tmp_path / "r.html"
    code, out, _ = run(capsys, "report", BIG, "-o", str(out_path), "--json")
    html = out_path.read_text(encoding="utf-8")
    assert code == 0 and json.loads(out)["stopped_by_time_limit"] == []
    assert _rows(html) == set(range(_size(BIG))) and "Time limit" not in html


def test_validate_at_the_limit_says_what_it_did_not_check(capsys, slow):
    code, out, _ = run(capsys, "validate", BIG, "--json", "--time-limit", "1")
    doc = json.loads(out)
    assert code == 0 and doc["valid"] is True and doc["time_limit_reached"] is True
    assert f"the statistics' checks (statistics {BLOCK + 1} to {_size(BIG)})" in doc["stopped_by_time_limit"]
    code, out, _ = run(capsys, "validate", BIG, "--time-limit", "1")
    assert "not checked for problems; run without --time-limit" in out


def test_validate_at_the_limit_gives_a_sound_total_and_says_so(capsys, monkeypatch):
    free = json.loads(run(capsys, "validate", "census", "--json")[1])
    slow_clock(monkeypatch)
    doc = json.loads(run(capsys, "validate", "census", "--json", "--time-limit", "1")[1])
    assert doc["stopped_by_time_limit"] == [doc["theorem"]]
    assert doc["total_epsilon"] >= free["total_epsilon"]


def test_target_at_the_limit_stays_within_budget_and_says_so(capsys, monkeypatch, tmp_path):
    out_path = tmp_path / "t.dpplan"
    slow_clock(monkeypatch)
    code, out, _ = run(capsys, "target", "psi-survey", "1", "50", "--json", "--time-limit", "1",
                       "-o", str(out_path))
    doc = json.loads(out)
    assert code == 0 and doc["time_limit_reached"] is True
    assert doc["stopped_by_time_limit"] == ["the allocation search"]
    code, out, _ = run(capsys, "target", "psi-survey", "1", "50", "--time-limit", "1")
    assert "time limit: stopped at the time limit of 1 s for the allocation search: the search ended" in out
    monkeypatch.undo()
    plan = load_plan(out_path)
    assert plan[0].target_error == 50
    assert plan.total().epsilon <= plan.budget.spendable_epsilon


@pytest.mark.parametrize("argv", [["compose", "psi-survey"], ["curve", "psi-survey", "--points", "3"],
                                  ["report", "psi-survey", "-o", "{tmp}/r.html"], ["allocate", "psi-survey"],
                                  ["validate", "psi-survey"], ["target", "psi-survey", "1", "50"]])
def test_every_long_command_states_its_limit_in_the_same_fields(capsys, monkeypatch, tmp_path, argv):
    argv = [a.format(tmp=tmp_path) for a in argv]
    doc = json.loads(run(capsys, *argv, "--json")[1])
    assert (doc["time_limit"], doc["time_limit_reached"], doc["stopped_by_time_limit"]) == (None, False, [])

    def no_clock():
        raise AssertionError("the clock was read without --time-limit")
    monkeypatch.setattr(deadline, "now", no_clock)
    assert json.loads(run(capsys, *argv, "--json")[1])["time_limit"] is None
    slow_clock(monkeypatch, step=0.0)       # time stands still: the limit is never reached
    doc = json.loads(run(capsys, *argv, "--json", "--time-limit", "5")[1])
    assert (doc["time_limit"], doc["time_limit_reached"], doc["stopped_by_time_limit"]) == (5, False, [])
