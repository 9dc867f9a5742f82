"""What each statistic is for the engine's noise-aware theorems: its release tag.

``statistic_mechanisms`` gives one tag of ``engine.MECHANISMS`` per statistic (see there and
engine/mechanisms/cells.py for the "*C" cells suffix); the tag follows from the statistic's noise
and how its release moves (``contributions.py``, ``noise_plan.py``).
"""

from __future__ import annotations

from typing import Sequence

from .accuracy import laplace_tag, sensitivity
from .statistic import Budget, Kind, Mechanism, Noise, Statistic
from .validation import amplification_ratio, statistic_deltas


def statistic_mechanisms(budget: Budget, stats: Sequence[Statistic]) -> tuple[str, ...]:
    """What each release is for the noise-aware theorems (engine.MECHANISMS).

    A statistic with continuous noise adds exactly that Laplace or Gaussian noise calibrated to its
    (eps_i, delta_i); one with OpenDP noise adds discrete noise on its lattice, whose shift S comes
    from OpenDP's certified sensitivity (``opendp_noise``). Either way its own privacy curve can
    be composed. A release that moves several cells (a grouped statistic, a replace-one histogram)
    says how many ("*C"; contributions.py decides how its cells are accounted). Custom statistics
    are known only by their (eps_i, delta_i); so are releases under amplification by sampling,
    whose guarantee is the amplified (eps_i, delta_i) rather than the noise's own curve, a
    statistic that selects its groups privately (its selection composed with its values by basic
    composition), and an OpenDP statistic that cannot be set up as it is (its ``problem``).
    """
    if amplification_ratio(budget) != 1.0:
        return ("eps-delta",) * len(stats)
    from .opendp_noise import hold_plan, opendp_tags
    from .opendp_sensitivity import certified

    hold_plan(len(stats))
    out: list = []
    opendp: dict = {}       # index -> (cert, gaussian, epsilon, delta): tagged together below
    for i, (s, delta) in enumerate(zip(stats, statistic_deltas(budget, stats))):
        if s.kind is Kind.CUSTOM or (s.group_by and s.select_groups):
            out.append("eps-delta")
        elif s.noise is Noise.OPENDP:
            try:
                opendp[i] = (certified(s, budget), s.mechanism is Mechanism.GAUSSIAN, s.epsilon, delta)
            except ValueError:
                out.append("eps-delta")
                continue
            out.append(None)
        elif s.mechanism is Mechanism.GAUSSIAN:
            out.append("gaussian")  # validate_state ensures its delta share is > 0; its L2 is the whole's
        else:
            out.append(laplace_tag(sensitivity(s, budget.neighbouring, budget.dataset_size,
                                               budget.contributions).moves))
    # (the engine's calibrations, remembered, decide the tags: they also check the range of epsilon)
    for i, tag in zip(opendp, opendp_tags(list(opendp.values()))):
        out[i] = tag
    return tuple(out)
