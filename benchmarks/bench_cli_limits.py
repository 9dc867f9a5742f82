"""dpplanner-cli at the documented limits: long commands, with and without --time-limit

Each case runs the real command (`python -m dpplanner.cli ...`, output to /dev/null) once, cold,
on a plan written for it: one statistic x 100,000 repetitions (the query limit), the census example
at eta = 1e-6, 20,000 statistics (the statistic limit; census's ungrouped Laplace statistics in
turn), and 300 distinct pinned statistics beside 5 free ones at eta = 1e-6. Target: done within
20 s of wall time (the documented limits should complete in a reasonable time). Wall and CPU time
(of the command's process) are printed with the load average: on a shared machine the wall time
grows with the load while the CPU time stays near a quiet machine's. A command still running after
CAP seconds is stopped and reported as not met. With --time-limit 20 every command must end soon
after the limit and say in its JSON whether it was reached (run for the cases that took longer
than the limit without it).

Run: .venv/bin/python benchmarks/bench_cli_limits.py
"""

from __future__ import annotations

import copy
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rows import target  # noqa: E402
from dpplanner.model.examples import example_paths  # noqa: E402

TARGET_S = 20.0
#: A command still running after this many seconds is stopped (reported as not met).
CAP = float(os.environ.get("BENCH_CLI_CAP", "180"))
LIMIT = 20
#: What a time-limited command may take beyond its limit: start-up, reading the plan, the
#: per-statistic work before and after the engine, and the last engine step before its check.
SLACK = 10.0


def _plans(folder: Path) -> dict[str, Path]:
    census = json.loads(Path(example_paths()["census"]).read_text(encoding="utf-8"))
    base = census["statistics"][0]          # a count, Laplace (OpenDP's discrete noise)

    def write(name: str, budget: dict, stats: list) -> Path:
        doc = copy.deepcopy(census)
        doc["budget"].update(budget)
        doc["statistics"] = stats
        path = folder / f"{name}.dpplan"
        path.write_text(json.dumps(doc), encoding="utf-8")
        return path

    laplace = [s for s in census["statistics"] if s["mechanism"] == "laplace" and s["kind"] != "custom"]
    many = [dict(laplace[i % len(laplace)], name=f"{laplace[i % len(laplace)]['name']} {i}",
                 epsilon=laplace[i % len(laplace)]["epsilon"] / 400) for i in range(20_000)]
    pinned = [dict(base, name=f"pinned {i}", held=True, epsilon=1e-4 * (1 + i / 1000)) for i in range(300)]
    free = [dict(base, name=f"free {i}") for i in range(5)]
    return {
        "one statistic x 100,000 repetitions": write("repeated", {}, [dict(base, repetitions=100_000,
                                                                           epsilon=1e-6)]),
        "census at eta = 1e-6": write("census-fine", {"eta": 1e-6}, census["statistics"]),
        "20,000 statistics": write("many", {}, many),
        "300 distinct pinned statistics at eta = 1e-6": write("pinned", {"eta": 1e-6}, pinned + free),
    }


CASES = (   # (command, plan)
    ("report", "one statistic x 100,000 repetitions"),
    ("report", "census at eta = 1e-6"),
    ("curve", "census at eta = 1e-6"),
    ("compose", "20,000 statistics"),
    ("curve", "20,000 statistics"),
    ("report", "20,000 statistics"),
    ("allocate", "300 distinct pinned statistics at eta = 1e-6"),
)


def _run(argv: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, its stdout or "" if it was stopped at CAP)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-m", "dpplanner.cli", *argv], capture_output=True,
                             text=True, timeout=CAP).stdout
    except subprocess.TimeoutExpired:
        out = ""
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def _argv(command: str, plan: Path, folder: Path) -> list[str]:
    return [command, str(plan)] + (["-o", str(folder / "report.html")] if command == "report" else [])


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plans = _plans(folder)
        print(f"dpplanner-cli at the limits (one cold run each; stopped after {CAP:.0f} s)")
        for command, name in CASES:
            load = os.getloadavg()[0]
            wall, cpu, out = _run(_argv(command, plans[name], folder))
            done = bool(out)
            shown = f"{wall:.1f} s wall, {cpu:.1f} s CPU" if done else f"stopped after {CAP:.0f} s ({cpu:.1f} s CPU)"
            print(f"  {command:<9} {name:<46} {shown}  (load {load:.1f})")
            target(f"{command}, {name}: done in <= {TARGET_S:.0f} s",
                   f"{shown} (load average {load:.1f})", done and wall <= TARGET_S)
            if not (done and wall <= LIMIT):
                _limited(command, name, plans[name], folder)


def _limited(command: str, name: str, plan: Path, folder: Path) -> None:
    """The same command with --time-limit LIMIT --json: done within LIMIT + SLACK seconds, its
    JSON saying whether the limit was reached."""
    load = os.getloadavg()[0]
    wall, cpu, out = _run(_argv(command, plan, folder) + ["--json", "--time-limit", str(LIMIT)])
    reached = json.loads(out).get("time_limit_reached") if out else None
    shown = (f"{wall:.1f} s wall, {cpu:.1f} s CPU, " + ("limit reached, stated in the JSON" if reached else
                                                        "finished within the limit") if out
             else f"stopped after {CAP:.0f} s ({cpu:.1f} s CPU)")
    print(f"  {command:<9} {'  --time-limit ' + str(LIMIT):<46} {shown}  (load {load:.1f})")
    target(f"{command} --time-limit {LIMIT}, {name}: done in <= {LIMIT + SLACK:.0f} s, saying so",
           f"{shown} (load average {load:.1f})", bool(out) and wall <= LIMIT + SLACK)


if __name__ == "__main__":
    main()
