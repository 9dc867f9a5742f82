"""Hypothesis strategies: the shipped example plans with hostile mutations (issue 13's fuzzer).

A mutation replaces or deletes a field at the top level, in the budget or in one statistic (known
or unknown names), or duplicates / drops statistics. Values are wrong types, NaN and infinities,
huge, tiny and subnormal numbers, boundary values of the field rules, deep nesting, long strings
and enum names. ``plan_texts`` gives the JSON text, sometimes also cut short.
"""

from __future__ import annotations

import json
from functools import lru_cache

from hypothesis import strategies as st

from dpplanner.model.examples import example_path

EXAMPLES = ("psi-survey", "census", "synthetic-100")
TOP = ("format_version", "app", "title", "description", "budget", "statistics", "zz_unknown")
BUDGET = ("epsilon", "delta", "delta_split", "confidence", "eta", "theorem", "redistribute",
          "neighbouring", "dataset_size", "population", "reserve", "zz_unknown")
STAT = ("name", "variable", "kind", "mechanism", "epsilon", "delta", "weight", "held", "repetitions",
        "lower", "upper", "bins", "granularity", "n", "description", "zz_unknown")
WORDS = ("count", "sum", "mean", "proportion", "histogram", "quantile", "custom", "laplace",
         "gaussian", "add-remove", "replace-one", "basic", "advanced", "kov", "optimal",
         "concurrent", "filter", "GAUSSIAN", "", " ")
EDGES = (0, -0.0, 1, -1, 5e-324, 1e-310, 2.2250738585072014e-308, 1e-300, 1e-100, 1e-15, 1e-12,
         1e-9, 1e-6, 0.5, 0.999999, 0.9999999999999999, 1.0, 1.0000000000000002, 2, 99.99999999,
         100.0, 100.00000000000001, 1e6, 1e12, 1e12 + 1, 1e13, 1e15, 1e18, 1e300,
         1.7976931348623157e308, 2 ** 53 + 1, 10 ** 29, float("nan"), float("inf"), float("-inf"))


@lru_cache(maxsize=None)
def example_text(name: str) -> str:
    return example_path(name).read_text(encoding="utf-8")


def _nested(depth: int):
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


values = st.one_of(
    st.sampled_from(EDGES), st.sampled_from(EDGES), st.sampled_from(WORDS), st.none(), st.booleans(),
    st.integers(-10 ** 40, 10 ** 40), st.floats(), st.text(max_size=12),
    st.integers(1, 40).map(_nested),
    st.sampled_from([10 ** 30, 10 ** 31]), st.sampled_from(["x" * 5000, "é" * 300]),
    st.sampled_from(["\ud800", "a\udfff", "\ud83d\ude00"]),
    st.lists(st.sampled_from(EDGES), max_size=4),
    st.dictionaries(st.sampled_from(STAT), st.sampled_from(EDGES), max_size=3))
#: Mostly numbers for numeric fields, so that many mutated plans stay valid and reach the engine.
numbers = st.one_of(st.sampled_from(EDGES), st.floats(1e-12, 1.0), st.floats(0.0, 100.0),
                    st.integers(1, 10 ** 6), st.floats(1e-320, 1e-6))
NUMERIC = {"epsilon", "delta", "delta_split", "confidence", "eta", "dataset_size", "population",
           "reserve", "weight", "repetitions", "lower", "upper", "bins", "granularity", "n"}


@st.composite
def mutated_documents(draw, examples=EXAMPLES) -> dict:
    doc = json.loads(example_text(draw(st.sampled_from(examples))))
    if draw(st.booleans()) and isinstance(doc.get("budget"), dict):
        doc["budget"]["redistribute"] = False     # keep the mutated epsilons as they are
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(["top", "budget", "budget", "statistic", "statistic",
                                      "statistic", "rows"]))
        stats = doc.get("statistics")
        if where == "rows" and isinstance(stats, list) and stats:
            i = draw(st.integers(0, len(stats) - 1))
            op = draw(st.sampled_from(["duplicate", "drop", "clear", "many"]))
            if op == "duplicate":
                stats.insert(i, stats[i])
            elif op == "drop":
                del stats[i]
            elif op == "clear":
                stats.clear()
            else:
                stats.extend([stats[i]] * draw(st.integers(10, 200)))
            continue
        if where == "statistic" and isinstance(stats, list) and stats \
                and isinstance(stats[0], dict):
            target = stats[draw(st.integers(0, len(stats) - 1))]
            target = target if isinstance(target, dict) else stats[0]
            key = draw(st.sampled_from(STAT + ("epsilon", "epsilon", "repetitions")))
        elif where == "budget" and isinstance(doc.get("budget"), dict):
            target, key = doc["budget"], draw(st.sampled_from(BUDGET))
        else:
            target, key = doc, draw(st.sampled_from(TOP))
        if draw(st.integers(0, 5)) == 0:
            target.pop(key, None)
        elif key in NUMERIC and draw(st.integers(0, 4)):
            target[key] = draw(numbers)
        else:
            target[key] = draw(values)
    return doc


@st.composite
def plan_texts(draw, examples=EXAMPLES) -> str:
    text = json.dumps(draw(mutated_documents(examples)))   # NaN stays NaN, "\ud800" an escape
    if draw(st.integers(0, 9)) == 0:
        text = text[:draw(st.integers(0, len(text)))]
    return text
