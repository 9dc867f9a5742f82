"""Run the test suite as a busy machine would: a test that depends on speed or load fails here.

    .venv/bin/python tools/test_stress.py [--quiet-runs 5] [--loaded-runs 5] [--pinned-runs 1]
                                          [-- pytest arguments, e.g. tests/gui]

The suite runs ``--quiet-runs`` times with no added load, ``--loaded-runs`` times beside two busy loops
(two processes spinning, as much work as this 2-core machine has cores) and ``--pinned-runs``
times on one core (``taskset -c 0``: the suite, its engine processes and nothing else). Each run
prints one line - pass or fail, the counts pytest gave, the failed tests, the wall time - and
its whole output goes to build/test-stress/. The exit status is 1 if any run failed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "build" / "test-stress"
BUSY_LOOPS = 2
BUSY_LOOP = "while True:\n    pass\n"


@contextmanager
def busy_loops(n: int):
    """``n`` processes that spin until the block ends (ended by their own ids)."""
    loops = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(n)]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def run_suite(number: int, key: str, how: str, prefix: list[str], pytest_args: list[str]) -> bool:
    log = LOGS / f"run-{number:02d}-{key}.log"
    command = prefix + [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    start = time.monotonic()
    with open(log, "w") as out:
        code = subprocess.call(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - start
    text = log.read_text(errors="replace")
    summary = _summary(text)
    verdict = "PASS" if code == 0 else f"FAIL (exit {code})"
    print(f"run {number:2d}  {how:<26} {verdict:<14} {summary}  [{seconds / 60:.1f} min]  "
          f"{log.relative_to(ROOT)}", flush=True)
    for name in re.findall(r"^(?:FAILED|ERROR) (\S+)", text, re.MULTILINE):
        print(f"          {name}", flush=True)
    return code == 0


def _summary(text: str) -> str:
    """pytest's last line without its '=' frame ('928 passed, 20 skipped in 612.3s')."""
    lines = [ln.strip("= ") for ln in text.splitlines() if re.search(r"\d+ (passed|failed|error)", ln)]
    return lines[-1] if lines else "no summary (see the log)"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet-runs", type=int, default=5)
    parser.add_argument("--loaded-runs", type=int, default=5)
    parser.add_argument("--pinned-runs", type=int, default=1)
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = parser.parse_args(argv)
    LOGS.mkdir(parents=True, exist_ok=True)
    pinned = ["taskset", "-c", "0"] if shutil.which("taskset") else None
    plan = ([("quiet", "with no added load", [])] * args.quiet_runs
            + [("loaded", f"beside {BUSY_LOOPS} busy loops", [])] * args.loaded_runs
            + [("pinned", "on one core (taskset -c 0)", pinned)] * args.pinned_runs)
    print(f"{len(plan)} runs of pytest {' '.join(args.pytest_args) or '(the whole suite)'}; "
          f"{os.cpu_count()} cores, load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}",
          flush=True)
    results = []
    for number, (key, how, prefix) in enumerate(plan, 1):
        if prefix is None:
            print(f"run {number:2d}  {how:<26} SKIPPED: no taskset on this machine", flush=True)
            continue
        with busy_loops(BUSY_LOOPS if key == "loaded" else 0):
            results.append(run_suite(number, key, how, prefix, args.pytest_args))
    print(f"{sum(results)} of {len(results)} runs passed", flush=True)
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
