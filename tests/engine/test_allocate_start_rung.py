"""An allocation under pld starts its search on the rung of the ladder its forward check's bracket
is likely to stop on (ladder.likely_rung, read from the releases alone): where the first lattice's
lower end leaves more than eta, no upper end is composed on the first lattice; a wrong guess costs
a search on the rung the bracket stopped on, never the budget."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from dpplanner.engine import allocate
from dpplanner.engine.memo import forget
from dpplanner.engine.scale_search import WASTE

#: Forty discrete Laplace releases of distinct epsilons (each a kind of its own, off the lattice, as
#: statistics pinned one by one are), the last thirty pinned.
N = 40
EPS = (0.03 * (1 + np.arange(N) / 97.0)).tolist()
HELD = [i >= 10 for i in range(N)]


def _allocated(monkeypatch, eta: float, guess=None):
    """The allocation of the plan at eta, and the rung of each upper end alone its search composed
    and the number of whole totals composed (the forward checks); ``guess``: likely_rung's answer
    instead of its own."""
    compose = importlib.import_module("dpplanner.engine.compose")
    theorems = importlib.import_module("dpplanner.engine.mechanisms.theorems")
    if guess is not None:
        monkeypatch.setattr(theorems, "likely_rung", lambda r, eta: guess)
    rungs, whole, real = [], [], compose.compose_one

    def counted(name, inputs):
        (rungs.append(inputs.upper_rung) if inputs.upper_only else whole.append(1))
        return real(name, inputs)
    monkeypatch.setattr(compose, "compose_one", counted)
    monkeypatch.setattr(importlib.import_module("dpplanner.engine.allocate"), "compose_one", counted)
    forget()
    result = allocate(EPS, [0.0] * N, HELD, [1.0] * N, 1.0, 1e-7, theorem="pld", eta=eta,
                      mechanisms=["discrete-laplace:1"] * N)
    return result, rungs, len(whole)


def test_a_plan_whose_first_lattice_misses_eta_is_searched_on_the_second_alone(monkeypatch):
    result, rungs, whole = _allocated(monkeypatch, 3e-3)
    assert result.composition.extra["rung"] == 1
    assert rungs and set(rungs) == {1}          # (guessed the first rung: three on it, then two more)
    assert whole == 1
    assert result.composition.epsilon <= 1.0 and result.waste < WASTE


def test_a_plan_whose_first_lattice_meets_eta_is_searched_there(monkeypatch):
    result, rungs, whole = _allocated(monkeypatch, 5e-2)
    assert result.composition.extra["rung"] == 0 and set(rungs) == {0} and whole == 1
    assert result.composition.epsilon <= 1.0 and result.waste < WASTE


def test_a_wrong_guess_of_the_second_rung_is_searched_again_on_the_first(monkeypatch):
    """Guessed a climb that does not come: the forward check's total, on the first lattice, is
    above the budget; the search goes on with that lattice's upper ends from there (not stepping
    the scale down by hairs with whole totals), and the budget is spent as without the guess."""
    result, rungs, whole = _allocated(monkeypatch, 5e-2, guess=1)
    assert result.composition.extra["rung"] == 0
    assert rungs[0] == 1 and rungs[-1] == 0 and len(rungs) <= 7
    assert whole == 2
    assert result.composition.epsilon <= 1.0 and result.waste < WASTE


@pytest.mark.parametrize("kinds, said", [(N, [0, None, 1]), (10, [0, 0, 0])])
def test_the_guess_is_unsure_where_the_estimate_is_near_eta(kinds, said):
    """Estimated widths from 1.1 to 1/CLIMB_SHARE times eta are too near it to tell (the bench edits'
    climbs came from 1.19, and none came up to 1.36): likely_rung says None there. On fewer than
    MIN_KINDS kinds it says the first rung (psi-survey: a whole bracket at the first scale chose
    wrongly, the rung moving with the scale)."""
    from dpplanner.engine.mechanisms import ladder, theorems
    from dpplanner.engine.validation import validate_plan

    plan = validate_plan(EPS[:kinds], [0.0] * kinds, None, ["discrete-laplace:1"] * kinds)
    _, r, _ = theorems._releases(plan, 1e-7, 3e-3)
    width = ladder.first_rung_width(r, ladder._start(r, 3e-3)[3])
    assert [ladder.likely_rung(r, width / share) for share in (1.0, 1.2, 1.5)] == said


def test_where_the_guess_is_unsure_the_whole_total_at_the_first_scale_picks_the_rung(monkeypatch):
    """Unsure of the rung, the allocation composes the whole total at its search's first scale and
    searches on the rung that bracket stopped on, from its upper end there (read again, not
    composed): the bits of a right guess, for one whole total more."""
    spectral = importlib.import_module("dpplanner.engine.mechanisms.spectral")
    theorems = importlib.import_module("dpplanner.engine.mechanisms.theorems")
    for eta, rung in ((3e-3, 1), (5e-2, 0)):
        right, _, _ = _allocated(monkeypatch, eta, guess=rung)
        monkeypatch.setattr(theorems, "likely_rung", lambda r, eta: None)
        real, composed = spectral.upper_end, []
        monkeypatch.setattr(spectral, "upper_end", lambda *a, **k: composed.append(1) or real(*a, **k))
        unsure, rungs, whole = _allocated(monkeypatch, eta)
        monkeypatch.setattr(spectral, "upper_end", real)
        assert unsure.epsilons.tobytes() == right.epsilons.tobytes()
        assert unsure.composition.epsilon == right.composition.epsilon
        assert set(rungs) == {rung} and whole == 2 and len(composed) == len(rungs) - 1


def test_an_allocation_allocated_again_is_kept_where_its_bracket_climbs_past_the_guessed_rung():
    """Three releases (Gaussian, Laplace, discrete Gaussian): the search starts on the first rung,
    where the plan's own scale is 4.9e-4 of the budget over it, and the whole total stops on the
    fourth. The search on that rung tests the own scale as the first search does: allocating the
    result again keeps every epsilon to the bit ("Redistribute now" on a balanced plan changes
    nothing; it moved them by 4e-8, then 6e-12, never settling)."""
    deltas = [1.456489462679002e-09, 0.0, 2.3712023503296755e-08]
    kw = dict(theorem="pld", eta=1e-3, multiplicities=[2, 2, 5],
              mechanisms=["gaussian", "laplace", "discrete-gaussian"])
    eps = [0.01799870972821514, 0.027862092639728005, 0.13307705464723277]
    seen = []
    for _ in range(3):
        forget()
        a = allocate(eps, deltas, [False] * 3, [1.0] * 3, 2.0, 1.7820178379312658e-07, **kw)
        assert a.composition.epsilon <= 2.0
        eps = [float(e) for e in a.epsilons]
        seen.append(eps)
    assert seen[1] == seen[0] and seen[2] == seen[0]


def _random_plan(rng) -> dict:
    """A few releases of every kind pld composes, some repeated, one in five pinned."""
    n = int(rng.choice([3, 5, 8]))
    mech = [str(rng.choice(["laplace", "gaussian", "eps-delta", "discrete-laplace", "discrete-gaussian"]))
            for _ in range(n)]
    deltas = [0.0 if m in ("laplace", "discrete-laplace") else float(10 ** rng.uniform(-10, -7)) for m in mech]
    mult = [int(k) for k in rng.choice([1, 2, 5, 20], n)]
    held = [i > 0 and bool(rng.random() < 0.2) for i in range(n)]
    return dict(epsilons=[float(x) for x in 10 ** rng.uniform(-2, -1, n)], deltas=deltas, held=held,
                weights=[float(rng.choice([1.0, 2.0, 0.5])) for _ in range(n)], epsilon_g=float(rng.choice([1.0, 2.0])),
                delta_g=float(10 ** rng.uniform(-8, -6)) + sum(d * k for d, k in zip(deltas, mult)),
                theorem="pld", eta=float(rng.choice([1e-3, 1e-2])), multiplicities=mult, mechanisms=mech)


#: Five releases whose bracket stops on the fifth rung, where the search on that rung starts 5.3e-5
#: of the scale from the plan's own scale (just outside OWN_BAND): it found a scale 2.5e-12 above it.
OFF_BAND = dict(epsilons=[0.27530795914618394, 0.46896284199435473, 0.03662314654088013, 0.02694240339533711,
                          0.18996026209984557],
                deltas=[0.0, 2.6011446224112047e-08, 7.780591574150177e-08, 2.828619241208256e-10, 0.0],
                held=[False, True, False, False, False], weights=[1.0, 1.0, 0.5, 1.0, 2.0], epsilon_g=2.0,
                delta_g=1.9001872167261184e-07, theorem="pld", eta=1e-3, multiplicities=[1, 2, 1, 20, 5],
                mechanisms=["laplace", "discrete-gaussian", "eps-delta", "discrete-gaussian", "discrete-laplace"])


@pytest.mark.parametrize("plan", [OFF_BAND] + [_random_plan(np.random.default_rng(seed)) for seed in range(6)])
def test_an_allocation_allocated_again_keeps_every_epsilon(plan):
    """Allocating an allocation's result again ("Redistribute now" on a balanced plan) changes no
    epsilon, also where a later search lands near the plan's own scale from a start further off."""
    def allocated(eps):
        keys = ("deltas", "held", "weights", "epsilon_g", "delta_g")
        rest = {k: v for k, v in plan.items() if k not in keys + ("epsilons",)}
        return allocate(eps, *(plan[k] for k in keys), **rest)

    forget()
    first = allocated(plan["epsilons"])
    again = allocated([float(e) for e in first.epsilons])
    assert again.epsilons.tobytes() == first.epsilons.tobytes()
    assert again.composition.epsilon == first.composition.epsilon <= plan["epsilon_g"]
