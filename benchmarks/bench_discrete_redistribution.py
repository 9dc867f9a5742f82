"""Redistribution with OpenDP (discrete) noise beside continuous noise, on the shipped examples.

Run: .venv/bin/python benchmarks/run.py discrete_redistribution   (or `make bench`)

What the window's automatic redistribution costs in the engine, without the window: each example
with every statistic's noise set to OpenDP's (discrete) and, alternating in the same run, to the
continuous one. An edit is a statistic's weight changed by 5 %, the plan redistributed under its
theorem, then every theorem's total and the 100-point cost curve (what an edit must update). Two
figures per example and noise, wall and CPU time:
- first edit: the first edit after opening, cold, the median of COLD_RUNS (the engine's memories
  emptied before each; the process's one-time imports, e.g. scipy.optimize's ~0.3 s, are made
  before anything is timed: they fell on whichever example and noise came first);
- edits: the median of the next EDITS edits in a row (the engine keeps its memories between
  edits, as in the window).
Beside them, pld's work per edit of the EDITS edits (compositions, lattices composed with both
ends, upper ends alone: timing.pld_counts). Target: OpenDP noise costs at most twice the
continuous noise (CPU time, the same run). The window's own edit -> plot rows (bench_gui.py)
time the whole path, GUI included. CPU time because the machine is shared (wall time printed
beside it); nothing is asserted.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rows import row as page_row  # noqa: E402
from rows import target as page_target  # noqa: E402
from timing import per_edit, pld_counts  # noqa: E402
from dpplanner.compute import jobs  # noqa: E402
from dpplanner.engine.memo import forget  # noqa: E402
from dpplanner.engine.types import CancelToken  # noqa: E402
from dpplanner.model import Kind, examples, files  # noqa: E402
from dpplanner.model.redistribution import rebalance, rebalanced_edit  # noqa: E402
from dpplanner.model.requests import CurveView  # noqa: E402
from dpplanner.model.statistic import Noise  # noqa: E402

EDITS = 10
#: Cold first edits per example and noise (one alone read 77 ms CPU in one run, 46 in the next).
COLD_RUNS = 3
NOISES = (Noise.OPENDP, Noise.CONTINUOUS)


def with_noise(name: str, noise: Noise):
    plan = files.load_plan(examples.example_path(name))
    plan.replace_all([s.replace(noise=noise) if s.kind is not Kind.CUSTOM else s for s in plan.statistics])
    return plan


def clock(fn) -> tuple[float, float]:
    """(wall, CPU) seconds of one call."""
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def edit_times(name: str, noise: Noise):
    """((wall, CPU) seconds of the first edit, cold: the median by CPU of COLD_RUNS, each on the
    plan opened afresh with the engine's memories emptied; the median (wall, CPU) of the next
    EDITS edits after the last of them; pld's work per edit of those, in words)."""
    colds = []
    for run in range(COLD_RUNS):
        plan = with_noise(name, noise)
        rebalance(plan)
        forget()
        walls, cpus, counts = edits(plan, 1 + (EDITS if run == COLD_RUNS - 1 else 0))
        colds.append((walls[0], cpus[0]))
    cold = sorted(colds, key=lambda wall_cpu: wall_cpu[1])[COLD_RUNS // 2]
    return cold, (statistics.median(walls[1:]), statistics.median(cpus[1:])), per_edit(counts, EDITS)


def edits(plan, count: int) -> tuple[list[float], list[float], dict]:
    """(walls, CPUs, pld's work after the first) of ``count`` edits in a row: a free statistic's
    weight changed by 5 %, the plan redistributed, every theorem's total and the curve evaluated."""
    free = [i for i in range(len(plan)) if not plan[i].held]
    walls, cpus = [], []
    with pld_counts() as counts:
        for j in range(count):
            i = free[(7 * j) % len(free)]
            factor = 1.05 if j % 2 == 0 else 0.95

            def edit_and_evaluate(i=i, factor=factor):
                rebalanced_edit(plan, lambda p: p.update_statistic(i, p[i].replace(weight=p[i].weight * factor)))
                jobs._evaluate(plan.evaluation_request(CurveView()), CancelToken(), lambda _f: None)

            if j == 1:
                counts.update({name: 0 for name in counts})
            w, c = clock(edit_and_evaluate)
            walls.append(w)
            cpus.append(c)
    return walls, cpus, dict(counts)


def ms(wall_cpu: tuple[float, float]) -> str:
    return f"{wall_cpu[1] * 1e3:.0f} ms CPU ({wall_cpu[0] * 1e3:.0f} ms wall)"


def main() -> int:
    import scipy.optimize  # noqa: F401  (imported lazily by the engine: see the docstring)
    print(f"{'example':<16} {'noise':<11} {'first edit: CPU / wall ms':>26} {'edits: CPU / wall ms':>22}")
    for name in examples.EXAMPLE_NAMES:
        got = {}
        for noise in NOISES:            # alternating: both noises in the same minutes
            cold, warm, work = edit_times(name, noise)
            got[noise] = (cold, warm)
            (ow, oc), (ew, ec) = cold, warm
            print(f"{name:<16} {noise.value:<11} {oc * 1e3:>14.0f} / {ow * 1e3:<9.0f} {ec * 1e3:>10.0f} / "
                  f"{ew * 1e3:<9.0f} {work}")
        parts = ((f"first edit, cold, median of {COLD_RUNS}", 0), (f"edits, median of {EDITS}", 1))
        for part, index in parts:
            ours, peer = got[Noise.OPENDP][index], got[Noise.CONTINUOUS][index]
            page_target(f"{name}, {part}, OpenDP noise: <= 2x the continuous noise's CPU time",
                        f"{ms(ours)}: {ours[1] / peer[1]:.2f}x", ours[1] <= 2 * peer[1],
                        peer=f"continuous noise: {ms(peer)}")
    page_row("an edit (rows above)", "a weight changed, redistributed, every theorem's total and the "
             "100-point curve; in one process, no window")
    return 0


if __name__ == "__main__":
    sys.exit(main())
