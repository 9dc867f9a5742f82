"""The neighbouring relation in the plan's words: with a unit of privacy of c rows, neighbouring
datasets differ by one individual's rows (up to c), not by one record. The report's budget list
and the release script's record say so; the Budget panel's choice names the relation alone."""

from __future__ import annotations

import pytest

from dpplanner.model import Budget, Kind, Mechanism, Neighbouring, Plan, Statistic
from dpplanner.model.report import render_report
from dpplanner.release.spec import plan_block


def _plan(neighbouring: Neighbouring, unit: str, c: int) -> Plan:
    b = Budget(epsilon=1.0, delta=1e-6, dataset_size=600, neighbouring=neighbouring, unit=unit, contributions=c)
    return Plan(b, [Statistic("households", "", Kind.COUNT, Mechanism.LAPLACE, epsilon=0.5)], title="t")


@pytest.mark.parametrize("neighbouring, unit, c, words", [
    (Neighbouring.ADD_REMOVE, "household", 4, "add / remove one household (all of their rows, at most c = 4)"),
    (Neighbouring.REPLACE_ONE, "household", 4, "replace one household (all of their rows, at most c = 4)"),
    (Neighbouring.ADD_REMOVE, "person", 1, "add / remove one person (one row)"),
    (Neighbouring.REPLACE_ONE, "patient", 1, "replace one patient (one row)"),
])
def test_the_report_and_the_release_record_name_the_unit(neighbouring, unit, c, words):
    plan = _plan(neighbouring, unit, c)
    assert f"<dt>neighbouring relation</dt><dd>{words}</dd>" in render_report(plan)
    assert plan_block(plan, {}, plan.privacy_all())["neighbouring"] == words


def test_the_relation_alone_never_says_one_record():
    assert {n.label for n in Neighbouring} == {"add / remove one individual", "replace one individual"}
