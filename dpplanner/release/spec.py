"""A plan as the release script's PLAN block: every number the script builds and checks with.

Each statistic's entry holds what OpenDP needs (column, data type, clamping bounds, the value a
missing one counts as, categories or grid cells, the noise, its scale and lattice) and what the
plan certified for it (OpenDP's sensitivity at d_in, the shift S in lattice units, epsilon_i and,
for a Gaussian, rho_i, and the error at the plan's confidence). The plan's totals were certified by
the engine for exactly these per-release parameters; the script checks that its measurements
reproduce them, which is how it verifies the total without importing dpplanner.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional

from dpplanner.engine import theorem
from dpplanner.model.accuracy import quantile_bins
from dpplanner.model.contributions import bounds, group_count, listed_keys
from dpplanner.model.opendp_sensitivity import d_in, missing_value
from dpplanner.model.plan import Plan
from dpplanner.model.statistic import WHOLE_NUMBER_KINDS, Kind, Mechanism, Neighbouring, Noise, Statistic
from dpplanner.model.validation import amplification_ratio

#: The OpenDP series the script is written for (and pins).
OPENDP_SERIES = "0.16."


class ExportError(ValueError):
    """The plan cannot be exported as it is; the message says what to change."""


def check_exportable(plan: Plan, privacy) -> None:
    """ExportError naming every statistic that OpenDP cannot release as planned (``privacy``:
    ``plan.privacy_all()``)."""
    problems = []
    names = [s.name for s in plan.statistics]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        problems.append(f"statistic names must be unique (the script keys its columns and results by "
                        f"name): {', '.join(map(repr, twice))}")
    if amplification_ratio(plan.budget) != 1.0:
        problems.append("the plan uses amplification by sampling (a population size N): the script "
                        "cannot draw or verify the sample; clear N to export")
    for i, (s, p) in enumerate(zip(plan.statistics, privacy)):
        if s.kind is Kind.CUSTOM:
            continue
        if s.noise is not Noise.OPENDP:
            problems.append(f"statistic {i + 1} ({s.name!r}) is planned with continuous noise, which "
                            "OpenDP does not add: set its noise to OpenDP to export it")
        elif p.problem:
            problems.append(f"statistic {i + 1} ({s.name!r}): {p.problem}")
    if not plan.statistics:
        problems.append("the plan has no statistics")
    if problems:
        raise ExportError("cannot write a release script for this plan:\n" +
                          "\n".join(f"  - {p}" for p in problems))


def plan_block(plan: Plan, totals: dict, privacy) -> dict:
    """The PLAN dictionary (JSON-compatible) of an exportable plan (``privacy``:
    ``plan.privacy_all()``)."""
    b = plan.budget
    replace = b.neighbouring is Neighbouring.REPLACE_ONE
    stats, custom = [], []
    size_limit = None
    for s, p in zip(plan.statistics, privacy):
        if s.kind is Kind.CUSTOM:
            custom.append({"name": s.name, "epsilon": s.epsilon, "delta": p.delta,
                           "repetitions": s.repetitions})
            continue
        noise, cert = p.opendp, p.opendp.certified
        size_limit = size_limit or cert.size_limit
        stats.append(_entry(s, p, noise, cert, b.confidence, b.contributions))
        if p.selection is not None:
            stats[-1]["selection"] = selection_entry(p.selection)
    return {"title": plan.title or "(untitled plan)", "opendp": OPENDP_SERIES,
            "neighbouring": b.neighbouring.of(b.unit, b.contributions), "d_in": d_in(b.neighbouring, b.contributions),
            "unit": b.unit, "contributions": b.contributions, "truncate": b.truncate,
            "size": b.dataset_size if replace else None, "size_limit": size_limit,
            # (the theorem as the window names it: the release record's words)
            "epsilon": b.epsilon, "delta": b.delta, "theorem": theorem(b.theorem).label,
            "confidence": b.confidence, "totals": totals, "statistics": stats, "custom": custom}


def _entry(s: Statistic, p, noise, cert, confidence: float, contributions: int) -> dict:
    """One statistic's entry. Each measurement is checked at ``d_in``, the distance one cell of
    the release is certified at (c or 2c rows; 1 for each of the two counts a replaced record
    moves; contributions.py): OpenDP's sensitivity there, the shift in lattice units, and the
    value OpenDP's privacy map must give at the plan's scale. ``moved_cells`` such cells compose
    the statistic's (epsilon, delta) (and rho), as the plan certified."""
    sens, shift = opendp_move(s, noise, cert)
    entry = {"name": s.name, "kind": s.kind.value, "column": s.variable,
             # (whole numbers matter to sums and means only: a flag left from a kind before is not
             # the script's, whose quantile edges are floats - the model's rule, implementation.py)
             "integer": bool(s.integer) and s.kind in WHOLE_NUMBER_KINDS, "repetitions": s.repetitions,
             "noise": "gaussian" if s.mechanism is Mechanism.GAUSSIAN else "laplace",
             "d_in": cert.d_in, "sensitivity": sens, "k": noise.k,
             "shift": shift, "scale": noise.scale, "map_bound": map_bound(noise, shift),
             "moved_cells": cert.cells, "epsilon": noise.epsilon,
             "delta": noise.delta, "rho": noise.rho, "divisor": cert.divisor,
             "cells": cert.coordinates, "error": p.error}
    if s.group_by:      # one measurement per group, each on the group's records (unsized)
        l0, linf = bounds(s, contributions)
        entry.update({"group_by": s.group_by, "groups": group_count(s), "group_keys": list(listed_keys(s)),
                      "max_groups": l0, "max_rows": linf, "size_limit": cert.size_limit,
                      "error_one_group": p.cell_error})
    if s.kind in (Kind.SUM, Kind.MEAN, Kind.QUANTILE):
        entry["bounds"] = [float(s.lower), float(s.upper)]
        entry["missing"] = missing_value(s)
    if s.kind is Kind.QUANTILE:
        lo, g = float(s.lower), float(s.granularity)
        m = quantile_bins(lo, float(s.upper), g)
        entry["edges"] = [lo + g * j for j in range(1, m)]
        entry["grid"] = [min(lo + g * j, float(s.upper)) for j in range(1, m + 1)]
    return entry


