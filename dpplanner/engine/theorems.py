"""The registry of composition theorems: the one place that says which theorems exist.

Every list, label, colour, help page, CLI choice, report row and dispatch loops over ``REGISTRY``.
Adding a theorem is one ``Theorem`` entry here plus its mathematics in a module of its own: a
``compose`` function (ComposeInputs -> Composition) and a ``curve`` function (CurveInputs ->
(upper, lower or None), arrays over ``inputs.ks``). See docs/development/architecture.md, "Adding a theorem".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .advanced import advanced, advanced_epsilon
from .basic import basic, basic_epsilon
from .concurrent import concurrent
from .filters import filter_composition, filter_epsilon
from .kov import kov
from .mechanisms import pld_composition, pld_curve, zcdp_composition, zcdp_curve
from .theorem_inputs import ComposeInputs, CurveInputs
from .types import Composition

CurveArrays = tuple[np.ndarray, Optional[np.ndarray]]


@dataclass(frozen=True)
class Theorem:
    """One composition theorem and everything the program says about it.

    ``allocates``: redistribution may target it (its total is monotone in every epsilon and it
    applies to any plan). ``colours``: (light, dark) plot colours, colour-blind-safe (Okabe-Ito).
    ``dash``: "solid", "dash" or "dot" (theorems whose curve often coincides with another's are
    dashed so the one underneath stays visible). ``evaluated``: where the window's evaluation
    computes it when a helper process shares the work ("here", "helper", or "either": the half
    that is shorter, see compute/jobs.py). ``remembers_total``: an allocation under it leaves the
    allocated plan's total in memory, so the evaluation after it need not compute it again.
    ``assumption``: what its total relies on, in plain words (it completes "The total ..."), for
    the window's budget bar, the report and the CLI. ``generic``: it knows each release only by its
    (ε_i, δ_i), so its total holds for any mechanism with those parameters; a noise-aware theorem
    (False) holds only for the noise dpplanner calibrates.
    """

    name: str
    label: str
    title: str
    summary: str
    help_html: str
    compose: Callable[[ComposeInputs], Composition]
    curve: Callable[[CurveInputs], CurveArrays]
    allocates: bool
    colours: tuple[str, str]
    dash: str = "solid"
    evaluated: str = "either"
    remembers_total: bool = False
    assumption: str = "holds for any releases with these ε_i and δ_i, fixed before any answer is seen"
    generic: bool = True


def _kov_curve(c: CurveInputs) -> CurveArrays:
    return c.homogeneous()


REGISTRY: tuple[Theorem, ...] = (
    Theorem(
        "basic", "basic", "Basic composition (Dwork et al. 2006)",
        "Basic composition: the ε_i and δ_i simply add up. Always valid, also for adaptively chosen "
        "queries.",
        """
<p>Add up the budgets: releasing statistics that are (ε<sub>1</sub>, δ<sub>1</sub>), …,
(ε<sub>k</sub>, δ<sub>k</sub>)-differentially private is (Σε<sub>i</sub>, Σδ<sub>i</sub>)-DP in total.</p>
<p><b>When it applies:</b> always - also when later queries are chosen after seeing earlier answers,
and also when the budgets themselves are chosen adaptively.</p>
<p><b>When to use it:</b> for a handful of statistics, or with δ<sub>g</sub> = 0, where nothing beats it.
For many statistics it is far too pessimistic.</p>
<p>Sources: Dwork, McSherry, Nissim, Smith (2006); Dwork et al. (2006); Dwork &amp; Roth, Thm 3.16.</p>""",
        lambda c: basic(c.sums, c.delta_g),
        lambda c: (basic_epsilon(c.sums, c.delta_g), None),
        allocates=True, colours=("#000000", "#f0f0f0"),
        assumption="holds for any releases with these ε_i and δ_i, even ones chosen after earlier "
                   "answers"),
    Theorem(
        "advanced", "advanced", "Advanced composition (DRV10 / KOV15 Thm 3.5)",
        "Advanced composition (Dwork-Rothblum-Vadhan, KOV closed form, Steinke): grows like the "
        "square root of k, paid for with extra δ.",
        """
<p>With a little extra δ, the total ε grows like the square root of the number of statistics
instead of linearly: roughly ε·√(2k ln(1/δ′)) for k statistics of ε each.</p>
<p><b>When it applies:</b> the per-statistic budgets are fixed before any answer is released.</p>
<p><b>When to use it:</b> a quick, well-known bound for many small-ε statistics. dpplanner reports the
best of the Dwork-Rothblum-Vadhan form, the Kairouz-Oh-Viswanath heterogeneous closed form and
Steinke's form, and says which one won.</p>
<p>Sources: Dwork, Rothblum, Vadhan (2010); Kairouz, Oh, Viswanath (2015) Thm 3.5.</p>""",
        lambda c: advanced(c.sums, c.delta_g),
        lambda c: (advanced_epsilon(c.sums, c.delta_g), None),
        allocates=True, colours=("#e69f00", "#ffc14d")),
    Theorem(
        "kov", "KOV (homogeneous)", "Optimal homogeneous (KOV15 Thm 3.3)",
        "Optimal composition for k identical queries (Kairouz-Oh-Viswanath). Only applies when every "
        "query has the same (ε, δ).",
        """
