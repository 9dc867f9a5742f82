"""One evaluation request's plan as the engine's inputs, validated once (compute/jobs.py). The
engine process and its helper each compute some rows' totals and then some rows' curves, in parts
that split.py hands out as they come: every part of a request composes from the same inputs, so
what the theorems share (the plan's validation, the running sums, the optimal composition and
curve, the cheaper theorems' bounds) is computed once per request in a process, not once per part
(~1.4 ms of the helper's ~10 on the 100-query example). The engine process builds them before it
sends the helper its half (it needs them for its own rows) and sends them with it: the helper does
not validate the plan or sum its prefixes again (~0.9 ms there). The numbers are those of
``engine.compose_all`` and ``engine.curve`` of the same request.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Optional


class Prepared:
    """``request``'s inputs for ``compose_rows`` and ``curve_rows``, each built at its first use
    (or received: ``shipped()`` of another process's, for this process's ``cancel``).
    ``optimal_curve``: the curve's optimal row computed elsewhere (engine.curve's argument)."""

    def __init__(self, request, cancel, optimal_curve: Optional[Callable[[], Any]] = None,
                 received: tuple = (None, None)) -> None:
        self.request, self.cancel, self.optimal_curve = request, cancel, None
        self._compose, self._curve = received
        for inputs in received:
            if inputs is not None:
                inputs.cancel = cancel
        self.take_optimal_curve(optimal_curve)

    def take_optimal_curve(self, optimal_curve: Optional[Callable[[], Any]]) -> None:
        """The curve's optimal row is to come from ``optimal_curve`` (engine.curve's argument)."""
        self.optimal_curve = optimal_curve
        if self._curve is not None:
            self._curve.optimal_source = optimal_curve

    def compose_inputs(self):
        if self._compose is None:
            from dpplanner.engine.compose import compose_inputs

            r = self.request
            self._compose = compose_inputs(list(r.epsilons), list(r.deltas), r.delta_g, r.eta,
                                           list(r.multiplicities), mechanisms=mechanisms(r),
                                           cancel=self.cancel)
        return self._compose

    def curve_inputs(self):
        """Raises what engine.curve raises on a curve it refuses."""
        if self._curve is None:
            from dpplanner.engine.curve import curve_inputs

            r = self.request
            eps, dels, mech = list(r.epsilons), list(r.deltas), mechanisms(r)
            if r.curve_mode == "repeat":
                i = r.repeat_index
                self._curve = curve_inputs([eps[i]], [dels[i]], r.delta_g, mode="repeat",
                                           k_max=r.curve_k_max or max(r.k, 1), mechanisms=[mech[i]],
                                           points=r.curve_points, lower=False, cancel=self.cancel)
            else:
                self._curve = curve_inputs(eps, dels, r.delta_g, mode="prefix", k_max=r.curve_k_max,
                                           points=r.curve_points, multiplicities=list(r.multiplicities),
                                           mechanisms=mech, lower=False, cancel=self.cancel,
                                           optimal_curve=self.optimal_curve, total_eta=r.eta,
                                           validated=self.compose_inputs().plan)
        return self._curve

    def shipped(self) -> tuple:
        """Both inputs, built now if they can be, for another process (``received`` there):
        without this process's cancel token, progress or optimal source. One that the plan
        refuses is left to the receiver, which refuses it in its own words."""
        out = []
        for build in (self.compose_inputs, self.curve_inputs):
            try:
                out.append(_bare(build()))
            except ValueError:
                out.append(None)
        return tuple(out)


def _bare(inputs):
    out = copy.copy(inputs)     # (with what it has cached: a ComposeInputs' sums)
    out.cancel = out.progress = None
    if hasattr(out, "optimal_source"):
        out.optimal_source, out._shared = None, {}
    return out


def mechanisms(request) -> list:
    return list(request.mechanisms) or ["eps-delta"] * len(request.epsilons)