def selection_entry(chosen) -> dict:
    """The private selection of a statistic's groups (model/selection.py), as OpenDP's
    make_laplace_threshold takes it: the discrete Laplace scale b and the integer threshold T on
    each group's count of distinct individuals, checked at d_in = (K, K, 1) (one individual is in
    at most K groups' counts and moves each by at most 1) against (eps_s, delta_s)."""
    return {"scale": chosen.scale, "threshold": chosen.threshold, "d_in": [chosen.keys, chosen.keys, 1],
            "epsilon": chosen.epsilon, "delta": chosen.delta}


def opendp_move(s: Statistic, noise, cert) -> tuple[float, int]:
    """(OpenDP's sensitivity at the cell's d_in, that in lattice units): the plan's own for a
    cell of one number; for counts that one individual may spread over several bins, OpenDP's
    count_by_categories certifies d_in (L1 and L2 alike, above the plan's own L2)."""
    if cert.scalar:
        return (cert.l2 if noise.gaussian else cert.l1), noise.shift
    return float(cert.d_in), int(cert.d_in)


def map_bound(noise, shift: int) -> float:
    """What OpenDP's privacy map gives at the plan's scale for a move of ``shift`` lattice units,
    rounded up: shift / t (discrete Laplace, epsilon) or shift^2 / (2 sigma^2) (discrete Gaussian,
    rho), t and sigma in lattice units."""
    t = Fraction(noise.lattice_scale)
    exact = Fraction(shift) ** 2 / (2 * t * t) if noise.gaussian else Fraction(shift) / t
    r = float(exact)
    return r if Fraction(r) >= exact else math.nextafter(r, math.inf)


def default_groups(plan: Plan) -> tuple[dict, dict]:
    """(GROUP_COLUMNS, GROUPS): each statistic by group's group column (by default the name of
    what it is grouped by) and its keys (the plan's listed keys; empty when it only gives g)."""
    grouped = [s for s in plan.statistics if s.group_by and s.kind is not Kind.CUSTOM]
    return ({s.name: s.group_by for s in grouped}, {s.name: list(listed_keys(s)) for s in grouped})


def default_categories(plan: Plan) -> dict:
    """Each histogram's categories as the column is expected to hold them: codes 0 .. m-1."""
    return {s.name: [str(j) for j in range(int(s.bins))] for s in plan.statistics
            if s.kind is Kind.HISTOGRAM}


def totals_block(results: dict) -> dict:
    """{theorem: [epsilon, delta]} of the totals that apply (JSON numbers only), each theorem by
    the window's label."""
    out = {}
    for name, c in results.items():
        if c.applicable and c.feasible and math.isfinite(c.epsilon):
            out[theorem(name).label] = [c.epsilon, c.delta]
    return out


def custom_statistics(plan: Plan) -> list[Statistic]:
    return [s for s in plan.statistics if s.kind is Kind.CUSTOM]


def slug(name: str, taken: Optional[set] = None) -> str:
    """A Python identifier for a statistic's name (unique within ``taken``)."""
    base = "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_") or "statistic"
    if base[0].isdigit():
        base = "s_" + base
    out, i = base, 2
    while taken is not None and out in taken:
        out, i = f"{base}_{i}", i + 1
    if taken is not None:
        taken.add(out)
    return out
