"""Timings of the plan model on the shipped examples (printed, never asserted).

Run: .venv/bin/python benchmarks/bench_model.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rows import row as page_row  # noqa: E402
from timing import timed  # noqa: E402
from dpplanner.model.examples import example_path  # noqa: E402
from dpplanner.model.files import dumps_plan, load_plan, save_plan  # noqa: E402
from dpplanner.model.redistribution import rebalance  # noqa: E402
from dpplanner.model.report import render_report  # noqa: E402


def bench(name: str) -> dict[str, float]:
    path = example_path(name)
    plan = load_plan(path)
    row = {"load": timed(lambda: load_plan(path)),
           "edit one row": timed(lambda: plan.update_statistic(0, plan[0].replace(weight=1.5))),
           "accuracy of all rows": timed(plan.privacy_all),
           "rebalance (its theorem)": timed(lambda: rebalance(plan), repeat=1),
           "serialise": timed(lambda: dumps_plan(plan))}
    with tempfile.TemporaryDirectory() as tmp:
        row["atomic save"] = timed(lambda: save_plan(plan, Path(tmp) / "p.dpplan"))
    row["HTML report"] = timed(lambda: render_report(plan), repeat=1)
    return row


def main() -> None:
    print("model benchmarks (median ms; rebalance and report: one run)")
    for name in ("psi-survey", "census", "synthetic-100", "synthetic-1000"):
        plan = load_plan(example_path(name))
        print(f"\n{name}: {len(plan)} statistics, k = {plan.k}")
        figures = bench(name)
        for what, ms in figures.items():
            print(f"  {what:<22} {ms:10.1f} ms")
        page_row(f"{name} ({len(plan)} statistics, k = {plan.k})",
                 ", ".join(f"{what} {ms:.1f} ms" for what, ms in figures.items()))


if __name__ == "__main__":
    main()
