"""The registry of composition theorems: the one place that says which theorems exist.

Every list, label, colour, help page, CLI choice, report row and dispatch loops over ``REGISTRY``.
Adding a theorem is one ``Theorem`` entry here plus its mathematics in a module of its own: a
``compose`` function (ComposeInputs -> Composition) and a ``curve`` function (CurveInputs ->
(upper, lower or None), arrays over ``inputs.ks``, optionally with a third element: per point, ""
where it met eta, else why not; without it the curve says only where the width exceeds eta). See
docs/development/architecture.md, "Adding a theorem".
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .theorem_inputs import ComposeInputs, CurveInputs
    from .types import Composition

CurveArrays = tuple  # (upper, lower or None) or (upper, lower or None, notes): see the module doc


_DEFERRED: set[str] = set()      # the modules of the theorems' mathematics


def _deferred(module: str, name: str) -> Callable:
    """Function ``name`` of the engine's ``module``, imported at its first call: the registry's
    words are read without the mathematics (the window's first paint imports no theorem, and the
    noise-aware machinery imports scipy.fft)."""
    _DEFERRED.add(module)

    def call(*args, **kwargs):
        return getattr(importlib.import_module(module, __package__), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    return call


advanced, advanced_epsilon = _deferred(".advanced", "advanced"), _deferred(".advanced", "advanced_epsilon")
basic, basic_epsilon = _deferred(".basic", "basic"), _deferred(".basic", "basic_epsilon")
concurrent, kov = _deferred(".concurrent", "concurrent"), _deferred(".kov", "kov")
filter_composition = _deferred(".filters", "filter_composition")
filter_epsilon = _deferred(".filters", "filter_epsilon")
pld_composition, pld_curve, zcdp_composition, zcdp_curve = (
    _deferred(".mechanisms", name)
    for name in ("pld_composition", "pld_curve", "zcdp_composition", "zcdp_curve"))


@dataclass(frozen=True)
class Theorem:
    """One composition theorem and everything the program says about it.

    ``help``: what it says, when it holds and when to use it, in Markdown for the user guide's page
    docs/guide/theorems.md (written from here by tools/theorem_page.py; the window's Help shows
    that page; links are relative to it).
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
    help: str
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
Add up the budgets: releasing statistics that are (ε_1, δ_1), …, (ε_k, δ_k)-differentially
private is (Σε_i, Σδ_i)-DP in total.

**When it holds:** always - also when later queries are chosen after seeing earlier answers, when
the budgets themselves are chosen adaptively, and for interleaved interactive releases.

**When to use it:** for a handful of statistics, or with δ_g = 0, where nothing beats it. For many
statistics it is far too pessimistic.

