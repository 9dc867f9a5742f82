"""bench_optimal's cost-vs-k curve rows: the optimal core's prefix curve of the k=1000 plan, curve()
of every k under every theorem, what the window recomputes per edit (every theorem plus a 100-point
curve), and `dpplanner-cli curve` of a statistic repeated 77,000 times. Each row is reported
through the bench's ``target(what, measured, ok, peer=...)``."""

from __future__ import annotations

import time

import numpy as np

from timing import wall_and_cpu

#: The census curve runs in a child process stopped after this long (today it takes minutes).
CENSUS_CAP_SECONDS = 60.0


def run(target, eps_k1000, deltas_k1000) -> None:
    """Every curve row, in the bench's order (``*_k1000``: bench_optimal's k=1000 plan)."""
    bench_curve(target, eps_k1000, deltas_k1000)
    bench_curve_every_k(target)
    bench_window_plan(target)
    bench_census_repeated(target)


def bench_curve(target, eps, deltas):
    from dpplanner.engine.optimal import optimal_prefix_curve
    from dpplanner.engine.delta import delta_bar_from_log, log_survival_prefix

    ks = np.arange(1, 1001)
    dbs = delta_bar_from_log(1e-5, log_survival_prefix(deltas))
    (up, lo), sec, _ = wall_and_cpu(lambda: optimal_prefix_curve(eps, dbs, ks, 1e-2), 1)
    w = float(np.max(up - lo))
    print(f"\nprefix curve of the k=1000 plan, all k = 1..1000 (core, width 1e-2): "
          f"max width {w:.2e}, at k=1000 [{lo[-1]:.6f}, {up[-1]:.6f}], time {sec:.2f} s")
    target("curve of all prefixes of the k=1000 plan: width <= 1e-2 at every k, <= 2 s",
           f"max width {w:.1e} in {sec:.2f} s", w <= 1e-2 and sec <= 2.0)


def bench_curve_every_k(target):
    """curve() of every k = 1..5000 under every theorem (eps ~ U[0.001, 0.05], delta_g = 1e-6)."""
    from dpplanner.engine import curve

    eps = np.random.default_rng(20261106).uniform(0.001, 0.05, 5000)
    c, wall, cpu = wall_and_cpu(lambda: curve(list(eps), [0.0] * eps.size, 1e-6, mode="prefix"), 1)
    print(f"\ncurve of every k = 1..5000, every theorem: {len(c.ks)} points in {wall:.2f} s wall / "
          f"{cpu:.2f} s CPU; at k=5000 optimal {c.upper['optimal'][-1]:.6f}")
    target("curve of every k = 1..5000, every theorem <= 5 s", f"{wall:.2f} s wall / {cpu:.2f} s CPU", wall <= 5.0)


def bench_window_plan(target):
    """What the window recomputes per edit: every theorem plus a 100-point curve, 100 queries
    (cold: an edit is a new plan, so no memory of an earlier call helps)."""
    from dpplanner.engine import compose_all, curve

    rng = np.random.default_rng(20261104)
    for label, eps in (("decimals (3 d.p.)", np.round(rng.uniform(0.01, 0.2, 100), 3)),
                       ("random doubles", rng.uniform(0.01, 0.2, 100))):
        deltas = [1e-9] * 100

        def edit():
            compose_all(list(eps), deltas, 1e-6, eta=1e-3)
            curve(list(eps), deltas, 1e-6, mode="prefix", points=100)

        _, wall, cpu = wall_and_cpu(edit, 5)
        print(f"\n100-query plan, {label}: compose_all + prefix curve (100 points): {wall * 1e3:.0f} ms wall / "
              f"{cpu * 1e3:.0f} ms CPU (median of 5)")
        target(f"100-query plan ({label}), all theorems + curve with 100 points <= 50 ms",
               f"{wall * 1e3:.0f} ms wall / {cpu * 1e3:.0f} ms CPU", wall <= 0.05)


def bench_census_repeated(target):
    """`dpplanner-cli curve --points 5` on the census example with its first statistic repeated
    77,000 times (redistribution off), in a child process stopped after CENSUS_CAP_SECONDS."""
    import json
    import resource
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    doc = json.loads((root / "resources" / "examples" / "census.dpplan").read_text())
    doc["budget"]["redistribute"] = False
    doc["statistics"][0]["repetitions"] = 77_000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "census77k.dpplan"
        path.write_text(json.dumps(doc))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        try:
            subprocess.run([sys.executable, "-m", "dpplanner.cli", "curve", str(path), "--points", "5"],
                           cwd=str(root), capture_output=True, text=True, check=True, timeout=CENSUS_CAP_SECONDS)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
            measured, ok = f"{wall:.1f} s wall / {cpu:.1f} s CPU (a fresh process, start-up included)", wall <= 10.0
        except subprocess.TimeoutExpired:
            measured, ok = f"not finished within the bench's cap of {CENSUS_CAP_SECONDS:.0f} s", False
    print(f"\ncensus example, statistic 1 repeated 77,000 times, `curve --points 5`: {measured}")
    target("census example's one statistic x 77,000, `dpplanner-cli curve --points 5` <= 10 s", measured, ok)
