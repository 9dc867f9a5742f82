"""`make bench`: run every benchmarks/bench_*.py in turn, each in a process of its own, and write
docs/performance.md.

Usage: .venv/bin/python benchmarks/run.py [--out PAGE | --no-page] [name ...]

Each bench prints its own tables and declares the figures for the page with `rows.target` and
`rows.row` (see rows.py). A run of every bench writes docs/performance.md (or PAGE); a run of some
(e.g. `benchmarks/run.py optimal` runs only bench_optimal.py) writes no page unless --out is given.
Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import io
import json
import runpy
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import page  # noqa: E402
import rows  # noqa: E402


def run_bench(f: Path, sampler: page.LoadSampler) -> page.Section:
    """Runs ``f`` in a Python process of its own: one bench's imports, caches and heap (peers, memos
    filled by 10^5-release plans) would otherwise slow the benches after it, and a crash ends only
    that process. Its output streams through here; the rows it declared come back as JSON."""
    section = page.Section(page.title_of(f), f.stem)
    print(f"\n=== {f.name} ===", flush=True)
    first = len(sampler.samples)
    sampler.sample()
    copy = io.StringIO()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        declared = Path(tmp) / "rows.json"
        child = subprocess.Popen([sys.executable, "-u", str(Path(__file__).resolve()), "--child", str(f),
                                  str(declared)], stdout=subprocess.PIPE,
                                 text=True, errors="replace")
        for line in child.stdout:
            sys.stdout.write(line)
            copy.write(line)
        code = child.wait()
        if code < 0:
            line = f"!! {f.name} failed: killed by signal {-code}\n"
            sys.stdout.write(line)
            copy.write(line)
        if declared.exists():
            rows.ROWS.extend(rows.Row(**r) for r in json.loads(declared.read_text(encoding="utf-8")))
    section.failed = code != 0
    section.seconds = time.perf_counter() - t0
    sampler.sample()
    section.loads = sampler.samples[first:]
    section.output = copy.getvalue()
    print(f"=== {f.name}: {section.seconds:.1f} s ===", flush=True)
    return section


def child(f: Path, declared: Path) -> int:
    """In the bench's own process: run ``f`` and write the rows it declared to ``declared``."""
    rows.SECTION = f.stem
    code = 0
    try:
        runpy.run_path(str(f), run_name="__main__")
    except SystemExit as exc:  # a bench may sys.exit(main())
        code = 0 if exc.code in (0, None) else 1
    except Exception as exc:  # keep going: one broken bench must not hide the others
        print(f"!! {f.name} failed: {exc!r}")
        code = 1
    declared.write_text(json.dumps([dataclasses.asdict(r) for r in rows.ROWS]), encoding="utf-8")
    return code


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run only the bench files whose name contains one of these")
    parser.add_argument("--out", type=Path, help=f"write the page here (default for a full run: {page.PAGE})")
    parser.add_argument("--no-page", action="store_true", help="print only; write no page")
    args = parser.parse_args(argv)
    every = sorted(HERE.glob("bench_*.py"))
    files = [f for f in every if not args.names or any(a in f.stem for a in args.names)]
    out = None if args.no_page else (args.out or (None if args.names else page.PAGE))

    started = dt.datetime.now(dt.timezone.utc)
    share_start = page.core_share()
    sampler = page.LoadSampler().start()
    t0 = time.perf_counter()
    sections = [run_bench(f, sampler) for f in files]
    sampler.stop()
    share_end = page.core_share()
    failed = [s.file for s in sections if s.failed]

    targets = [r for r in rows.ROWS if r.met is not None]
    print(f"\n=== targets: {sum(r.met for r in targets)} of {len(targets)} met ===")
    for r in targets:
        print(f"  [{'met' if r.met else 'NOT met'}] {r.section}: {r.what}: {r.measured}"
              + (f"; peer: {r.peer}" if r.peer else ""))
    if out is not None:
        run = page.Run(started, time.perf_counter() - t0, sections, list(rows.ROWS), sampler.samples,
                       share_start, share_end, [f.stem for f in every])
        print(f"wrote {page.write(run, out)} ({page.load_words(sampler.samples, run.cores)})")
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.exit(child(Path(sys.argv[2]), Path(sys.argv[3])))
    sys.exit(main(sys.argv[1:]))
