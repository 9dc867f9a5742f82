"""`make bench`: run every benchmarks/bench_*.py in turn (each prints its own table).

Timings are printed, never asserted. Usage: .venv/bin/python benchmarks/run.py [name ...]
(e.g. `benchmarks/run.py optimal` runs only bench_optimal.py).
"""

from __future__ import annotations

import runpy
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    files = sorted(HERE.glob("bench_*.py"))
    if argv:
        files = [f for f in files if any(a in f.stem for a in argv)]
    sys.path.insert(0, str(HERE.parent))
    failed = []
    for f in files:
        print(f"\n=== {f.name} ===", flush=True)
        t0 = time.perf_counter()
        try:
            runpy.run_path(str(f), run_name="__main__")
        except SystemExit as exc:  # a bench may sys.exit(main())
            if exc.code not in (0, None):
                failed.append(f.name)
        except Exception as exc:  # keep going: one broken bench must not hide the others
            print(f"!! {f.name} failed: {exc!r}")
            failed.append(f.name)
        print(f"=== {f.name}: {time.perf_counter() - t0:.1f} s ===", flush=True)
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
