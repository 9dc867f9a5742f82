"""`make bench`: run every benchmarks/bench_*.py in turn and write docs/performance.md.

Usage: .venv/bin/python benchmarks/run.py [--out PAGE | --no-page] [name ...]

Each bench prints its own tables and declares the figures for the page with `rows.target` and
`rows.row` (see rows.py). A run of every bench writes docs/performance.md (or PAGE); a run of some
(e.g. `benchmarks/run.py optimal` runs only bench_optimal.py) writes no page unless --out is given.
Timings are printed, never asserted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import runpy
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import page  # noqa: E402
import rows  # noqa: E402


class Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy for the page."""

    def __init__(self, terminal) -> None:
        self.terminal = terminal
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.terminal.write(text)
        self.copy.write(text)
        return len(text)

    def flush(self) -> None:
        self.terminal.flush()


def run_bench(f: Path, sampler: page.LoadSampler) -> page.Section:
    section = page.Section(page.title_of(f), f.stem)
    rows.SECTION = f.stem
    print(f"\n=== {f.name} ===", flush=True)
    first = len(sampler.samples)
    sampler.sample()
    tee, terminal = Tee(sys.stdout), sys.stdout
    sys.stdout = tee
    t0 = time.perf_counter()
    try:
        runpy.run_path(str(f), run_name="__main__")
    except SystemExit as exc:  # a bench may sys.exit(main())
        section.failed = exc.code not in (0, None)
    except Exception as exc:  # keep going: one broken bench must not hide the others
        print(f"!! {f.name} failed: {exc!r}")
        section.failed = True
    finally:
        sys.stdout = terminal
    section.seconds = time.perf_counter() - t0
    sampler.sample()
    section.loads = sampler.samples[first:]
    section.output = tee.copy.getvalue()
    print(f"=== {f.name}: {section.seconds:.1f} s ===", flush=True)
    return section


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
    sys.exit(main(sys.argv[1:]))
