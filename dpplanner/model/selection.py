"""Selecting the groups of a grouped statistic whose keys are not known in advance.

When the keys (e.g. the occupations that occur) are not public, releasing a cell for every key
present in the data would reveal that some individual holds a rare key. The release then selects
the keys privately, with Laplace thresholding (Korolova, Kenthapadi, Mishra & Ntoulas 2009; the
partition selection of Desfontaines, Voss, Gipson & Mandayam 2022 and of Google's libraries):

    for every key present in the data, count the distinct individuals who hold it (each
    individual counted in at most L0 keys), add Laplace noise of scale b, and release the key's
    cell only if the noisy count is at least the threshold tau.

Its privacy, derived: neighbouring datasets differ by one individual, who holds at most K keys, K =
L0 (added or removed) or 2 L0 (replaced: the old individual's keys and the new one's). Each of
these K keys' distinct-individual counts moves by at most 1, the others not at all.
- A key present on both sides: whether it is released is a function of its noisy count, a Laplace
  release of a count moved by at most 1: pure (1/b)-DP.
- A key present on one side only (held by this individual alone) has count 1 there and no
  cell at all on the other side: it is released with probability
  P(1 + Lap(b) >= tau) = exp(-(tau - 1)/b) / 2 (for tau >= 1), and never on the other side.
  Every event of the released output is then bounded by e^0 times the other side's probability
  plus this probability (the cell's value included, as it is only released with the key).
Composing the K keys (independent noises, basic composition): the selection is
(K / b, K exp(-(tau - 1)/b) / 2)-DP. Given its budget (eps_s, delta_s) the plan takes

    b = K / eps_s,   tau = 1 + b ln(K / (2 delta_s)),

so that K / b = eps_s and K exp(-(tau - 1)/b) / 2 = delta_s exactly (b and tau are then rounded
up, which only lowers both). The values of the selected cells are noised as for known keys, with
the rest of the statistic's budget, and the two parts compose to (eps_s + eps_v, delta_s +
delta_v) (basic composition): the statistic's (eps_i, delta_i).

With OpenDP's noise (the release script's make_laplace_threshold) the noise is discrete Laplace,
P(Z = z) proportional to p^|z| with p = exp(-1/b), on integer counts, and a key is released when its
noisy count is at least an integer threshold T. A shift of 1 still costs exactly 1/b; a key held by
one individual alone is released with probability P(1 + Z >= T) = P(Z >= T - 1) = p^(T-1) / (1 + p)
(P(Z >= m) = p^m / (1 + p) for m >= 0), so the plan takes the least integer T with
K p^(T-1) / (1 + p) <= delta_s. (OpenDP 0.16's own privacy map for it gives K p^T / (1 + p), one
step lower than this probability, which sampling its output confirms (opendp/opendp issue 2922:
the mass at the threshold is released but not counted): the plan's delta_s is the bound, and
the script checks that OpenDP's map is within it.)

A group held by tau individuals is released about half of the time; far fewer are almost never
released, far more almost always: "groups with fewer than about tau individuals will be suppressed".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from .display import IDEAL


@dataclass(frozen=True)
class Selection:
    """The selection's budget (eps_s, delta_s), the keys one individual moves (K), the Laplace
    scale b on the distinct-individual counts and the threshold tau."""

    epsilon: float
    delta: float
    keys: int
    scale: float
    threshold: float
    #: OpenDP's discrete Laplace on integer counts, whose threshold is an integer (an int here,
    #: the very number the release script passes to OpenDP).
    discrete: bool = False

    def sentence(self, unit: str) -> str:
        """What the depositor should know, in words."""
        tau = str(self.threshold) if self.discrete else f"{self.threshold:.4g}"
        noise = "OpenDP's discrete Laplace noise" if self.discrete else f"Laplace ({IDEAL}) noise"
        return (f"Groups with fewer than about {math.ceil(self.threshold):,} {plural(unit)} will be "
                f"suppressed: each group is released only if its count of distinct {plural(unit)}, plus "
                f"{noise} of scale {self.scale:.4g}, reaches the threshold τ = {tau} "
                f"(ε_s = {self.epsilon:.4g}, δ_s = {self.delta:.3g}).")


def plural(unit: str) -> str:
    """"person" -> "persons" (the plan's own word, simply pluralised)."""
    unit = unit.strip() or "individual"
    if unit.endswith(("s", "x", "sh", "ch")):
        return unit + "es"
    if unit.endswith("y") and unit[-2:-1] not in "aeiou":
        return unit[:-1] + "ies"
    return unit + "s"


def selection(epsilon: float, delta: float, keys: int, discrete: bool = False) -> Selection:
    """The selection of budget (epsilon, delta) when one individual moves ``keys`` keys (K), with
    continuous Laplace noise or (``discrete``) OpenDP's discrete Laplace and an integer threshold."""
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"selecting the groups needs an epsilon > 0, got {epsilon!r}")
    if not 0.0 < delta < 1.0:
        raise ValueError("selecting the groups needs a delta > 0: give the statistics a share of the "
                         "global delta (delta split > 0)")
    b = keys / epsilon
    if keys / b > epsilon:             # b rounded down by the division: raise it by an ulp
        b = math.nextafter(b, math.inf)
    if discrete:
        return Selection(epsilon, delta, keys, b, integer_threshold(b, keys, delta), discrete=True)
    tau = 1.0 + b * math.log(keys / (2.0 * delta))
    tau = math.nextafter(tau, math.inf) if tau > 1.0 else 1.0
    # the roundings of log, exp and the products are far below 1e-12 relative: checked with that
    # margin, tau raised by growing steps until it holds (a few at most)
    step = math.ulp(tau)
    for _ in range(200):
        if keys * 0.5 * math.exp(-(tau - 1.0) / b) <= delta * (1 - 1e-12):
            break
        tau += step
        step *= 2.0
    return Selection(epsilon, delta, keys, b, tau)


