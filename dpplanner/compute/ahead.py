"""An allocation's evaluation begun before the allocation ends (compute/jobs.py, ``allocate``).

engine.allocate calls ``found`` with the epsilons its search found, before it composes their whole
total to verify them (~3-8 ms): the evaluation request of that state is built then and the engine
process's helper given its half at once, while this process verifies. The verified epsilons are
those unless the verification moved the scale: then what was sent is dropped (abandoned in the
helper, not waited for) and the evaluation starts afresh. Either way the numbers are those of the
state the allocation answers.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from dpplanner.model.engine_inputs import with_epsilons
from dpplanner.model.statistic import Statistic


class Ahead:
    """``build(statistics)``: a state's evaluation request; ``send(request)``: its half handed to
    the helper (an object whose ``collect.drop()`` abandons it), or None where it was not."""

    def __init__(self, statistics: Sequence[Statistic], build: Callable[[tuple], Any],
                 send: Callable[[Any], Any]) -> None:
        self._stats, self._build, self._send = statistics, build, send
        self._epsilons: Optional[tuple[float, ...]] = None     # of the state found
        self._built: Any = None
        self.sent: Any = None

    def found(self, epsilons) -> None:
        self.drop()
        try:
            statistics = with_epsilons(self._stats, list(epsilons), [not s.held for s in self._stats])
            built = self._build(statistics)
        except ValueError:      # (PlanError: the allocation or the evaluation says so, in its own words)
            return
        self._epsilons, self._built = tuple(s.epsilon for s in statistics), built
        self.sent = self._send(built)

    def evaluation(self, statistics: Sequence[Statistic]) -> Any:
        """The evaluation request of ``statistics``: the one built ahead if it is theirs (``sent``
        stays its half), else a new one (and what was sent is dropped)."""
        if self._epsilons is not None and self._epsilons == tuple(s.epsilon for s in statistics):
            return self._built
        self.drop()
        return self._build(tuple(statistics))

    def drop(self) -> None:
        """A half sent and not collected is abandoned, not waited for (after a collection: nothing)."""
        if self.sent is not None:
            self.sent.collect.drop()
        self.sent = self._epsilons = self._built = None