Sources: Dwork, McSherry, Nissim, Smith (2006); Dwork et al. (2006); Dwork & Roth, Thm 3.16.
""",
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
With a little extra δ, the total ε grows like the square root of the number of statistics instead
of linearly: roughly ε·√(2k ln(1/δ′)) for k statistics of ε each. dpplanner reports the best of
the Dwork-Rothblum-Vadhan form, its refined (tanh) form, the Kairouz-Oh-Viswanath heterogeneous
closed form (Thm 3.5), Steinke's zCDP route and basic composition, and says which one won.

**When it holds:** the (ε_i, δ_i) are fixed before the first release; it needs δ_g > 0.

**When to use it:** a quick, well-known bound for many statistics with small ε_i.

Sources: Dwork, Rothblum, Vadhan (2010); Kairouz, Oh, Viswanath (2015) Thm 3.5.
""",
        lambda c: advanced(c.sums, c.delta_g),
        lambda c: (advanced_epsilon(c.sums, c.delta_g), None),
        allocates=True, colours=("#e69f00", "#ffc14d")),
    Theorem(
        "kov", "KOV (homogeneous)", "Optimal homogeneous (KOV15 Thm 3.3)",
        "Optimal composition for k identical queries (Kairouz-Oh-Viswanath). Only applies when every "
        "query has the same (ε, δ).",
        """
The exact smallest total ε when every statistic has the *same* (ε, δ) (the continuous form of the
theorem).

**When it holds:** only when all releases are identical, with their (ε, δ) fixed in advance;
otherwise the row says "n/a" and its tooltip says why.

**When to use it:** repeated identical queries.

Source: Kairouz, Oh, Viswanath (2015) Thm 3.3.
""",
        lambda c: kov(c.plan, c.delta_g), _kov_curve,
        allocates=True, colours=("#56b4e9", "#8fd3ff"), dash="dot"),
    Theorem(
        "optimal", "optimal", "Optimal heterogeneous (Murtagh–Vadhan 2016)",
        "Optimal composition for different queries (Murtagh-Vadhan), computed to accuracy η with a "
        "certified bracket. The smallest valid total for a fixed list of (ε_i, δ_i) releases.",
        """
The exact smallest total ε any analysis can prove for a fixed list of (ε_i, δ_i) releases.
Computing it exactly is hard in general, so dpplanner computes it to the accuracy η you choose and
shows a **certified bracket** [lower, upper]: the true optimum lies inside, and the number
reported as the total is the upper end, so it is always safe to use. It is never worse than basic,
advanced or KOV.

**When it holds:** the (ε_i, δ_i) are fixed in advance (the usual case for a planned release). It
holds for any mechanism with those parameters, whatever noise it adds.

**When to use it:** a planned release whose noise is not exactly the noise dpplanner calibrates.

Sources: Kairouz, Oh, Viswanath (2015); Murtagh & Vadhan (2016/2018); for plans of many different
ε, the "connect the dots" discretisation of Doroshenko et al. (2022), whose error dpplanner bounds
and subtracts for the lower end.
""",
        lambda c: c.optimal(), lambda c: c.optimal_curve(),
        allocates=True, colours=("#0072b2", "#4ea8ff"), evaluated="helper"),
    Theorem(
        "concurrent", "concurrent", "Concurrent composition (Vadhan–Wang 2021; VZ23)",
        "Concurrent composition of interactive mechanisms: the same total as optimal composition for "
        "approximate DP.",
        """
For interactive mechanisms that run at the same time and whose questions may interleave. For
(ε, δ)-DP the total is the same as optimal composition: the optimal result carries over to
concurrent composition.

**When it holds:** interactive mechanisms run side by side, with their privacy parameters fixed in
advance.

**When to use it:** when several analysts (or several interactive query systems) query the data at
the same time.

Sources: Vadhan & Wang (2021); Lyu (2022); Vadhan & Zhang (2023).
""",
        lambda c: concurrent(c.plan, c.delta_g, float(c.sums.sum_eps[0]), c.optimal()),
        # Lyu22/VZ23: concurrent equals non-interactive composition; the VW21 bound (sum eps) is
        # never smaller than the optimal one wherever both are valid.
        lambda c: c.optimal_curve(),
        allocates=True, colours=("#009e73", "#3fd9a4"), dash="dash", evaluated="helper"),
    Theorem(
        "filter", "filter", "Privacy filter (WRRW23)",
        "Privacy filter: the budget a filter needs when each query's ε_i may be chosen adaptively from "
        "earlier answers.",
        """
When the budget of each next statistic may itself depend on earlier answers, ordinary composition
theorems do not apply. A privacy filter keeps a running account and halts before the global budget
is exceeded. The row shows the global ε a filter must be given so that it admits the whole plan
(the best of the basic, Rogers-Roth-Ullman-Vadhan and Whitehouse-Ramdas-Rogers-Wu filters).

**When it holds:** with no assumption about the parameters: each (ε_i, δ_i) may be chosen after
seeing earlier answers.

**When to use it:** an exploratory analysis where you decide the next budget as you go.

Sources: Rogers, Roth, Ullman, Vadhan (2016); Whitehouse, Ramdas, Rogers, Wu (2023).
""",
        lambda c: filter_composition(c.sums, c.delta_g),
        lambda c: (filter_epsilon(c.sums, c.delta_g), None),
        allocates=False, colours=("#cc79a7", "#f2a6d4"),
        assumption="holds even when each ε_i is chosen after earlier answers"),
    Theorem(
        "pld", "noise-aware (PLD)", "Noise-aware: privacy loss distributions of the actual Laplace and "
        "Gaussian noise (Koskela et al. 2020; Doroshenko et al. 2022)",
        "Noise-aware composition: composes the privacy loss distributions of the Laplace and Gaussian "
        "noise each statistic actually adds, with a certified bracket. Holds when each release adds exactly "
        "the noise it is planned with (OpenDP's discrete noise, or the continuous noise) with parameters "
        "fixed in advance.",
        """
The generic theorems know each release only by its (ε_i, δ_i) and so must assume the worst
mechanism with those parameters. But dpplanner knows the noise it calibrates: a Laplace release of
scale b, a Gaussian release of standard deviation σ. Composing the **privacy loss distributions**
of that actual noise certifies a smaller total for the same noise, so at the same budget every
statistic gets less noise and a smaller error (how much smaller on the shipped examples:
[Performance](../performance.md)). Custom statistics enter by their (ε_i, δ_i).

As for optimal composition, dpplanner reports a **certified bracket** [lower, upper] of width at
most η, and the total is its upper end. It is never more than the optimal total of the same
releases.

**When it holds:** each release adds exactly the noise it is planned with, with its parameters
(bounds, ε_i, δ_i) fixed before any answer is seen. A statistic says which noise that is: OpenDP
0.16's discrete noise (the default for new statistics, and what an exported release script adds:
[From plan to release](release.md)) or the idealised continuous noise. If your implementation adds
noise some other way, or chooses parameters adaptively, use a generic row instead: they hold for
any release with those (ε_i, δ_i). With a population size set (amplification by sampling), every release is composed by
its amplified (ε_i, δ_i), so this row equals optimal there. Each statistic still shows its own
(ε_i, δ_i), what the release satisfies on its own; only the total changes.

**When to use it:** the default for new plans: the smallest valid total when the noise is as
planned.

Sources: Balle & Wang (2018) for the Gaussian's exact privacy curve; Koskela, Jälkö, Honkela (2020)
and Doroshenko, Ghazi, Kamath, Kumar, Manurangsi (2022) for composing privacy loss
distributions.
""",
        lambda c: pld_composition(c.plan, c.delta_g, c.eta, c.cancel, c.progress, c.optimal,
                                  c.upper_only, c.upper_rung, c.lower_ahead),
        pld_curve,
        allocates=True, colours=("#d55e00", "#ff8c4d"), evaluated="here", remembers_total=True,
        assumption="holds only if each statistic adds exactly the noise it is planned with (OpenDP's "
                   "discrete noise, or the continuous noise), with every parameter fixed before the "
                   "data are seen", generic=False),
    Theorem(
        "zcdp", "zCDP (as OpenDP / Tumult)", "Zero-concentrated DP: ρ = Σρ_i converted with "
        "Canonne–Kamath–Steinke 2020",
        "zCDP accounting as OpenDP and Tumult do it: each Gaussian costs ρ = Δ²/2σ², each pure-ε release "
        "ε²/2; the total ρ is converted to (ε, δ). For comparison with those tools.",
        """
Zero-concentrated differential privacy (zCDP) measures each release by a single number ρ: a
Gaussian release of sensitivity Δ and standard deviation σ costs ρ = Δ²/(2σ²), a release that is
ε-DP costs ε²/2. The ρ's simply add up, and the total ρ is converted to (ε, δ) with the tight
conversion of Canonne, Kamath & Steinke (2020), rounded up. Custom releases with δ_i > 0 count
ε_i²/2 and their δ_i is added to the total δ.

**When it holds:** as for the noise-aware row: each release adds exactly this noise, with its
parameters fixed in advance.

**When to use it:** to compare with what OpenDP and Tumult Analytics would certify for the same
noise. It is valid, but loose for Laplace releases (ε²/2 per release charges more than the
release costs); the noise-aware row is never worse.

Sources: Bun & Steinke (2016); Canonne, Kamath & Steinke (2020), Prop. 12 / Cor. 13.
""",
        lambda c: zcdp_composition(c.plan, c.delta_g), zcdp_curve,
        allocates=False, colours=("#7f7f7f", "#b0b0b0"), dash="dash", evaluated="here",
        assumption="holds for the Gaussian and pure-ε noise dpplanner calibrates, accounted in zCDP "
                   "as OpenDP and Tumult do it", generic=False),
)

