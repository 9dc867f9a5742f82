"""The plain-language sentence never fails: a quantile whose ε_i is so small that its error bound
is infinite still gets its sentence (the soak test typed ε_i = 1e-320 into the table and the
median's percentile range raised OverflowError on the GUI thread; here the least ε_i a plan holds)."""

from __future__ import annotations

import math

from dpplanner.model import Budget, Kind, Plan, Statistic
from dpplanner.model.statistic import Noise


def test_a_quantile_with_an_unbounded_error_still_has_its_sentence():
    plan = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=2500, redistribute=False),
                [Statistic("median", "income", Kind.QUANTILE, lower=0, upper=1000, granularity=10,
                           epsilon=2.2250738585072014e-308, noise=Noise.CONTINUOUS)])
    p = plan.privacy(0)
    assert p.problem is None and math.isinf(p.error)
    assert "0th and 100th percentiles" in p.explanation     # anywhere: what an unbounded error means


def test_an_epsilon_above_the_budget_is_explained_by_the_plan_theorem_and_reserve():
    from dpplanner.model.explanations import above_global, above_global_tip

    pld = Budget(epsilon=1.0, delta=1e-5, theorem=Budget().theorem)
    assert above_global(pld, 1.0000132768467285).startswith(
        "Why an ε_i (1.0001) can be above the global ε (1): noise-aware (PLD) composition")
    reserved = Budget(epsilon=1.0, delta=1e-5, reserve=0.1)
    assert "above the spendable ε (0.9, after the reserve)" in above_global_tip(reserved)
    assert "the small probability, 1e-05, that the ε guarantee may fail" in above_global_tip(reserved)


def test_the_unit_of_privacy_shown_in_a_label_fits_one_line():
    """A one-line label shows the plan's unit as typed (spaces collapsed), cut with an ellipsis
    beyond UNIT_SHOWN characters; no unit reads "individual"."""
    from dpplanner.model.explanations import UNIT_SHOWN, unit_label

    assert unit_label("household") == "household"
    assert unit_label("  farm   holding ") == "farm holding"
    assert unit_label("") == unit_label("   ") == "individual"
    long = "registered business and all of its branches"
    shown = unit_label(long)
    assert len(shown) == UNIT_SHOWN and shown.endswith("…") and long.startswith(shown[:-1])