def integer_threshold(b: float, keys: int, delta: float) -> int:
    """The least integer T >= 1 with K p^(T-1) / (1 + p) <= delta, p = exp(-1/b) (see above),
    checked with the same 1e-12 relative margin for the roundings of exp and log."""
    p = math.exp(-1.0 / b)
    start = b * math.log(keys / (delta * (1.0 + p)))
    if not start < 2.0 ** 62:          # OpenDP takes the threshold as a 64-bit integer
        raise ValueError(f"selecting the groups at epsilon {keys / b!r} needs a threshold beyond "
                         "2^62 individuals: give the selection a larger share of epsilon")
    tau = 1 + max(0, math.ceil(start))
    for _ in range(64):                # (a step or two at most: start is within roundings)
        if keys * math.exp(-(tau - 1) / b) / (1.0 + p) <= delta * (1 - 1e-12):
            return tau
        tau += 1
    raise ArithmeticError("the selection's integer threshold did not settle")


def split(epsilon: float, delta: float, share: float, gaussian: bool) -> tuple[float, float, float, float]:
    """(eps_values, delta_values, eps_selection, delta_selection) of a statistic's (eps_i, delta_i)
    when ``share`` of it selects the groups: eps_s = share eps_i, eps_v the rest; the selection
    takes all of delta_i when the values are Laplace (pure), ``share`` of it when they are
    Gaussian. Each part is rounded down so that the parts add up to at most (eps_i, delta_i)."""
    eps_s = epsilon * share
    eps_v = _below(epsilon - eps_s, epsilon, eps_s)
    if gaussian:
        delta_s = delta * share
        delta_v = _below(delta - delta_s, delta, delta_s)
    else:
        delta_s, delta_v = delta, 0.0
    return eps_v, delta_v, eps_s, delta_s


def _below(x: float, total: float, other: float) -> float:
    """x lowered by ulps until x + other <= total exactly (x = total - other, rounded)."""
    while x > 0 and Fraction(x) + Fraction(other) > Fraction(total):
        x = math.nextafter(x, 0.0)
    return x
