"""A free statistic with OpenDP (discrete) noise gets at least its weight's share of what the pins
leave; below 2^-64 its noise cannot be calibrated, so such a weight is refused where it is typed,
in the user's words, and a weight above it redistributes."""

from __future__ import annotations

import pytest

from dpplanner.engine import compose_all
from dpplanner.model import Budget, Kind, Mechanism, PlanError, Statistic
from dpplanner.model.engine_inputs import composition_inputs
from dpplanner.model.releases import statistic_mechanisms
from dpplanner.model.statistic import Noise
from dpplanner.model.redistribution import rebalanced
from dpplanner.engine.validation import DISCRETE_MIN_EPSILON
from dpplanner.model.validation import validate_state

BUDGET = Budget(epsilon=1.0, delta=1e-6, theorem="basic", dataset_size=1000)


def _stats(weight: float, **first) -> list[Statistic]:
    return [Statistic("tiny", kind=Kind.COUNT, weight=weight, **first),
            Statistic("pinned", kind=Kind.COUNT, epsilon=0.5, held=True),
            Statistic("other", kind=Kind.COUNT, weight=2.0)]


def test_a_weight_whose_share_is_below_what_discrete_noise_takes_is_refused():
    with pytest.raises(PlanError) as caught:
        validate_state(BUDGET, _stats(1e-20))
    assert caught.value.index == 0 and caught.value.field == "weight"
    assert str(caught.value).startswith("statistic 1 ('tiny'): weight = 1e-20 leaves it too little ε")


def test_a_weight_above_it_redistributes():
    """The pins leave 0.5 to weights 2 + w: at w = 1e-18 the share is 2.5e-19 >= 2^-64."""
    budget, stats = validate_state(BUDGET, _stats(1e-18))
    done = rebalanced(budget, stats)
    assert done.statistics[0].epsilon >= DISCRETE_MIN_EPSILON


@pytest.mark.parametrize("change", [{"held": True, "epsilon": 0.1}, {"noise": Noise.CONTINUOUS}])
def test_pinned_or_continuous_statistics_have_no_such_floor(change):
    validate_state(BUDGET, _stats(1e-20, **change))


def test_without_redistribution_weights_are_not_read():
    validate_state(BUDGET.replace(redistribute=False), _stats(1e-20))


def test_one_redistribution_asked_for_refuses_such_a_weight_too():
    """`dpplanner-cli allocate` on a plan whose redistribution is off: the weight is read now, and
    refused in the same words as where it is typed (it was given the floor, 5.4e-20, silently)."""
    budget, stats = validate_state(BUDGET.replace(redistribute=False), _stats(1e-20))
    with pytest.raises(PlanError) as caught:
        rebalanced(budget, stats)
    assert caught.value.index == 0 and caught.value.field == "weight"
    assert str(caught.value).startswith("statistic 1 ('tiny'): weight = 1e-20 leaves it too little ε")
    assert rebalanced(budget, [stats[0].replace(weight=1e-18)] + list(stats[1:])).statistics[0].epsilon \
        >= DISCRETE_MIN_EPSILON


def test_a_weight_just_above_the_floor_redistributes():
    """At 3e-19 (share 7.5e-20) the allocation's search probes scales below its answer: a free
    statistic with OpenDP noise is never given less than the floor there either."""
    budget, stats = validate_state(BUDGET, _stats(3e-19))
    done = rebalanced(budget, stats)
    assert done.statistics[0].epsilon >= DISCRETE_MIN_EPSILON


def test_a_global_epsilon_no_weight_can_rescue_is_refused_naming_the_least_that_works():
    stats = [Statistic("a", kind=Kind.COUNT), Statistic("b", kind=Kind.COUNT)]
    with pytest.raises(PlanError) as caught:
        validate_state(BUDGET.replace(epsilon=1e-25), stats)
    assert caught.value.field == "epsilon" and caught.value.index is None
    message = str(caught.value)
    assert message.startswith("budget: global ε = 1e-25 is too small for the statistics with OpenDP noise")
    assert message.endswith("the least global ε that works for these statistics and weights is 1.1e-19")
    validate_state(BUDGET.replace(epsilon=1.1e-19), stats)


def test_the_least_weight_a_refusal_names_is_accepted_when_typed():
    """The hint is rounded up: a weight rounded down to two digits (1e-19 here, of a least
    1.04e-19) was refused again with the same hint."""
    budget = Budget(epsilon=2.0, delta=1e-6, theorem="basic", dataset_size=1000)
    stats = [Statistic("tiny", kind=Kind.COUNT, weight=1e-20),
             Statistic("pinned", kind=Kind.COUNT, epsilon=2.0 - 1.0439, held=True),
             Statistic("other", kind=Kind.COUNT, weight=2.0)]
    with pytest.raises(PlanError) as caught:
        validate_state(budget, stats)
    hint = float(str(caught.value).rsplit("at least ", 1)[1])
    validate_state(budget, [stats[0].replace(weight=hint)] + stats[1:])


@pytest.mark.parametrize("mechanism", [Mechanism.LAPLACE, Mechanism.GAUSSIAN])
def test_a_pinned_epsilon_below_what_discrete_noise_takes_is_composed_as_its_epsilon_and_delta(mechanism):
    """A pin at ε_i 1e-300 (typed) on an OpenDP statistic: its noise cannot be calibrated there,
    so the noise-aware theorems count it by its (ε_i, δ_i), as for a custom statistic; the discrete
    Gaussian was tagged as noise the engine then refused, and every total failed."""
    budget = Budget(epsilon=1.0, delta=1e-6, theorem="pld", dataset_size=1000, redistribute=False)
    stats = [Statistic("tiny", kind=Kind.COUNT, mechanism=mechanism, epsilon=1e-300, held=True),
             Statistic("other", kind=Kind.COUNT, epsilon=0.5)]
    budget, stats = validate_state(budget, stats)
    assert statistic_mechanisms(budget, stats)[0] == "eps-delta"
    inputs = composition_inputs(budget, stats)
    totals = compose_all(inputs.epsilons, inputs.deltas, inputs.delta_g, multiplicities=inputs.multiplicities,
                         mechanisms=inputs.mechanisms, theorems=("pld",))
    assert totals["pld"].epsilon <= 0.5 + 1e-9
