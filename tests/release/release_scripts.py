"""Helpers of the release-script tests: plans with every kind, synthetic data within a plan's
bounds, running an exported script in its own process and loading it as a module."""

from __future__ import annotations

import csv
import importlib.util
import random
import re
import subprocess
import sys
from pathlib import Path

from dpplanner.model import Budget, Kind, Mechanism, Neighbouring, Plan, Statistic
from dpplanner.model.examples import example_path
from dpplanner.model.files import load_plan
from dpplanner.model.statistic import Noise
from dpplanner.model.redistribution import rebalance
from dpplanner.release import render_script
from dpplanner.release.export import script_plan

L, G = Mechanism.LAPLACE, Mechanism.GAUSSIAN


def every_kind_plan(neighbouring: Neighbouring = Neighbouring.REPLACE_ONE) -> Plan:
    """One statistic of every kind, Laplace and Gaussian, whole and real values."""
    b = Budget(epsilon=1.0, delta=1e-6, dataset_size=400, neighbouring=neighbouring)
    stats = [
        Statistic("people", "", Kind.COUNT, L),
        Statistic("owners", "owner", Kind.COUNT, G),
        Statistic("total rent", "rent", Kind.SUM, L, lower=0, upper=3000, integer=True),
        Statistic("total hours", "hours", Kind.SUM, G, lower=-10.5, upper=60.25),
        Statistic("mean age", "age", Kind.MEAN, L, lower=18, upper=90),
        Statistic("mean children", "children", Kind.MEAN, G, lower=0, upper=8, integer=True),
        Statistic("share employed", "employed", Kind.PROPORTION, L, n=400),
        Statistic("region", "region", Kind.HISTOGRAM, L, bins=5),
        Statistic("tenure", "tenure", Kind.HISTOGRAM, G, bins=3),
        Statistic("median income", "income", Kind.QUANTILE, L, lower=0, upper=1000, granularity=100),
        Statistic("income cdf", "income2", Kind.QUANTILE, G, lower=0, upper=50, granularity=10),
    ]
    plan = Plan(b, stats, title="Every kind")
    rebalance(plan)
    return plan


def columns_for(block: dict) -> dict:
    """One column per statistic (named c0, c1, ...), so that no two statistics share values."""
    return {s["name"]: f"c{i}" for i, s in enumerate(block["statistics"])}


def write_data(block: dict, path: Path, rows: int, seed: int) -> dict:
    """A CSV drawn within the plan's bounds; returns the COLUMNS mapping it needs."""
    rng = random.Random(seed)
    columns = columns_for(block)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(list(columns.values()))
        for _ in range(rows):
            writer.writerow([_value(s, rng) for s in block["statistics"]])
    return columns


def _value(stat: dict, rng: random.Random) -> str:
    kind = stat["kind"]
    if kind in ("count", "proportion"):
        return rng.choice(["1", "0", "yes", "no", ""])
    if kind == "histogram":
        return str(rng.randrange(stat["cells"]))
    lo, hi = stat["bounds"]
    if rng.random() < 0.05:
        return rng.choice(["", "n/a"])            # missing values count as the plan says
    if stat["integer"]:
        return str(rng.randint(int(lo), int(hi)))
    return repr(rng.uniform(lo, hi))


def run(script: Path, data: Path, columns: dict, out: Path, *extra: str) -> subprocess.CompletedProcess:
    args = [sys.executable, str(script), str(data), "--out", str(out)]
    for name, column in columns.items():
        args += ["--column", f"{name}={column}"]
    return subprocess.run(args + list(extra), capture_output=True, text=True, timeout=600)


def export(plan: Plan, path: Path) -> dict:
    path.write_text(render_script(plan), encoding="utf-8")
    return script_plan(plan)


def load_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"release_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fill_customs(path: Path) -> None:
    """Write every custom statistic's block as a count with Laplace noise at its epsilon."""
    text = path.read_text(encoding="utf-8")
    filled = text.replace("    return None\n", (
        "    return dp.t.make_count(*space) >> dp.m.then_laplace(scale=1000.0)\n"))
    path.write_text(filled, encoding="utf-8")


def opendp_example(name: str):
    """A shipped example: its statistics have OpenDP noise (the custom ones aside)."""
    plan = load_plan(example_path(name))
    assert all(s.noise is Noise.OPENDP for s in plan if s.kind.value != "custom")
    return plan


def redigest(text: str) -> str:
    """A script's text with PLAN_DIGEST recomputed over its (edited) PLAN block, so that only the
    script's privacy checks can catch the edit."""
    from dpplanner.release.check import _plan_block
    from dpplanner.release.export import plan_digest
    plan, _ = _plan_block(text)
    return re.sub(r"PLAN_DIGEST = '[0-9a-f]+'", f"PLAN_DIGEST = {plan_digest(plan)!r}", text)
