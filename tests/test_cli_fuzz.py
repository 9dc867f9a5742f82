"""Issue 13: the command line on mutated example plans: exit 0 or 2, a short message, never a
traceback or a hang, and every plan it writes opens again.

Each command runs in-process under an alarm after 10 s of CPU time that only detects hangs (the
commands take well under a second on these plans; no timing is asserted; CPU time, so that a busy
machine, which slows the wall clock, cannot ring it). The default run is derandomized and short;
the `slow` one runs ten times the examples at random. A failure prints the plan text and the
commands (the random run also a ``@reproduce_failure`` line to replay it). DPPLANNER_FUZZ_EXAMPLES
sets the number of examples, DPPLANNER_FUZZ_HANG_SECONDS the hang detector's limit.
"""

from __future__ import annotations

import json
import os
import signal
import traceback
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st
from plan_mutations import example_text, plan_texts

from dpplanner.cli import main
from dpplanner.model.files import load_plan

HANG_SECONDS = float(os.environ.get("DPPLANNER_FUZZ_HANG_SECONDS", "10"))
EXAMPLES = int(os.environ.get("DPPLANNER_FUZZ_EXAMPLES", "50"))
COMMANDS = (["validate"], ["validate", "--json"], ["compose"], ["compose", "--json"],
            ["allocate", "-o", "{out}"], ["allocate", "--json", "--theorem", "basic"],
            ["curve", "--points", "5"], ["report", "-o", "{html}"])

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")


#: Hangs this fuzzer found (issue 13 item 7) and that are not fixed yet: the optimal prefix
#: curve on ~10^5 queries of many distinct epsilons (of few distinct ones it brackets each point on
#: its own: test_curve_of_one_statistic_repeated_77k_times). In the random runs a hang inside one
#: of these functions drops the example instead of failing.
KNOWN_HANG_SITES = {("prefix.py", "optimal_prefix_curve"), ("prefix.py", "upper_kernel"),
                    ("prefix.py", "_lattice_kernel")}


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so no `except Exception` in the code swallows it."""


@contextmanager
def hang_detector(what: str):
    def ring(signum, frame):
        raise Hang(f"{what} did not return within {HANG_SECONDS} s of CPU time")
    old = signal.signal(signal.SIGPROF, ring)
    signal.setitimer(signal.ITIMER_PROF, HANG_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def _sites(exc: BaseException) -> list[tuple[str, str]]:
    """(file, function) of each frame the alarm interrupted, outermost first. Read from the code
    objects: the interrupted frame may have no line number, which traceback.extract_tb and
    pytest's report cannot handle."""
    sites, tb = [], exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        sites.append((os.path.basename(code.co_filename), code.co_name))
        tb = tb.tb_next
    return sites


def known_site(exc: BaseException):
    """The KNOWN_HANG_SITES entry the interrupted call was in, if any."""
    return next((site for site in _sites(exc) if site in KNOWN_HANG_SITES), None)


def run_cli(argv, capsys, tolerate_known=True) -> tuple[int, str, str]:
    with hang_detector(" ".join(argv)):
        try:
            code = main(argv)
        except Hang as exc:
            site = known_site(exc)
            if tolerate_known and site:
                reject()
            # raised afresh, without the interrupted frames (see _sites): the report then names
            # where it hung instead of crashing pytest ("INTERNALERROR ... tb_lineno")
            raise Hang(f"{exc}; interrupted in {site or _sites(exc)[-1]}") from None
        except BaseException:       # anything escaping main would be a traceback for the user
            pytest.fail(f"{argv} raised:\n{traceback.format_exc()}")
    out, err = capsys.readouterr()
    return code, out, err


def check_command(path, command, tmp_path, capsys) -> None:
    out_plan, html = tmp_path / "out.dpplan", tmp_path / "r.html"
    argv = [command[0], str(path)] + [a.format(out=out_plan, html=html) for a in command[1:]]
    out_plan.unlink(missing_ok=True)
    code, out, err = run_cli(argv, capsys)
    assert code in (0, 2), (argv, code, err)
    assert "Traceback" not in err and "Traceback" not in out
    if code == 2:
        assert err.startswith("dpplanner-cli: error: ") and len(err) < 1500, err[:3000]
    elif "-o" in command and command[0] == "allocate":
        load_plan(out_plan)         # what the command wrote opens again


def _mutated(example: str, budget=None, stat=None) -> str:
    doc = json.loads(example_text(example))
    doc["budget"].update(budget or {})
    for i, fields in (stat or {}).items():
        doc["statistics"][i].update(fields)
    return json.dumps(doc)


