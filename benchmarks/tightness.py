"""Equal tightness: at which eta our certified upper end is at least as tight as a peer's figure.

A peer's pessimistic PLD at d = 1e-4 can come out a few 1e-4 below our upper end at eta = 1e-3
(our bracket is within eta of the exact value, theirs usually closer to it and not certified):
comparing speeds "at equal or better tightness" then means asking us for a finer eta, as a user
who wants that tightness would. Every eta is tried cold (the engine's memories emptied first).
"""

from __future__ import annotations

#: The etas tried, coarsest first: a finer eta climbs the same lattices further, never looser.
ETAS = (1e-3, 3e-4, 1e-4, 3e-5)


def as_tight_eta(compose, peer_upper: float) -> float:
    """The coarsest eta in ETAS at which ``compose(eta).epsilon <= peer_upper`` (the finest if
    none is: the row then says the target is not met)."""
    from dpplanner.engine.memo import forget

    for eta in ETAS:
        forget()
        if compose(eta).epsilon <= peer_upper:
            return eta
    return ETAS[-1]
