"""What the plan's spent total relies on, in one sentence, and what a generic theorem would say.

A noise-aware total (``pld``) is smaller than any generic one because it assumes more: that each
statistic adds exactly the noise dpplanner calibrates. The window's budget bar, the report and the
command line all say so in the words made here (the assumption itself comes from the theorem
registry), so that a change of what a theorem assumes is made in one place.
"""

from __future__ import annotations

import math
from typing import Mapping, Optional

from dpplanner import engine
from dpplanner.engine.types import Composition

from . import display


def best_generic(totals: Mapping[str, Composition]) -> Optional[str]:
    """The theorem with the smallest valid total among those that hold for any mechanism with
    the statistics' (ε_i, δ_i); None when none of them gave one."""
    generic = {name: c for name, c in totals.items() if engine.theorem(name).generic
               and c.applicable and not math.isnan(c.epsilon)}
    return engine.best(generic) if generic else None


def total_note(theorem: str, totals: Mapping[str, Composition], spendable_epsilon: float) -> str:
    """"The noise-aware (PLD) total holds only if …; for any other mechanism with the same ε_i and
    δ_i the plan spends ε 1.1343 (113.5% of 1) under optimal composition." Generic theorems
    need no comparison: their sentence says what they hold for."""
    t = engine.theorem(theorem)
    text = f"The {t.label} total {t.assumption}."
    if t.generic:
        return text
    name = best_generic(totals)
    if name is None:
        return f"{text} No generic theorem gave a total to compare with."
    comp = totals[name]
    if comp.epsilon == math.inf:
        return f"{text} For any other mechanism with the same ε_i and δ_i no generic theorem can " \
               "certify the plan."
    spent = (f"ε {display.upper(comp.epsilon)} ({display.percent_of(comp.epsilon, spendable_epsilon)} "
             f"of {display.value(spendable_epsilon, 4)})")
    return (f"{text} For any other mechanism with the same ε_i and δ_i the plan spends {spent} under "
            f"{engine.theorem(name).label} composition.")
