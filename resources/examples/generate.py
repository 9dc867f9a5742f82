"""Regenerate the example plans in this folder: python resources/examples/generate.py

The budgets are redistributed with the engine under each plan's theorem (pld), so the files
open already balanced. Every statistic but the custom ones has the noise OpenDP adds (the
default for new plans); ``--continuous`` writes them with the idealised continuous noise instead,
for comparisons (python generate.py --continuous). Name examples to write only those
(python generate.py census-tables).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from dpplanner.model import Budget, Kind, Mechanism, Neighbouring, Plan, Statistic  # noqa: E402
from dpplanner.model.statistic import Noise  # noqa: E402
from dpplanner.model.files import save_plan  # noqa: E402
from dpplanner.model.redistribution import rebalance  # noqa: E402

HERE = Path(__file__).resolve().parent
L, G = Mechanism.LAPLACE, Mechanism.GAUSSIAN


#: Set by --continuous: write the statistics with continuous noise instead of OpenDP's.
CONTINUOUS = "--continuous" in sys.argv
#: The examples to write (all when none is named: python generate.py census-tables).
NAMES = [a for a in sys.argv[1:] if not a.startswith("--")]


def balanced(plan: Plan) -> Plan:
    noise = Noise.CONTINUOUS if CONTINUOUS else Noise.OPENDP
    plan.replace_all([s.replace(noise=noise) if s.kind is not Kind.CUSTOM else s for s in plan.statistics])
    rebalance(plan)
    return plan


def psi_survey() -> Plan:
    b = Budget(epsilon=1.0, delta=1e-6, dataset_size=2500, neighbouring=Neighbouring.REPLACE_ONE)
    s = [
        Statistic("respondents", "", Kind.COUNT, L, description="number of respondents"),
        Statistic("mean age", "age", Kind.MEAN, L, lower=18, upper=100),
        Statistic("mean income", "income", Kind.MEAN, L, lower=0, upper=250_000, weight=2.0),
        Statistic("age histogram", "age", Kind.HISTOGRAM, L, bins=9),
        Statistic("share employed", "employed", Kind.PROPORTION, L),
        Statistic("median income", "income", Kind.QUANTILE, L, lower=0, upper=250_000,
                  granularity=5000),
        Statistic("education", "education", Kind.HISTOGRAM, G, bins=6),
        Statistic("mean household size", "household", Kind.MEAN, G, lower=1, upper=12),
    ]
    return balanced(Plan(b, s, title="PSI-style survey release",
                         description="A small release from a 2,500-person survey, as in the PSI tool."))


def census() -> Plan:
    b = Budget(epsilon=0.25, delta=1e-6, dataset_size=100_000, delta_split=0.5,
               neighbouring=Neighbouring.ADD_REMOVE)
    stats = []
    regions = ["north", "south", "east", "west", "centre"]
    for r in regions:
        stats.append(Statistic(f"population {r}", "region", Kind.COUNT, L))
        stats.append(Statistic(f"mean income {r}", "income", Kind.MEAN, G, lower=0, upper=200_000,
                               n=15_000))
        stats.append(Statistic(f"age pyramid {r}", "age", Kind.HISTOGRAM, L, bins=20))
        stats.append(Statistic(f"median rent {r}", "rent", Kind.QUANTILE, L, lower=0, upper=5000,
                               granularity=100))
        stats.append(Statistic(f"household size {r}", "household", Kind.HISTOGRAM, G, bins=8))
        stats.append(Statistic(f"share owners {r}", "tenure", Kind.PROPORTION, L, n=15_000))
    for v, lo, hi in (("income", 0, 200_000), ("age", 0, 110), ("rent", 0, 5000),
                      ("commute minutes", 0, 180)):
        stats.append(Statistic(f"national mean {v}", v, Kind.MEAN, G, lower=lo, upper=hi, weight=2.0))
        stats.append(Statistic(f"national total {v}", v, Kind.SUM, L, lower=lo, upper=hi))
        stats.append(Statistic(f"national deciles {v}", v, Kind.QUANTILE, L, lower=lo, upper=hi,
                               granularity=(hi - lo) / 100))
    for v, bins in (("occupation", 25), ("industry", 21), ("education", 9), ("marital status", 6),
                    ("country of birth", 40), ("language at home", 30), ("tenure", 4),
                    ("dwelling type", 7), ("vehicles", 5), ("internet access", 3)):
        stats.append(Statistic(f"{v} categories", v, Kind.HISTOGRAM, L, bins=bins))
    stats.append(Statistic("total households", "household", Kind.COUNT, L, held=True, epsilon=0.005))
    stats.append(Statistic("total persons", "all", Kind.COUNT, L, weight=0.5))
    stats.append(Statistic("pre-released headline", "", Kind.CUSTOM, L, epsilon=0.01, delta=1e-8,
                           held=True, description="already published; enters as custom (eps, delta)"))
    stats.append(Statistic("share with disability", "disability", Kind.PROPORTION, G))
    stats.append(Statistic("mean persons per dwelling", "household", Kind.MEAN, L, lower=1,
                           upper=15))
    stats.append(Statistic("monthly counts", "all", Kind.COUNT, L, repetitions=2, weight=0.5))
    return balanced(Plan(b, stats, title="Census-style release",
                         description="About 60 statistics over several variables from a 100,000-"
                                     "record census extract (risk-of-material-harm tier)."))


#: The five regions of the census-style tables (public keys: every region is published).
REGIONS = "north, south, east, west, centre"
#: Age groups x sexes x regions of the population table (9 age groups of ten years, the last 80+).
AGE_SEX_REGION = 9 * 2 * 5


def census_tables(grouped: bool = True, contributions: int = 4) -> Plan:
    """Census-style tables by region from households of up to 4 persons (the unit of privacy is the
    household). ``grouped=False`` enters every table as one statistic per group and
    ``contributions`` sets c: the variants the README and the groups guide compare it with
    (tools/groups_comparison.py)."""
    b = Budget(epsilon=0.25, delta=1e-6, dataset_size=100_000, delta_split=0.5,
               neighbouring=Neighbouring.ADD_REMOVE, unit="household", contributions=contributions,
               truncate=True)
    by_region = dict(group_by="region", group_keys=REGIONS, one_group_each=True)
    tables = [
        Statistic("population by age group × sex × region", "persons", Kind.COUNT, L,
                  group_by="age group × sex × region", groups=AGE_SEX_REGION,
                  description="persons in each of 9 age groups × 2 sexes × 5 regions"),
        Statistic("mean income by region", "income", Kind.MEAN, G, lower=0, upper=200_000,
                  n=15_000, weight=2.0, **by_region,
                  description="the smallest region has 15,000 persons"),
        Statistic("median rent by region", "rent", Kind.QUANTILE, L, lower=0, upper=5000,
                  granularity=100, **by_region),
        Statistic("share owners by region", "tenure", Kind.PROPORTION, L, n=15_000, **by_region),
    ]
    national = [
        Statistic("total persons", "persons", Kind.COUNT, L, weight=0.5),
        Statistic("national mean income", "income", Kind.MEAN, G, lower=0, upper=200_000),
        Statistic("occupation categories", "occupation", Kind.HISTOGRAM, L, bins=25),
    ]
    stats = tables if grouped else [cell for s in tables for cell in _separately(s)]
    return balanced(Plan(b, stats + national, title="Census tables by region (households)",
                         description="Tables by region from a 100,000-person census extract in "
                                     "households of up to 4 persons (risk-of-material-harm tier)."))


def _separately(stat: Statistic) -> list[Statistic]:
    """A grouped statistic entered as one ungrouped statistic per group (as before grouping)."""
    keys = [k.strip() for k in stat.group_keys.split(",")] if stat.group_keys else \
        [str(i + 1) for i in range(stat.groups)]
    plain = dict(group_by="", groups=None, group_keys="", one_group_each=False, description="")
    return [stat.replace(name=f"{stat.name.split(' by ')[0]} {key}", **plain) for key in keys]


def synthetic(n_queries: int, seed: int) -> Plan:
    rng = random.Random(seed)
    b = Budget(epsilon=1.0, delta=1e-7, dataset_size=1_000_000, eta=1e-2)
    stats = []
    kinds = [Kind.COUNT, Kind.MEAN, Kind.HISTOGRAM, Kind.PROPORTION]
    i = 0
    while sum(s.repetitions for s in stats) < n_queries:
        kind = kinds[i % len(kinds)]
        mech = G if i % 5 == 0 else L
        reps = 1 if i % 7 else 3
        reps = min(reps, n_queries - sum(s.repetitions for s in stats))
        extra = {"lower": 0, "upper": 1000} if kind is Kind.MEAN else {}
        if kind is Kind.HISTOGRAM:
            extra = {"bins": rng.randint(2, 20)}
        stats.append(Statistic(f"query {i + 1}", f"v{i % 17}", kind, mech, weight=rng.choice(
            [0.5, 1.0, 1.0, 2.0]), repetitions=reps, **extra))
        i += 1
    return balanced(Plan(b, stats, title=f"Synthetic plan with {n_queries} queries",
                         description="Generated for performance checks (resources/examples/"
                                     "generate.py, fixed seed)."))


if __name__ == "__main__":
    for name, make in (("psi-survey", psi_survey), ("census", census), ("census-tables", census_tables),
                       ("synthetic-100", lambda: synthetic(100, 100)),
                       ("synthetic-1000", lambda: synthetic(1000, 1000))):
        if NAMES and name not in NAMES:
            continue
        plan = make()
        save_plan(plan, HERE / f"{name}.dpplan")
        print(f"{name}: {len(plan)} statistics, k = {plan.k}")