BY_NAME: dict[str, Theorem] = {t.name: t for t in REGISTRY}
#: The theorems other engine modules treat apart (each module's own name aside): named once, here.
#: The generic optimal composition: pld's curve never exceeds its curve.
OPTIMAL = "optimal"
#: The exact homogeneous theorem: it applies only while the queries are copies of the first.
KOV = "kov"
#: Advanced composition: the least of its closed forms, which its detail names.
ADVANCED = "advanced"
#: The noise-aware theorems: pld's ladder of lattices, zCDP's rho of the actual noise.
PLD, ZCDP = "pld", "zcdp"
#: Optimal's concurrent twin: the same lattice engine.
CONCURRENT = "concurrent"
#: The theorem of a new plan; and of a file that names none (written before "pld" existed).
DEFAULT_THEOREM = PLD
LEGACY_THEOREM = OPTIMAL
#: What the privacy profile brackets (the plan's actual noise): drawn in its colour.
PROFILE_THEOREM = PLD
#: Names in display order; ties in ``best`` go to the earlier one.
THEOREMS: tuple[str, ...] = tuple(t.name for t in REGISTRY)
#: The theorems redistribution can target.
ALLOCATION_THEOREMS: tuple[str, ...] = tuple(t.name for t in REGISTRY if t.allocates)


def import_mathematics() -> None:
    """Import every theorem's mathematics now, not at its first call: in a process about to
    compose (the engine process at its start)."""
    for module in sorted(_DEFERRED):
        importlib.import_module(module, __package__)


def theorem(name: str) -> Theorem:
    """The registry entry called ``name``, or ValueError listing the known ones."""
    if not isinstance(name, str) or name not in BY_NAME:
        raise ValueError(f"unknown theorem {name!r}; known theorems are {', '.join(THEOREMS)}")
    return BY_NAME[name]


def validate_theorems(names) -> tuple[str, ...]:
    if isinstance(names, (str, bytes)) or not hasattr(names, "__len__"):
        raise ValueError(f"theorems must be a sequence of theorem names, got {names!r}")
    return tuple(theorem(n).name for n in names)
