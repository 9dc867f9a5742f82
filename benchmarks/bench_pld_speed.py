"""compose_mechanisms at scale: against dp_accounting, quiet and under load, and its growth in k.

Run: .venv/bin/python benchmarks/run.py pld_speed   (or `make bench` for every benchmark)

Issue 27's targets for the noise-aware composition, each printed as met / NOT met (nothing is
asserted):

* 10,000 releases of 50 kinds and 1000 distinct releases: at least 10 times faster than
  dp_accounting's pessimistic (connect-the-dots) PLD at d = 1e-4, at equal or better tightness
  (our certified upper end <= its epsilon, at the coarsest eta of tightness.ETAS that gets there:
  1e-3 is not always enough); at least 3 times under a background load of two busy loops (started
  here, stopped after);
* 100,000 distinct releases in at most 5 s; the cost from 10^4 to 10^5 distinct releases growing
  at most as k^1.05;
* the engine's work of one window edit on the 100-query example (the allocation job: redistribute,
  then every theorem's total and the plot's curve; in this process, no helper) at most 50 ms CPU,
  the window's edit -> plot target, with the allocation's share of it and how many pld
  compositions and lattices an edit costs.

Ours and the peer are timed alternately in one process (ours cold: the engine's memories emptied
before each call), median of the repeats; wall time and this process's CPU time are both printed
(on a shared machine the CPU time stays near a quiet machine's while the wall time grows). Each
repeat times back-to-back calls for at least SPAN seconds and reports the time per call: after the
pause before a repeat, a process on a busy machine first waits for a time slice and runs on cold
caches, a fixed cost of ~10-30 ms that doubled our ~25 ms call and left the peer's ~0.5 s call
nearly unchanged when each repeat was one call (measured at load 3: ours 50 ms wall, 24 ms CPU
after a pause, 24 ms wall, 21 ms CPU back to back).
"""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpplanner.engine import EpsDelta, Gaussian, Laplace, compose_mechanisms  # noqa: E402
from dpplanner.engine.memo import forget  # noqa: E402
from rows import row, target  # noqa: E402
from timing import per_edit, pld_counts  # noqa: E402
from tightness import ETAS, as_tight_eta  # noqa: E402

try:
    from dp_accounting.pld import common as dp_common
    from dp_accounting.pld import privacy_loss_distribution as dp_pld
except ImportError:  # pragma: no cover - the bench extra is missing
    dp_pld = None

D = 1e-4
#: The growth rows' eta (the issue's 10^5 target is at 1e-3).
ETA = 1e-3
DELTA_G = 1e-6


def release(kind: int, rng) -> object:
    """A Laplace (m ~ U[100, 2000]), Gaussian (m ~ U[50, 500]) or EpsDelta (eps ~ U[1e-4, 1e-3],
    delta 1e-10) release, as the mechanisms bench draws them."""
    if kind == 0:
        return Laplace(float(rng.uniform(100, 2000)))
    if kind == 1:
        return Gaussian(float(rng.uniform(50, 500)))
    return EpsDelta(float(rng.uniform(1e-4, 1e-3)), 1e-10)


def fifty_kinds():
    rng = np.random.default_rng(3)
    kinds = rng.choice(3, 50, p=[0.55, 0.4, 0.05])
    return [release(int(k), rng) for k in kinds], [200] * 50


