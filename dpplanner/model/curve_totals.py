"""Where the cost curve meets the totals: the window's plot, the report's and ``dpplanner-cli
curve`` show the same point at the plan's own k."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional


def meet_totals(curve, totals: dict, k: Optional[int]):
    """The plan's prefix curve with its point at the plan's own k met with the plan's totals: both
    are sound upper bounds of the same total, the curve's to the plot's eta and the totals' to the
    plan's, so the lower of the two is one too, and the point there never reads above the totals
    (nor a row's curve there above its total). ``k``: the plan's k, or None when the curve is not
    the plan's prefixes (one query repeated: nothing to meet). A curve ending elsewhere (a
    shorter view) or None is returned as it is."""
    if curve is None or k is None or not curve.ks.size or int(curve.ks[-1]) != k:
        return curve
    upper = dict(curve.upper)
    for name, total in totals.items():
        points = upper.get(name)
        if points is not None and total.applicable and total.epsilon < points[-1]:   # (NaN: False)
            points = points.copy()
            points[-1] = total.epsilon
            upper[name] = points
    return replace(curve, upper=upper)
