"""An OpenDP discrete Gaussian whose sigma would pass what the engine accounts (2^57 lattice steps:
a large shift at a tiny epsilon) is refused with a reason naming the statistic and what to change,
never an internal failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpplanner.model.field_rules import PlanError
from dpplanner.model.files import loads_plan
from dpplanner.model.redistribution import rebalance

EXAMPLE = Path(__file__).resolve().parents[2] / "resources" / "examples" / "psi-survey.dpplan"


def _plan(epsilon_g: float, pinned=None):
    """psi-survey at global epsilon ``epsilon_g``; its 8th statistic is a mean with OpenDP
    Gaussian noise (shift ~1.5e12 lattice steps), pinned at ``pinned`` if given."""
    data = json.loads(EXAMPLE.read_text())
    data["budget"]["epsilon"] = epsilon_g
    stat = data["statistics"][7]
    assert (stat["mechanism"], stat["noise"], stat["name"]) == ("gaussian", "opendp", "mean household size")
    if pinned is not None:
        stat.update(epsilon=pinned, held=True)
    return loads_plan(json.dumps(data))


def test_a_redistribution_at_a_tiny_global_epsilon_is_refused_naming_the_gaussian():
    # It failed with the engine's "needs a discrete Gaussian sigma above 1.44115e+17" at a probe.
    plan = _plan(1e-15)
    with pytest.raises(PlanError) as err:
        rebalance(plan)
    text = str(err.value)
    assert text.startswith("redistribution refused: the statistics with OpenDP noise need ε ")
    assert "under the noise-aware (PLD) theorem even at the least ε each one's noise is calibrated for, more " \
        "than the spendable ε 1e-15: statistic 8 ('mean household size')'s discrete Gaussian noise cannot be " \
        "calibrated below ε 1.67e-05 (its σ would pass 2^57 lattice steps)" in text
    assert "quer" not in text and "epsilon_g" not in text


def test_a_pinned_epsilon_too_small_for_its_noise_says_what_to_change():
    plan = _plan(1.0, pinned=1e-10)
    problem = plan.privacy_all()[7].problem
    assert problem.startswith("at ε 1e-10 and δ 2.5e-07 its OpenDP discrete Gaussian noise would need σ above "
                              "2^57 steps of its lattice")
    assert "it needs ε 1.67e-05 or more: raise its ε or the global ε, narrow its bounds" in problem
