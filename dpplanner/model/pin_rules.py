"""What the pinned statistics may spend before a redistribution, and how a refusal names them.
Part of ``validation``, the one home of the plan's rules: import these names from there.
"""

from __future__ import annotations

from typing import Sequence

from .field_rules import PlanError
from .statistic import Budget, Statistic


def check_holds(budget: Budget, stats: Sequence[Statistic]) -> None:
    """Before redistributing: raise PlanError if no statistic is free, or if the pinned ones
    (``held``) alone use up the spendable budget under the plan's theorem."""
    held = [i for i, s in enumerate(stats) if s.held]
    if not held:
        return
    if len(held) == len(stats):
        raise PlanError("every statistic is pinned: at least one must stay free for redistribution; "
                        "unpin one or switch automatic redistribution off", held_indices=held)
    from dpplanner import engine
    from .display import upper

    from .releases import statistic_mechanisms
    from .validation import statistic_deltas

    deltas = statistic_deltas(budget, stats)
    mechanisms = statistic_mechanisms(budget, stats)
    try:
        used = engine.compose([stats[i].epsilon for i in held], [deltas[i] for i in held],
                              budget.delta, theorem=budget.theorem, eta=budget.eta,
                              multiplicities=[stats[i].repetitions for i in held],
                              mechanisms=[mechanisms[i] for i in held]).epsilon
    except ValueError:
        # theorem not applicable to the pinned subset (kov): basic composition is always sound
        used = sum(stats[i].epsilon * stats[i].repetitions for i in held)
    target = budget.spendable_epsilon
    if not used < target:
        raise PlanError(f"the pinned statistics alone need ε {upper(used)}, which leaves nothing "
                        f"of the spendable budget ε {target:g} for the free ones; "
                        f"{release_clause(stats, held)}", held_indices=held)


#: How many pinned statistics a refusal names: those that spend the most (a plan edited for long
#: may pin dozens, and a sentence naming them all would push the table off screen).
NAMED_PINS = 5


def release_clause(stats: Sequence[Statistic], held: Sequence[int], other: bool = False) -> str:
    """"unpin or lower some of: 1 ('a'), 3 ('b')" (``other``: of the other pinned statistics,
    when the one being edited is not among them); beyond NAMED_PINS, the ones that spend the most
    ε (ε_i times repetitions), in plan order, "and N more"."""
    named = sorted(sorted(held, key=lambda i: -stats[i].epsilon * stats[i].repetitions)[:NAMED_PINS])
    names = ", ".join(f"{i + 1} ({stats[i].name!r})" for i in named)
    if len(held) > len(named):
        names += f" and {len(held) - len(named)} more"
    return f"unpin or lower some of the other pinned statistics: {names}" if other else \
        f"unpin or lower some of: {names}"
