"""Grouped statistics: a plan of tables by group against the same plan without groups

Run: .venv/bin/python benchmarks/bench_groups.py

Twenty statistics, each by a grouping of 50 groups (1000 cells), against the same twenty
statistics ungrouped: one edit (a weight typed: validation, then the redistribution under the
plan's theorem, pld, which composes and allocates) and the accuracy of every row, wall and CPU
time of cold runs (the engine's memories emptied), medians of three. Target (issue 26): an edit
of the grouped plan within 100 ms and no slower than the ungrouped one (within 10 %).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rows import target  # noqa: E402
from timing import wall_and_cpu  # noqa: E402
from dpplanner.model import Budget, Kind, Mechanism, Plan, Statistic  # noqa: E402
from dpplanner.model.redistribution import rebalance  # noqa: E402
from dpplanner.model.statistic import Noise  # noqa: E402

GROUPS = 50


def plans() -> tuple[Plan, Plan]:
    """(grouped, ungrouped): counts, sums, means and histograms, Laplace and Gaussian; half the
    groupings a property of the individual (L0 = 1), the others L0 = 3 of c = 4 rows."""
    b = Budget(epsilon=1.0, delta=1e-6, dataset_size=100_000, unit="household", contributions=4)
    stats = []
    for i in range(20):
        kind = (Kind.COUNT, Kind.SUM, Kind.MEAN, Kind.HISTOGRAM)[i % 4]
        extra = {Kind.SUM: dict(lower=0, upper=1000), Kind.MEAN: dict(lower=0, upper=1000, n=500),
                 Kind.HISTOGRAM: dict(bins=5)}.get(kind, {})
        stats.append(Statistic(f"s{i}", f"v{i}", kind, Mechanism.GAUSSIAN if i % 3 == 0 else Mechanism.LAPLACE,
                               noise=Noise.CONTINUOUS, weight=1 + i % 3, **extra))
    grouped = [s.replace(group_by="region", groups=GROUPS, one_group_each=i % 2 == 0,
                         max_groups=None if i % 2 == 0 else 3) for i, s in enumerate(stats)]
    return Plan(b, grouped), Plan(b, stats)


def edit_cost(plan: Plan):
    """(wall s, CPU s) of typing a weight and redistributing, as the window's edit does."""
    state = {"w": 1.0}

    def edit():
        state["w"] = 3.0 - state["w"]           # alternate 1 <-> 2: every run a real change
        plan.update_statistic(1, plan[1].replace(weight=state["w"]))
        rebalance(plan)

    _, wall, cpu = wall_and_cpu(edit, repeat=3)
    return wall, cpu


def main() -> None:
    grouped, plain = plans()
    rebalance(grouped)
    rebalance(plain)
    g_wall, g_cpu = edit_cost(grouped)
    p_wall, p_cpu = edit_cost(plain)
    _, a_wall, a_cpu = wall_and_cpu(grouped.privacy_all, repeat=3)
    print(f"20 statistics x {GROUPS} groups: edit + redistribute {g_wall * 1e3:.1f} ms wall, "
          f"{g_cpu * 1e3:.1f} ms CPU; accuracy of every row {a_wall * 1e3:.1f} ms")
    print(f"20 statistics, not grouped: edit + redistribute {p_wall * 1e3:.1f} ms wall, {p_cpu * 1e3:.1f} ms CPU")
    met = g_cpu <= 0.1 and g_cpu <= 1.1 * p_cpu
    target(f"20 statistics x {GROUPS} groups (1000 cells): an edit (validate, compose, redistribute "
           "under pld) <= 100 ms and no slower than without groups",
           f"{g_cpu * 1e3:.0f} ms CPU ({g_wall * 1e3:.0f} ms wall), median of 3 cold runs", met,
           peer=f"the same 20 statistics ungrouped: {p_cpu * 1e3:.0f} ms CPU ({p_wall * 1e3:.0f} ms wall)")


if __name__ == "__main__":
    main()