def distinct(n: int, seed: int = 2):
    rng = np.random.default_rng(seed)
    return ([Laplace(float(m)) for m in rng.uniform(200, 2000, n // 2)]
            + [Gaussian(float(m)) for m in rng.uniform(100, 1000, n - n // 2)], [1] * n)


def peer_epsilon(releases, mult) -> float:
    """dp_accounting's pessimistic PLD at d = 1e-4: one distribution per release, repeated ones
    self-composed, all composed in a balanced tree."""
    plds = []
    for r, k in zip(releases, mult):
        if isinstance(r, Laplace):
            p = dp_pld.from_laplace_mechanism(r.m, value_discretization_interval=D)
        elif isinstance(r, Gaussian):
            p = dp_pld.from_gaussian_mechanism(r.m, value_discretization_interval=D)
        else:
            p = dp_pld.from_privacy_parameters(dp_common.DifferentialPrivacyParameters(r.epsilon, r.delta),
                                               value_discretization_interval=D)
        plds.append(p.self_compose(k) if k > 1 else p)
    while len(plds) > 1:
        plds = [plds[i].compose(plds[i + 1]) if i + 1 < len(plds) else plds[i] for i in range(0, len(plds), 2)]
    return plds[0].get_epsilon_for_delta(DELTA_G)


def _clock(fn):
    # (a pause first: the BLAS threads of the run before, spinning idle for a while, would count
    # in this process's CPU time and take cores from the run being timed)
    time.sleep(0.3)
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


#: Each contender's repeat lasts at least this long (seconds): back-to-back calls, timed per call.
SPAN = 0.25


def _per_call(fn, cold=None):
    """As ``_clock``, per call of ``fn`` called back to back for at least SPAN seconds of its own
    (``cold`` before each call, not timed); then the wall time of the first call alone (the one
    right after the pause, as the protocol before SPAN timed every call)."""
    time.sleep(0.3)
    calls, wall, cpu, out, first = 0, 0.0, 0.0, None, None
    while wall < SPAN:
        if cold is not None:
            cold()
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        calls, wall, cpu = calls + 1, wall + time.perf_counter() - w0, cpu + time.process_time() - c0
        first = wall if first is None else first
    return out, wall / calls, cpu / calls, first


def alternate(releases, mult, repeat: int, eta: float):
    """(ours, peer) each (result, median wall s, median CPU s) per call, then the median wall s of
    the first call after each pause; run alternately."""
    ours, peer = [], []
    for _ in range(repeat):
        ours.append(_per_call(lambda: compose_mechanisms(releases, DELTA_G, eta=eta, multiplicities=mult), forget))
        if dp_pld is not None:
            peer.append(_per_call(lambda: peer_epsilon(releases, mult)))

    def summary(runs):
        return (runs[-1][0], *(statistics.median(r[i] for r in runs) for i in (1, 2, 3))) if runs else None
    return summary(ours), summary(peer)


@contextmanager
def busy_loops(n: int = 2):
    """n busy loops in other processes while the block runs (each stopped by its own pid after)."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(0.5)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def compare(label: str, releases, mult, repeat: int, need: float, load: str, eta: float) -> None:
    (r, wall, cpu, first), peer = alternate(releases, mult, repeat, eta)
    width = r.epsilon - r.epsilon_lower
    line = f"{label:<34} {load:<7} eta {eta:g} ours [{r.epsilon_lower:.5f}, {r.epsilon:.5f}] " \
           f"{wall * 1000:8.0f} ms wall {cpu * 1000:7.0f} ms CPU"
    if peer is None:
        print(line + "   (dp_accounting not installed)")
        return
    eps, p_wall, p_cpu, p_first = peer
    after_pause = f"first call after each pause: ours {first * 1000:.0f} ms, {p_first / first:.1f}x"
    print(line + f" | dp_accounting {eps:.5f} {p_wall * 1000:7.0f} ms wall {p_cpu * 1000:7.0f} ms CPU | "
          f"{p_wall / wall:5.1f}x wall, {p_cpu / cpu:5.1f}x CPU ({after_pause})")
    target(f"compose_mechanisms, {label}, {load}: >= {need:g}x dp_accounting CTD d = 1e-4 "
           "(wall, alternating, median) at equal or better tightness (ours at the coarsest eta of "
           f"{', '.join(f'{e:g}' for e in ETAS)} whose upper end <= its epsilon)",
           f"{p_wall / wall:.1f}x wall ({wall * 1000:.0f} ms; CPU {cpu * 1000:.0f} ms, {p_cpu / cpu:.1f}x), "
           f"eta {eta:g}: upper {r.epsilon:.5f}, width {width:.1e} ({after_pause})",
           p_wall >= need * wall and r.epsilon <= eps and width <= eta,
           peer=f"{eps:.5f} in {p_wall * 1000:.0f} ms wall, {p_cpu * 1000:.0f} ms CPU")


def growth() -> None:
    times = {}
    for n, repeat in ((10_000, 3), (100_000, 2)):
        releases, mult = distinct(n)
        runs = []
        for _ in range(repeat):
            forget()
            runs.append(_clock(lambda: compose_mechanisms(releases, DELTA_G, eta=ETA, multiplicities=mult)))
        r = runs[-1][0]
        wall, cpu = statistics.median(x[1] for x in runs), statistics.median(x[2] for x in runs)
        times[n] = (wall, cpu)
        print(f"{n:>7} distinct releases: [{r.epsilon_lower:.5f}, {r.epsilon:.5f}] {wall:6.2f} s wall "
              f"{cpu:6.2f} s CPU ({r.detail})")
        if n == 100_000:
            target("compose_mechanisms, 100,000 distinct releases, eta = 1e-3: <= 5 s (wall, median of 2)",
                   f"{wall:.2f} s wall, {cpu:.2f} s CPU, width {r.epsilon - r.epsilon_lower:.1e}", wall <= 5.0)
    exponent = math.log(times[100_000][1] / times[10_000][1]) / math.log(10.0)
    print(f"growth from 10^4 to 10^5 distinct releases: k^{exponent:.2f} (CPU time)")
    target("compose_mechanisms: cost from 10^4 to 10^5 distinct releases grows <= k^1.05 (CPU time)",
           f"k^{exponent:.2f}", exponent <= 1.05)


EDITS = 20


@contextmanager
def cpu_of(module, name: str):
    """The CPU time of each call of ``module.name`` while the block runs, in the list yielded."""
    spent, real = [], getattr(module, name)

    def timed(*args, **kwargs):
        c0 = time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            spent.append(time.process_time() - c0)
    setattr(module, name, timed)
    try:
        yield spent
    finally:
        setattr(module, name, real)


def edits() -> None:
    """The bench_gui edits of synthetic-100 (row 7i times 1.05 / 0.95, pinned), each as the
    window's allocation job run here; CPU per edit, the allocation's share of it (the job's
    redistribution; the rest is the new state's totals and curve), and the pld compositions and
    lattices counted."""
    from dpplanner.compute import jobs
    from dpplanner.engine.types import CancelToken
    from dpplanner.model import files
    from dpplanner.model.examples import example_path
    from dpplanner.model.requests import CurveView

    plan = files.load_plan(example_path("synthetic-100"))
    view = CurveView("prefix", None, 100, 0)

    def edit(i: int, stats: list) -> list:
        row_i = (7 * i) % len(stats)
        stats[row_i] = stats[row_i].replace(epsilon=stats[row_i].epsilon * (1.05 if i % 2 == 0 else 0.95),
                                            held=True)
        done = jobs.allocate(jobs.AllocateRequest(plan.budget, tuple(stats), view), CancelToken(), lambda _f: None)
        return list(done.statistics)

    forget()
    with pld_counts() as counts, cpu_of(jobs, "rebalanced") as allocations:
        stats = edit(0, list(plan.statistics))      # (opening the plan: not counted)
        counts.update({name: 0 for name in counts})
        allocations.clear()
        cpus, walls = [], []
        for i in range(1, EDITS + 1):
            time.sleep(0.05)
            w0, c0 = time.perf_counter(), time.process_time()
            stats = edit(i, stats)
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
    cpu, wall = statistics.median(cpus), statistics.median(walls)
    per = per_edit(counts, EDITS)
    alloc, rest = statistics.median(allocations), statistics.median(c - a for c, a in zip(cpus, allocations))
    print(f"an edit's engine jobs, synthetic-100: {cpu * 1000:.0f} ms CPU, {wall * 1000:.0f} ms wall (median of "
          f"{EDITS}; the allocation {alloc * 1000:.0f} ms CPU, the totals and curve {rest * 1000:.0f} ms); {per}")
    target("an edit's engine jobs (allocation, totals, curve), 100 queries, one process: <= 50 ms CPU",
           f"{cpu * 1000:.0f} ms CPU, {wall * 1000:.0f} ms wall (median of {EDITS} edits; the allocation "
           f"{alloc * 1000:.0f} ms, totals and curve {rest * 1000:.0f} ms); {per}", cpu <= 0.050)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "edits":
        edits()
        return 0
    edits()
    if dp_pld is None:
        print("dp_accounting is not installed (bench extra): only our side is printed")
    plans = (("10,000 releases of 50 kinds", fifty_kinds(), 5), ("1000 distinct releases", distinct(1000), 3))
    etas = [ETAS[0] if dp_pld is None else
            as_tight_eta(lambda eta: compose_mechanisms(releases, DELTA_G, eta=eta, multiplicities=mult),
                         peer_epsilon(releases, mult)) for _label, (releases, mult), _repeat in plans]
    for (label, (releases, mult), repeat), eta in zip(plans, etas):
        compare(label, releases, mult, repeat, 10.0, "quiet", eta)
    with busy_loops(2):
        for (label, (releases, mult), repeat), eta in zip(plans, etas):
            compare(label, releases, mult, repeat, 3.0, "loaded", eta)
    row("loaded: two busy loops in other processes while these rows ran", "2 processes")
    growth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