@pytest.mark.slow
def test_curve_of_one_statistic_repeated_77k_times(tmp_path, capsys):
    """Once a hang this fuzzer found: the census example's first statistic repeated 77,000 times.
    Every point of every theorem's curve comes out, optimal never above advanced."""
    path = tmp_path / "p.dpplan"
    path.write_text(_mutated("census", {"redistribute": False}, {0: {"repetitions": 77_000}}))
    code, out, err = run_cli(["curve", str(path), "--points", "5"], capsys, tolerate_known=False)
    assert code == 0 and "Traceback" not in err
    header, *rows = [line.split(",") for line in out.strip().splitlines()]
    col = {name: i for i, name in enumerate(header)}
    assert len(rows) == 5 and int(rows[-1][col["k"]]) == 77_058
    for r in rows:
        assert float(r[col["optimal"]]) <= float(r[col["advanced"]])
        assert float(r[col["optimal"]]) == float(r[col["concurrent"]])


def _fuzz(text, commands, tmp_path, capsys):
    path = tmp_path / "fuzzed.dpplan"
    path.write_text(text, encoding="utf-8")
    for command in commands:
        check_command(path, command, tmp_path, capsys)


_settings = dict(deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.mark.slow
@settings(max_examples=EXAMPLES, **_settings)
@given(text=plan_texts(), commands=st.lists(st.sampled_from(COMMANDS), min_size=1, max_size=2))
def test_cli_on_mutated_plans(text, commands, tmp_path, capsys):
    _fuzz(text, commands, tmp_path, capsys)


#: The random run draws new plans every time, so it is opt-in: in `make test` a plan it happens
#: to draw that is merely slow (a report on 34,000 repetitions) would fail one run in many.
RANDOM_RUN = os.environ.get("DPPLANNER_FUZZ_RANDOM") == "1"


@pytest.mark.slow
@pytest.mark.skipif(not RANDOM_RUN, reason="random fuzzing: set DPPLANNER_FUZZ_RANDOM=1")
@settings(max_examples=10 * EXAMPLES, **{**_settings, "derandomize": False})
@given(text=plan_texts(), commands=st.lists(st.sampled_from(COMMANDS), min_size=1, max_size=3))
def test_cli_on_mutated_plans_long_run(text, commands, tmp_path, capsys):
    _fuzz(text, commands, tmp_path, capsys)


COMMAND_NAMES = ("validate", "compose", "allocate", "curve", "report", "--help", "", "bogus")
PLAN_ARGS = ("census", "psi-survey", "nope", "{fifo}", "{dir}", "{long}", "{plan}", "x" * 300, "-",
             "", "é\x00", "census.dpplan", "./census", "{out}")
OPTION_TOKENS = ("--json", "--theorem", "basic", "optimal", "filter", "kov", "-o", "--output",
                 "--points", "--eta", "0", "-1", "2", "1e999", "nan", "1e-300", "0.5", "", "{fifo}",
                 "{dir}", "{long}", "{out}", "{plan}", "--help", "--", "é\x00")
command_lines = st.builds(lambda c, p, rest: [c, p] + rest, st.sampled_from(COMMAND_NAMES),
                          st.sampled_from(PLAN_ARGS), st.lists(st.sampled_from(OPTION_TOKENS),
                                                               max_size=5))


@pytest.mark.slow
@settings(max_examples=EXAMPLES, **_settings)
@given(argv=command_lines)
def test_cli_on_random_command_lines(argv, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)           # relative outputs land in the test's folder
    fifo = tmp_path / "fifo"
    if hasattr(os, "mkfifo") and not fifo.exists():
        os.mkfifo(fifo)
    plan = tmp_path / "plan.dpplan"
    plan.write_text(example_text("psi-survey"))
    names = {"fifo": fifo, "dir": tmp_path, "long": tmp_path / ("p" * 300), "out": tmp_path / "o",
             "plan": plan}
    argv = [a.format(**names) if a.startswith("{") else a for a in argv]
    code, out, err = run_cli(argv, capsys)
    assert code in (0, 2), (argv, code, err[:500])
    assert "Traceback" not in err and "Traceback" not in out
    assert len(err) < 3000


def test_a_gaussian_at_the_least_epsilon_is_answered_at_once(tmp_path, capsys):
    """Was a hang in the model's Gaussian calibration; the engine's is bounded."""
    path = tmp_path / "p.dpplan"
    path.write_text(_mutated("psi-survey", {"redistribute": False}, {6: {"epsilon": 2.2250738585072014e-308}}))
    code, _, err = run_cli(["validate", str(path)], capsys, tolerate_known=False)
    assert code in (0, 2) and "Traceback" not in err
