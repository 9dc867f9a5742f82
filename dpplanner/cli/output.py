"""What every command shares: reading PLAN, the user-error exception, and printing (JSON, tables,
numbers rounded as the window shows them)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Optional, Sequence

from dpplanner.model import display
from dpplanner.model.examples import example_paths
from dpplanner.model.files import load_plan
from dpplanner.model.implementation import implementation
from dpplanner.model.plan import Plan
from dpplanner.model.safe_text import terminal


class UserError(Exception):
    """Bad input from the user: printed on stderr, exit status 2."""


def finite(x) -> Optional[float]:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def load(spec: str) -> Plan:
    """PLAN: a path to a .dpplan file or the name of a shipped example."""
    path = Path(spec)
    if not os.path.lexists(spec):       # False also for a name the system refuses (too long)
        examples = example_paths()
        stem = spec[:-len(".dpplan")] if spec.endswith(".dpplan") else spec
        if stem in examples and path.parent == Path("."):
            path = examples[stem]
        else:
            raise UserError(f"{spec}: no such file (and not an example name; examples: "
                            f"{', '.join(examples) or 'none found'})")
    return load_plan(path)


def print_json(doc) -> None:
    print(json.dumps(doc, indent=2, allow_nan=False))


def table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    rows = [[terminal(cell) for cell in row] for row in rows]   # widths of what is printed
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [r[c].rjust(widths[c]) if c in right else r[c].ljust(widths[c]) for c in range(len(r))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def g(x, digits: int = 4) -> str:
    """A per-statistic epsilon or delta: rounded up, as the window's table shows it."""
    return "-" if x is None else display.upper(float(x), digits)


def ms(seconds: float) -> str:
    return "<1 ms" if seconds < 1e-3 else f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def size(plan: Plan) -> str:
    """"8 statistics, k = 8 queries", "1 statistic, k = 1 query", as every command says it."""
    return f"{display.counted(len(plan), 'statistic')}, k = {display.counted(plan.k, 'query', 'queries')}"


def header(plan: Plan) -> str:
    b = plan.budget
    return (f"plan: {plan.title or '(untitled)'}: {size(plan)}\n"
            f"global budget: epsilon = {display.exact(b.epsilon)}, delta = {display.exact(b.delta)}"
            + (f" (reserve {b.reserve:.0%}: spend {display.value(b.spendable_epsilon)})" if b.reserve else ""))


def statistic_implementation(plan: Plan, stat, privacy) -> Optional[dict]:
    impl = implementation(plan.budget, stat, privacy)
    return None if impl is None else impl.as_dict()


def implementations(plan: Plan) -> list[dict]:
    """What implementing each statistic needs (noise, scale, sensitivities, delta_i, rho_i)."""
    return [{"name": s.name, "kind": s.kind.value, "implementation": statistic_implementation(plan, s, p)}
            for s, p in zip(plan.statistics, plan.privacy_all())]

