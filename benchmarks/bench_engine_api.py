"""Timings and oracle accuracy of the public engine API (printed, never asserted).

Run: .venv/bin/python benchmarks/bench_engine_api.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "engine"))

import composition_oracle as oracle  # noqa: E402

from rows import row as page_row, target as page_target  # noqa: E402
from timing import timed  # noqa: E402
from dpplanner.engine import allocate, compose, compose_all, curve, filter_admits, privacy_profile  # noqa: E402


def main() -> None:
    rng = np.random.default_rng(0)
    eps100 = rng.uniform(0.01, 0.5, 100).tolist()
    d100 = [1e-8] * 100
    rows = [
        ("compose_all, 100 distinct eps (binary doubles), eta=1e-3",
         lambda: compose_all(eps100, d100, 1e-5, eta=1e-3)),
        ("compose basic+advanced+filter, k=1e5 (2 rows)",
         lambda: compose_all([0.01, 0.02], [0, 0], 1e-6, multiplicities=[50_000, 50_000],
                             theorems=("basic", "advanced", "filter"))),
        ("compose optimal, k=1e5 (2 rows)",
         lambda: compose([0.01, 0.02], [0, 0], 1e-6, "optimal", multiplicities=[50_000, 50_000])),
        ("curve repeat, eps=0.01, k=1..5000 (all k, every theorem)",
         lambda: curve([0.01], [0.0], 1e-6, mode="repeat", k_max=5000)),
        ("curve prefix, 100 distinct eps, 50 points",
         lambda: curve(eps100, d100, 1e-5, mode="prefix", points=50)),
        ("curve prefix closed forms only, k=1e5",
         lambda: curve([0.001], [0.0], 1e-6, mode="repeat", k_max=100_000, theorems=("basic", "advanced", "filter"))),
        ("privacy_profile, 100 distinct eps, 200 points", lambda: privacy_profile(eps100, d100)),
        ("allocate optimal, 100 queries (10 held)",
         lambda: allocate(eps100, d100, [i < 10 for i in range(100)], [1.0] * 100, 5.0, 1e-5)),
        ("filter_admits rruv, 1e5 queries", lambda: filter_admits([0.001], [0], 1.0, 1e-6, filter="rruv",
                                                                  multiplicities=[100_000])),
    ]
    print(f"{'what':72s} {'ms':>10s}")
    for name, fn in rows:
        repeat = 1 if 'prefix, 100' in name else 3
        ms = timed(fn, repeat)
        print(f"{name:72s} {ms:10.1f}")
        page_row(name, f"{ms:.1f} ms (median of {repeat}, wall)" if repeat > 1 else f"{ms:.1f} ms (one run, wall)")

    print("\naccuracy of compose(..., 'optimal') against the mpmath oracle (random plans, 3 groups):")
    worst_gap, worst_width, n, violations = 0.0, 0.0, 0, 0
    for _ in range(40):
        g = rng.integers(1, 4)
        eps = np.round(rng.uniform(0.01, 1.0, g), 4).tolist()
        mult = rng.integers(1, 8, g).tolist()
        dg = float(10.0 ** rng.uniform(-9, -2))
        for eta in (1e-1, 1e-3):
            r = compose(eps, [0.0] * g, dg, "optimal", eta=eta, multiplicities=mult)
            exact = float(oracle.opt_comp(eps, [0.0] * g, dg, mult))
            n += 1
            violations += not (r.epsilon_lower <= exact <= r.epsilon)
            worst_gap = max(worst_gap, r.epsilon - exact)
            worst_width = max(worst_width, r.epsilon - r.epsilon_lower)
    print(f"  {n} cases: bracket violations = {violations}, max(upper - exact) = {worst_gap:.3g}, "
          f"max(upper - lower) = {worst_width:.3g}")
    page_target("optimal's bracket holds the exact value (mpmath oracle, random plans): no violation",
                f"{violations} violations in {n} cases; max(upper - exact) {worst_gap:.2g}, "
                f"max(upper - lower) {worst_width:.2g}", violations == 0)


if __name__ == "__main__":
    main()