<p>The exact smallest total ε when every statistic has the <i>same</i> (ε, δ).</p>
<p><b>When it applies:</b> only when all statistics are identical; otherwise the row says
"n/a" and the tooltip explains why.</p>
<p>Source: Kairouz, Oh, Viswanath (2015) Thm 3.3.</p>""",
        lambda c: kov(c.plan, c.delta_g), _kov_curve,
        allocates=True, colours=("#56b4e9", "#8fd3ff"), dash="dot"),
    Theorem(
        "optimal", "optimal", "Optimal heterogeneous (Murtagh–Vadhan 2016)",
        "Optimal composition for different queries (Murtagh-Vadhan), computed to accuracy η with a "
        "certified bracket. The smallest valid total for a fixed list of (ε_i, δ_i) releases.",
        """
<p>The exact smallest total ε any analysis can prove for a fixed list of (ε<sub>i</sub>, δ<sub>i</sub>)
releases. Computing it exactly is hard in general, so dpplanner computes it to the accuracy η
you choose and shows a <b>certified bracket</b> [lower, upper]: the true optimum lies inside, and
the number reported as the total is the upper end, so it is always safe to use.</p>
<p><b>When it applies:</b> the budgets are fixed in advance (the usual case for a planned release).</p>
<p>Sources: Kairouz, Oh, Viswanath (2015); Murtagh &amp; Vadhan (2016/2018); for plans of many
different ε, the "connect the dots" discretisation of Doroshenko et al. (2022), whose error
dpplanner bounds and subtracts for the lower end.</p>""",
        lambda c: c.optimal(), lambda c: c.optimal(),
        allocates=True, colours=("#0072b2", "#4ea8ff"), evaluated="helper"),
    Theorem(
        "concurrent", "concurrent", "Concurrent composition (Vadhan–Wang 2021; VZ23)",
        "Concurrent composition of interactive mechanisms: the same total as optimal composition for "
        "approximate DP.",
        """
<p>For interactive mechanisms that run at the same time and whose questions may interleave.
For (ε, δ)-DP the total is the same as optimal composition.</p>
<p><b>When to use it:</b> when several analysts (or several interactive tools) query the data in
parallel.</p>
<p>Sources: Vadhan &amp; Wang (2021); Lyu (2022); Vadhan &amp; Zhang (2023).</p>""",
        lambda c: concurrent(c.plan, c.delta_g, float(c.sums.sum_eps[0]), c.optimal()),
        # Lyu22/VZ23: concurrent equals non-interactive composition; the VW21 bound (sum eps) is
        # never smaller than the optimal one wherever both are valid.
        lambda c: c.optimal(),
        allocates=True, colours=("#009e73", "#3fd9a4"), dash="dash", evaluated="helper"),
    Theorem(
        "filter", "filter", "Privacy filter (WRRW23)",
        "Privacy filter: the budget a filter needs when each query's ε_i may be chosen adaptively from "
        "earlier answers.",
        """
<p>When the budget of each next statistic may itself depend on earlier answers, ordinary
composition theorems do not apply. A privacy filter keeps a running account and halts before the
global budget is exceeded. The row shows the global ε a filter needs to admit the whole plan.</p>
<p><b>When to use it:</b> exploratory releases where the plan is not fixed in advance.</p>
<p>Sources: Rogers, Roth, Ullman, Vadhan (2016); Whitehouse, Ramdas, Rogers, Wu (2023).</p>""",
        lambda c: filter_composition(c.sums, c.delta_g),
        lambda c: (filter_epsilon(c.sums, c.delta_g), None),
        allocates=False, colours=("#cc79a7", "#f2a6d4"),
        assumption="holds even when each ε_i is chosen after earlier answers"),
    Theorem(
        "pld", "noise-aware (PLD)", "Noise-aware: privacy loss distributions of the actual Laplace and "
        "Gaussian noise (Koskela et al. 2020; Doroshenko et al. 2022)",
        "Noise-aware composition: composes the privacy loss distributions of the Laplace and Gaussian "
        "noise each statistic actually adds, with a certified bracket. Holds when the noise is exactly "
        "this continuous noise with parameters fixed in advance.",
        """
