"""How each statistic's error is computed, step by step, with its numbers: what the report prints.

The steps are made from the same functions that compute the error (``accuracy.sensitivity``, the
functioning budget, the Laplace and Gaussian calibrations and factors), so the report cannot
state a formula the model does not use: each step's value is the model's value, and
``sensitivity_rule`` words the sensitivity the way ``accuracy.sensitivity`` computes it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from . import accuracy as acc
from .opendp_noise import error as opendp_error
from .privacy import opendp_release, values_budget
from .statistic import Budget, Kind, Mechanism, Neighbouring, Noise, Statistic
from .validation import amplification_ratio


@dataclass(frozen=True)
class Step:
    """One line of a derivation: ``symbol = formula = value`` (``key`` names it for programs)."""

    key: str
    symbol: str
    formula: str
    value: float


def sensitivity_formulas(kind: Kind, neighbouring: Neighbouring) -> tuple[str, str]:
    """(Δ₁, Δ₂) of a kind in symbols, as ``accuracy.sensitivity`` computes them (a, b: the value
    bounds; n: the records)."""
    replace = neighbouring is Neighbouring.REPLACE_ONE
    if kind is Kind.SUM:
        d = "b − a" if replace else "max(|a|, |b|)"
    elif kind is Kind.MEAN:
        d = "(b − a)/n" if replace else "max(|a|, |b|)/n"
    elif kind is Kind.PROPORTION:
        d = "1/n"
    elif kind in (Kind.HISTOGRAM, Kind.QUANTILE):
        return ("2", "√2") if replace else ("1", "1")
    else:
        d = "1"
    return d, d


#: Why each kind has the sensitivity it has, in words.
_WHY = {
    Kind.COUNT: "one record changes the count by at most 1",
    Kind.SUM: "one record's value, clamped to [a, b], is added, removed or replaced",
    Kind.MEAN: "the clamped sum's sensitivity over the public n",
    Kind.PROPORTION: "the mean of 0/1 values over the public n",
    Kind.HISTOGRAM: "over m bins, one record changes one bin count by 1 (or moves between two)",
    Kind.QUANTILE: "over m = ⌈(b − a)/g⌉ grid cells whose counts are summed into the CDF, one "
                   "record changes one cell count by 1 (or moves between two)",
}


def sensitivity_rule(kind: Kind, neighbouring: Neighbouring) -> str:
    """"quantile/CDF: Δ₁ = 1, Δ₂ = 1, over m = …": the rule the report states for a kind."""
    if kind is Kind.CUSTOM:
        return "custom: dpplanner does not model its mechanism"
    l1, l2 = sensitivity_formulas(kind, neighbouring)
    return f"Δ₁ = {l1}, Δ₂ = {l2}: {_WHY[kind]}"


def plan_derivation(budget: Budget, stat: Statistic, delta: float) -> list[Step]:
    """``derivation`` of a statistic of a plan with this budget, for the noise it is planned with
    (OpenDP's discrete noise or the continuous noise); the last step's value is the statistic's
    error as ``privacy.statistic_privacy`` computes it."""
    ratio = amplification_ratio(budget)
    if stat.kind is Kind.CUSTOM:
        return []
    eps_v, delta_v, chosen = values_budget(budget, stat, delta, ratio)
    head = [] if chosen is None else [
        Step("values_epsilon", "ε_v", f"ε_i − ε_s: the {1 - stat.selection_share:.0%} of ε_i left once the "
                                      "groups are selected", eps_v)]
    if stat.noise is Noise.OPENDP:
        return head + opendp_derivation(budget, stat.replace(epsilon=eps_v), delta_v, ratio)
    return head + derivation(stat, eps_v, delta_v, confidence=budget.confidence,
                             neighbouring=budget.neighbouring, dataset_size=budget.dataset_size,
                             amplification=ratio, contributions=budget.contributions)


def opendp_derivation(budget: Budget, stat: Statistic, delta: float, ratio: float) -> list[Step]:
    """The steps of OpenDP's discrete noise: the certified sensitivity, the lattice and shift, the
    engine's calibration, and the error's count of lattice steps (``opendp_noise.error``)."""
    eps_f = acc.functioning_epsilon(stat.epsilon, ratio)
    noise = opendp_release(budget, stat, eps_f, acc.functioning_delta(delta, ratio))
    cert = noise.certified
    m = cert.coordinates
    g = cert.groups or 1
    err = opendp_error(noise, budget.beta, stat.kind is Kind.QUANTILE, g)
    eps_symbol = "ε′" if ratio != 1.0 else "ε"
    sens, symbol = (cert.l2, "Δ₂") if noise.gaussian else (cert.l1, "Δ₁")
    steps = [Step("coordinates", "m", "values released together" + (" in each group" if g > 1 else ""), m)]
    steps += _moves_steps(acc.sensitivity(stat, budget.neighbouring, budget.dataset_size,
                                          budget.contributions).moves, g, bool(stat.group_by))
    if ratio != 1.0:
        steps.append(Step("functioning_epsilon", "ε′", "ln(1 + (N/n)(e^ε − 1))", eps_f))
    steps.append(Step("l2" if noise.gaussian else "l1", symbol,
                      f"as OpenDP certifies it at d_in = {cert.d_in}" + (f" ({cert.note})" if cert.note else ""),
                      sens))
    if noise.k is None:
        steps.append(Step("shift", "S", f"{symbol} (an integer query: lattice 1)", noise.shift))
    else:
        steps += [Step("lattice", "2^k", f"the lattice: k = ⌊log₂ {symbol}⌋ − 40", noise.lattice),
                  Step("shift", "S", f"⌈{symbol} / 2^k⌉ + 1", noise.shift)]
    cells = cert.cells
    if noise.gaussian and noise.tag == "eps-delta":
        steps.append(Step("lattice_scale", "σ", f"the least σ at which a discrete Gaussian vector of "
                                                f"squared L2 sensitivity {shown(float(cert.whole_l2_squared))} "
                                                f"is ({eps_symbol}, δ)-DP through zCDP", noise.lattice_scale))
    elif noise.gaussian:
        what = "discrete Gaussian noise with shift S is" if cells == 1 else \
            f"C = {cells} cells of discrete Gaussian noise with shift S, composed, are"
        steps.append(Step("lattice_scale", "σ", f"the least σ at which {what} ({eps_symbol}, δ)-DP",
                          noise.lattice_scale))
    elif noise.tag == "eps-delta" and not (cert.exact or not cert.integer):
        steps.append(Step("lattice_scale", "t", f"Δ₁ of the whole release ({shown(float(cert.whole_l1))}) "
                                                f"/ {eps_symbol}", noise.lattice_scale))
    else:
        formula = f"S / {eps_symbol}" if cells == 1 else f"C · S / {eps_symbol} (C = {cells} cells)"
        steps.append(Step("lattice_scale", "t", formula, noise.lattice_scale))
    lattice = "" if noise.k is None else " · 2^k"
    divided = f" / {shown(cert.divisor)}" if cert.divisor != 1 else ""
    t = "σ" if noise.gaussian else "t"
    steps.append(Step("scale", "scale", f"{t}{lattice}{divided}", noise.released_scale))
    j = err * cert.divisor / noise.lattice
    where = ("every running sum of the m cells' noises" if stat.kind is Kind.QUANTILE
             else "every one of the m noises") + (f" of all g = {g} groups" if g > 1 else "")
    steps += [Step("factor", "J", f"the fewest lattice steps J that {where} stays within, with "
                                  f"probability 1 − β", j),
              Step("error", "error", f"J{lattice}{divided}", err)]
    if g > 1:       # the error the table shows: one group's, β for that group alone
        cell = opendp_error(noise, budget.beta, stat.kind is Kind.QUANTILE)
        steps += [Step("cell_factor", "J₁", "the same for the m noises of one group", cell * cert.divisor / noise.lattice),
                  Step("cell_error", "error in one group", f"J₁{lattice}{divided}", cell)]
    return steps


def derivation(stat: Statistic, epsilon: float, delta: float, *, confidence: float,
               neighbouring: Neighbouring, dataset_size: Optional[int] = None,
               amplification: float = 1.0, contributions: int = 1) -> list[Step]:
    """The steps from the statistic's budget to its error bound under the continuous noise (empty
    for custom statistics); the last step's value is ``accuracy.accuracy(...).error`` (for a
    grouped statistic, every group at once: β shared by the g groups)."""
    if stat.kind is Kind.CUSTOM:
        return []
    sens = acc.sensitivity(stat, neighbouring, dataset_size, contributions)
    beta = 1.0 - confidence
    m, g = sens.coordinates, sens.groups
    eps_f = acc.functioning_epsilon(epsilon, amplification)
    steps = [Step("coordinates", "m", "values released together" + (" in each group" if g > 1 else ""), m)]
    steps += _moves_steps(sens.moves, g, bool(stat.group_by))
    plain = sens.moves.cells == 1 and sens.moves.rows == 1 and g == 1
    if amplification != 1.0:
        steps.append(Step("functioning_epsilon", "ε′", "ln(1 + (N/n)(e^ε − 1))", eps_f))
    eps_symbol = "ε′" if amplification != 1.0 else "ε"
    if stat.mechanism is Mechanism.LAPLACE:
        scale = acc.laplace_scale(sens.moves, eps_f)
        factor = acc.laplace_factor(stat, beta / g, m)
        cells = sens.moves.cells
        per = "" if cells == 1 else f" (C = {cells} cells, each noised at Δ₁/C over {eps_symbol}/C)"
        steps += [Step("l1", "Δ₁", _whole(stat, neighbouring, sens, plain, 0), sens.l1),
                  Step("scale", "b", f"Δ₁ / {eps_symbol}{per}", scale)]
        mb = "m·g/β" if g > 1 else "m/β"
        if stat.kind is Kind.QUANTILE:
            words = (f"min(s, m·ln({mb})), s: the Chernoff bound on every running sum of m Laplace "
                     "noises at once" + (" in every group" if g > 1 else ""))
        else:
            words = f"ln({mb})"
        steps += [Step("factor", "F", words, factor),
                  Step("error", "error", "b · F", scale * factor)]
        if g > 1:   # the error the table shows: one group's, β for that group alone
            cell = acc.laplace_factor(stat, beta, m)
            steps += [Step("cell_factor", "F₁", "F with β for one group: " + words.replace(mb, "m/β"), cell),
                      Step("cell_error", "error in one group", "b · F₁", scale * cell)]
        return steps
    delta_f = acc.functioning_delta(delta, amplification)
    if amplification != 1.0:
        steps.append(Step("functioning_delta", "δ′", "(N/n) δ", delta_f))
    sigma = acc.gaussian_sigma(sens.l2, eps_f, delta_f)
    factor = acc.gaussian_factor(stat, beta / g, m)
    from scipy.special import ndtri   # here: scipy is imported when a derivation is first shown
    z = -float(ndtri(beta / g / (2.0 * m)))
    steps += [Step("l2", "Δ₂", _whole(stat, neighbouring, sens, plain, 1), sens.l2),
              Step("scale", "σ", f"the smallest σ with Φ(Δ₂/2σ − {eps_symbol}σ/Δ₂) − e^{eps_symbol}·"
                                 f"Φ(−Δ₂/2σ − {eps_symbol}σ/Δ₂) ≤ δ", sigma),
              Step("z", "z", "Φ⁻¹(1 − β/(2m·g))" if g > 1 else "Φ⁻¹(1 − β/(2m))", z)]
    if stat.kind is Kind.QUANTILE:
        steps.append(Step("factor", "F", "z·√m (a CDF point sums up to m cells)", factor))
    else:
        steps.append(Step("factor", "F", "z", factor))
    steps.append(Step("error", "error", "σ · F", sigma * factor))
    if g > 1:       # the error the table shows: one group's, β for that group alone
        cell = acc.gaussian_factor(stat, beta, m)
        words = "Φ⁻¹(1 − β/(2m))" + ("·√m" if stat.kind is Kind.QUANTILE else "")
        steps += [Step("cell_factor", "F₁", f"F with β for one group: {words}", cell),
                  Step("cell_error", "error in one group", "σ · F₁", sigma * cell)]
    return steps


def _moves_steps(moves, g: int, grouped: bool) -> list[Step]:
    """The unit of privacy's steps: the groups, and the cells one individual moves with why
    (contributions.py), when they are not the one-row, one-cell case."""
    if moves is None or (moves.cells == 1 and moves.rows == 1 and not grouped):
        return []
    out = [] if g == 1 else [Step("groups", "g", "groups, each with its own noise", g)]
    return out + [Step("cells", "C", "cells one individual moves: " + "; ".join(moves.lines), moves.cells)]


def _whole(stat: Statistic, neighbouring: Neighbouring, sens, plain: bool, which: int) -> str:
    """Δ₁ (which = 0) or Δ₂ (1) of the whole release in symbols: the kind's one-row rule, times
    c rows, or as derived for the grouping (the cells step says how)."""
    rule = sensitivity_formulas(stat.kind, neighbouring)[which]
    c = sens.moves.rows
    if plain or (not stat.group_by and c == 1):
        return rule
    if not stat.group_by and sens.moves.scalar:
        return f"{c} · {rule} ({c} rows per individual)"
    return "as derived from the cells (C) above"


def shown(value: float) -> str:
    """A step's value as the report prints it: six significant digits (whole numbers whole)."""
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.6g}" if math.isfinite(value) else str(value)
