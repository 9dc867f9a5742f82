"""How fast plan files at and beyond the limits are refused or loaded (printed, never asserted).

Run: .venv/bin/python benchmarks/bench_hostile_files.py
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rows import row as page_row  # noqa: E402
from timing import timed  # noqa: E402
from dpplanner.model.files import PlanFileError, loads_plan  # noqa: E402

MB = 18_900_000


def _array_of(unit: str, count: int) -> str:
    """A valid empty plan carrying ``count`` copies of ``unit`` in an unknown field."""
    return ('{"format_version": 1, "budget": {"epsilon": 1, "delta": 1e-6}, "statistics": [], '
            '"x": [' + ",".join([unit] * count) + "]}")


CASES = {
    "18.9 MB of 30-deep nested arrays": lambda: _array_of("[" * 30 + "0" + "]" * 30, MB // 62),
    "18.9 MB of [0]": lambda: _array_of("[0]", MB // 4),
    "18 MB of one nesting": lambda: '{"format_version": 1, "x": ' + "[" * 9_000_000
                                    + "]" * 9_000_000 + "}",
    "780k 17-digit numbers (loads)": lambda: _array_of("1.2345678901234567e-300", MB // 24),
    "999k small integers (loads)": lambda: _array_of("7", 999_000),
    "one 18.9 MB string (loads)": lambda: _array_of('"' + "a" * MB + '"', 1),
    # the most objects the value limit allows: each is checked for a repeated key
    "499k small objects (loads)": lambda: _array_of('{"a":1}', 499_980),
}


def _outcome(text: str) -> str:
    try:
        loads_plan(text)
    except PlanFileError as exc:
        return f"refused: {str(exc)[:60]}"
    return "loaded"


def main() -> None:
    print("plan files at the limits (median of 3, ms; peak RSS of the process so far)")
    for name, make in CASES.items():
        text = make()
        ms = timed(lambda: _outcome(text))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"  {name:<32} {ms:9.1f} ms  {rss:7.0f} MB  {_outcome(text)}")
        peer = ""
        if "(loads)" in name:      # what Python's own JSON parser needs for the same text
            peer = f"json.loads alone: {timed(lambda: json.loads(text)):.0f} ms"
        page_row(name, f"{_outcome(text)} in {ms:.0f} ms (median of 3); peak RSS so far {rss:.0f} MB",
                 peer=peer)


if __name__ == "__main__":
    main()
