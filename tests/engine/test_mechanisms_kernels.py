"""The Laplace lower twin (kernels.laplace_lower) and the lattice it is laid on (aligned_step)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpplanner.engine.mechanisms import bracket
from dpplanner.engine.mechanisms.composition import twins
from dpplanner.engine.mechanisms.kernels import laplace_lower


def _delta(kernel, xs):
    locs = kernel.offset + kernel.step * np.arange(kernel.p.size)
    return np.array([np.sum(kernel.p * np.maximum(0.0, -np.expm1(x - locs))) for x in xs])


def _laplace_delta(a, xs):
    """delta(x) of the Laplace pair with this a, for every real x (formulas.md §8)."""
    xs = np.asarray(xs)
    above = np.maximum(0.0, -np.expm1((xs - a) / 2))
    below = np.where(a >= -xs, -np.expm1(xs / 2 - a / 2), -np.expm1(xs))
    return np.where(xs >= 0, above, below)


def test_the_lower_twin_is_below_the_laplace_delta_everywhere():
    """Both constructions (pooled where a^2 >= f, shrunk elsewhere), at negative x too, for a from
    1e-3 to 5 and steps from 2^-14 to 2^-5; mass 1."""
    rng = np.random.default_rng(11)
    pooled = 0
    for _ in range(400):
        a, step = float(10 ** rng.uniform(-3.0, 0.7)), float(2.0 ** -rng.uniform(5, 14))
        kernel = laplace_lower(a, step)
        pooled += kernel.offset == -a and (2 * a) % step > 0
        xs = np.concatenate([np.linspace(-2.2 * a, 2.2 * a, 201), rng.uniform(-2 * a, 2 * a, 40)])
        assert np.all(_delta(kernel, xs) <= _laplace_delta(a, xs) + 1e-15), (a, step)
        assert kernel.p.sum() == pytest.approx(1.0, abs=1e-12)
    assert 50 < pooled < 350                 # both constructions were tried


@pytest.mark.parametrize("multipliers, counts, width", [
    ((3.0, 7.3), (10, 10), 2e-3),                        # large a: the pooled twin (was 6.0e-3)
    ((30.0, 70.0 * math.pi / 3), (200, 200), 2.5e-2),      # small a: the half-step shrink (was 3.6e-2)
])
def test_releases_off_the_lattice_bracket_tightly_on_a_coarse_one(multipliers, counts, width):
    """The simple lower twin shrank every a to a whole step (a first-order loss of up to a step per
    release); now a release off the lattice loses at most half a step, or pools its top atom."""
    r, _ = twins(bracket.laplace_params(np.array(multipliers)), np.array(counts), (np.zeros(0), np.zeros(0)),
                 np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), 1e-7)
    step = 2.0 ** -10
    assert bracket.side(r, step, True) - bracket.side(r, step, False) <= width


def test_an_edited_plans_groups_do_not_make_the_lattice_fine():
    """synthetic-1000 after twelve typed edits (x 1.05 or x 0.95): its groups are at 19/40, 1/2,
    19/20, 21/20, 19/10, 2 and 21/10 of the heaviest. Aligning them all took the lattice to base /
    40, 50 times finer than the target (a composition took 340 ms instead of 60). The heaviest
    group is still exact on it."""
    a = 0.0061602154505 * np.array([0.475, 0.5, 0.95, 1.0, 1.05, 1.9, 2.0, 2.1])
    r, _ = twins(bracket.laplace_params(1.0 / a), np.array([3, 203, 9, 387, 9, 3, 181, 3]),
                 (np.zeros(0), np.zeros(0)), np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0),
                 np.zeros(0, dtype=np.int64), 1e-7)
    target = 2.0 ** -7
    step = bracket.aligned_step(r, target)
    assert target / 2 <= step <= target
    heaviest = int(np.argmax(r.a_lo * r.lo_mult))
    n = r.a_lo[heaviest] / step
    assert abs(n - round(n)) < 1e-9


def test_a_group_at_a_whole_ratio_is_aligned_even_under_a_fine_step():
    """The heaviest group's a is below target / 2, so its own step is already that fine; a group
    at twice its a (a hair below, as the twins round) lays the step a hair lower and costs nothing
    more. It was left off the lattice (2a / step = 3.999...: nearly a whole step lost)."""
    a = np.array([3e-4, 6e-4 * (1 - 4e-16)])
    r, _ = twins(bracket.laplace_params(1.0 / a), np.array([1000, 100]), (np.zeros(0), np.zeros(0)),
                 np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), 1e-7)
    step = bracket.aligned_step(r, 2.0 ** -10)
    ratios = 2 * r.a_lo / step
    assert np.all(ratios - np.floor(ratios) < 1e-9)        # both on the lattice, a hair above
    assert bracket.side(r, step, True) - bracket.side(r, step, False) <= 1e-3


def test_a_target_a_rounding_below_a_whole_ratio_keeps_the_lattice():
    """An allocation scales every release and the ladder's target together, so a / target sits on
    a whole number (640 here) up to rounding. A target an ulp low made it 640.0000000000001 and
    the lattice a / 641: the total jumped by ~1e-7 between two nearby scales and the allocation
    of psi-survey with OpenDP noise hunted that jump for a dozen compositions."""
    a = np.array([0.2558409061704804])
    r, _ = twins(bracket.laplace_params(1.0 / a), np.array([1]), (np.zeros(0), np.zeros(0)),
                 np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), 1e-7)
    for f in (1 - 4e-16, 1.0, 1 + 4e-16):
        step = bracket.aligned_step(r, float(r.a_lo[0]) / 640 * f)
        assert round(float(r.a_lo[0]) / step) == 640


def test_the_lattice_is_laid_in_integers_as_exactly_as_with_fractions(monkeypatch):
    """aligned_step's exact steps (each group's a q / p, the least of them, n steps fitting below
    it) and directed_ratio's rounding are decided on the integers of each double's ratio, with no
    Fraction (a few times its cost at each scale an allocation tries): the same step as Fraction
    arithmetic gives, and a step that fits below its group's a exactly."""
    from fractions import Fraction

    from dpplanner.engine.mechanisms import discrete_laplace
    from dpplanner.engine.mechanisms.discrete import DiscreteRelease

    a = 0.0061602154505 * np.array([0.475, 0.5, 0.95, 1.0, 1.05, 1.9, 2.0, 2.1]) * (1 + 2.0 ** -52)
    disc = [DiscreteRelease("laplace", 2147483667010 * (20.0 + 3 * i), 2147483667010) for i in range(3)]
    r, _ = twins(bracket.laplace_params(1.0 / a), np.array([3, 203, 9, 387, 9, 3, 181, 3]),
                 (np.zeros(0), np.zeros(0)), np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0),
                 np.zeros(0, dtype=np.int64), 1e-7, disc, [1, 2, 1])
    made, steps = [], []
    for module in (bracket, discrete_laplace):
        monkeypatch.setattr(module, "Fraction", lambda *a: made.append(a) or Fraction(*a))
    discrete_laplace.directed_ratio.cache_clear()
    for target in (2.0 ** -7, 2.0 ** -12, 1e-3 / 3):
        steps.append(bracket.aligned_step(r, target))
    assert made == []
    monkeypatch.undo()
    heaviest = float(r.a_lo[int(np.argmax(r.a_lo * r.lo_mult))])
    for step in steps:
        assert Fraction(step) * round(heaviest / step) <= Fraction(heaviest)
    rng = np.random.default_rng(3)
    for num, den in zip(rng.choice([1, 2, 7, 2147483667010, 2 ** 60 + 3], 400).tolist(),
                        (10 ** rng.uniform(-200, 200, 400)).tolist()):
        exact = Fraction(num) / Fraction(den)
        up, down = (discrete_laplace.directed_ratio.__wrapped__(num, den, u) for u in (True, False))
        assert Fraction(down) <= exact <= Fraction(up) and math.nextafter(down, math.inf) >= up