<p>The generic theorems know each release only by its (ε<sub>i</sub>, δ<sub>i</sub>) and so must assume
the worst mechanism with those parameters. But dpplanner knows the noise it calibrates: a Laplace
release of scale b, a Gaussian release of standard deviation σ. Composing the <b>privacy loss
distributions</b> of that actual noise certifies a much smaller total for the same noise, so at the same
budget every statistic gets less noise: 10–25 % smaller errors on typical plans, up to ~78 % on plans of
Gaussian releases. Custom statistics enter by their (ε<sub>i</sub>, δ<sub>i</sub>).</p>
<p>As for optimal composition, dpplanner reports a <b>certified bracket</b> [lower, upper] of width at
most η, and the total is its upper end. It is never more than the optimal total of the same releases.</p>
<p><b>What it assumes:</b> each release adds exactly this continuous Laplace or Gaussian noise, with its
parameters (sensitivity, ε<sub>i</sub>, δ<sub>i</sub>) fixed before any data is seen. Discrete or snapped
noise (e.g. floating-point-safe implementations), parameters chosen adaptively, or amplification by
sampling need the generic rows, which hold for any release with those (ε<sub>i</sub>, δ<sub>i</sub>);
with a population size set, dpplanner composes every release by its (ε<sub>i</sub>, δ<sub>i</sub>).</p>
<p>Sources: Balle &amp; Wang (2018) for the Gaussian's exact privacy curve; Koskela, Jälkö, Honkela (2020)
and Doroshenko, Ghazi, Kamath, Kumar, Manurangsi (2022) for composing privacy loss distributions.</p>""",
        lambda c: pld_composition(c.plan, c.delta_g, c.eta, c.cancel, c.progress, c.optimal), pld_curve,
        allocates=True, colours=("#d55e00", "#ff8c4d"), evaluated="here", remembers_total=True,
        assumption="holds only if each statistic adds exactly the continuous Laplace or Gaussian "
                   "noise dpplanner calibrates for it, with every parameter fixed before the data "
                   "are seen", generic=False),
    Theorem(
        "zcdp", "zCDP (as OpenDP / Tumult)", "Zero-concentrated DP: ρ = Σρ_i converted with "
        "Canonne–Kamath–Steinke 2020",
        "zCDP accounting as OpenDP and Tumult do it: each Gaussian costs ρ = Δ²/2σ², each pure-ε release "
        "ε²/2; the total ρ is converted to (ε, δ). For comparison with those tools.",
        """
<p>Zero-concentrated differential privacy (zCDP) measures each release by a single number ρ: a Gaussian
release of sensitivity Δ and standard deviation σ costs ρ = Δ²/(2σ²), a release that is ε-DP costs
ε²/2. The ρ's simply add up, and the total ρ is converted to (ε, δ) with the tight conversion of
Canonne, Kamath &amp; Steinke (2020), rounded up. Custom releases with δ<sub>i</sub> &gt; 0 count ε<sub>i</sub>²/2
and their δ<sub>i</sub> is added to the total δ.</p>
<p><b>Why it is here:</b> this is what OpenDP and Tumult Analytics would certify for the same noise, so
users who know those tools can compare. It is valid, but for Laplace releases it is loose: ε²/2 per
release charges more than the release costs; the noise-aware (PLD) row is never worse.</p>
<p>Sources: Bun &amp; Steinke (2016); Canonne, Kamath &amp; Steinke (2020), Prop. 12 / Cor. 13.</p>""",
        lambda c: zcdp_composition(c.plan, c.delta_g), zcdp_curve,
        allocates=False, colours=("#7f7f7f", "#b0b0b0"), dash="dash", evaluated="here",
        assumption="holds for the Gaussian and pure-ε noise dpplanner calibrates, accounted in zCDP "
                   "as OpenDP and Tumult do it", generic=False),
)

BY_NAME: dict[str, Theorem] = {t.name: t for t in REGISTRY}
#: The theorem of a new plan; and of a file that names none (written before "pld" existed).
DEFAULT_THEOREM = "pld"
LEGACY_THEOREM = "optimal"
#: The generic optimal composition: pld's curve never exceeds its curve.
OPTIMAL = "optimal"
#: What the privacy profile brackets (the plan's actual noise): drawn in its colour.
PROFILE_THEOREM = "pld"
#: Names in display order; ties in ``best`` go to the earlier one.
THEOREMS: tuple[str, ...] = tuple(t.name for t in REGISTRY)
#: The theorems redistribution can target.
ALLOCATION_THEOREMS: tuple[str, ...] = tuple(t.name for t in REGISTRY if t.allocates)


def theorem(name: str) -> Theorem:
    """The registry entry called ``name``, or ValueError listing the known ones."""
    if not isinstance(name, str) or name not in BY_NAME:
        raise ValueError(f"unknown theorem {name!r}; known theorems are {', '.join(THEOREMS)}")
    return BY_NAME[name]


def validate_theorems(names) -> tuple[str, ...]:
    if isinstance(names, (str, bytes)) or not hasattr(names, "__len__"):
        raise ValueError(f"theorems must be a sequence of theorem names, got {names!r}")
    return tuple(theorem(n).name for n in names)
