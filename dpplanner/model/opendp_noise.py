"""The noise OpenDP 0.16 adds for a statistic planned with ``noise = "opendp"``, and its error.

OpenDP never adds continuous noise. On an integer-valued query (counts, histograms, quantile
cells, sums of whole numbers) it adds discrete Laplace noise P(x) ~ exp(-|x| / t) or discrete
Gaussian noise P(x) ~ exp(-x^2 / 2 sigma^2) on the integers. On a real-valued query (a float sum)
it rounds the value to the nearest multiple of 2^k and adds the same integer noise in units of
2^k; its map charges the rounding as d_in + 2^k. The plan picks k = floor(log2 D) - 40 for a
certified sensitivity D, so the margin costs 2^-40 of the scale, and the noised lattice values of
neighbouring datasets differ by at most S = ceil(D / 2^k) + 1 lattice units.

The engine composes exactly that noise (tags "discrete-laplace:S" / "discrete-gaussian:S") and
calibrates it: t = ``engine.discrete_laplace_scale(eps_i, S)``, sigma =
``engine.discrete_gaussian_sigma(eps_i, delta_i, S)`` in lattice units; the scale of the noised
query is that times 2^k, exactly what the release script passes to OpenDP. OpenDP's map then gives
at most (S 2^k) / (t 2^k) = eps_i (Laplace) and rho_i = S^2 / (2 sigma^2) (Gaussian, OpenDP
certifies zCDP), up to OpenDP's own rounding, which the script absorbs by raising the scale.

Errors at confidence 1 - beta (every coordinate at once, union bound over m coordinates):
- discrete Laplace, exactly: P(|X| > j) = 2 a^{j+1} / (1 + a), a = e^{-1/t} (j >= 0 an integer);
- discrete Gaussian: P(|X| > j) <= 2 Phi(-j / sigma), since sum_{x > j} e^{-x^2/2s^2} is at most
  the integral from j and the normaliser is at least sqrt(2 pi) sigma (Poisson summation);
- a CDF point (a sum of J <= m cells' noises): Chernoff with the discrete Laplace moment
  generating function E e^{uX} = (1 - a)^2 / ((1 - a e^u)(1 - a e^-u)); the discrete Gaussian is
  sigma^2-subgaussian (Canonne, Kamath & Steinke 2020), so P(|S_J| >= s) <= 2 e^{-s^2 / 2 m sigma^2}.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from dpplanner import engine
from dpplanner.engine.memo import Memo

from .field_rules import MAX_STATISTICS
from .opendp_sensitivity import CERTIFICATIONS, Certified

#: The lattice of a real-valued query sits this many binary orders below its sensitivity.
LATTICE_BITS = 40


@dataclass(frozen=True)
class OpenDPNoise:
    """One statistic's noise as the release script adds it.

    ``k`` is the lattice exponent (None: integer query, lattice 1); ``shift`` S the most the noised
    lattice value moves between neighbours; ``lattice_scale`` the engine's t or sigma in lattice
    units and ``scale`` the same in the noised query's units (what OpenDP is given). ``rho`` is
    the Gaussian's zCDP parameter S^2 / (2 sigma^2) rounded up (what OpenDP's map certifies).
    """

    certified: Certified
    gaussian: bool
    k: Optional[int]
    shift: int
    lattice_scale: float
    scale: float
    epsilon: float
    delta: float
    rho: Optional[float]
    #: The engine's tag for the release (engine.MECHANISMS, "*C" for C cells; see opendp_noise).
    tag: str = ""

    @property
    def lattice(self) -> float:
        return 1.0 if self.k is None else math.ldexp(1.0, self.k)

    @property
    def released_scale(self) -> float:
        """The noise scale in the released statistic's units (a mean's is the sum's over n)."""
        return self.scale / self.certified.divisor

    @property
    def label(self) -> str:
        return "discrete Gaussian" if self.gaussian else "discrete Laplace"

    def lattice_text(self) -> str:
        return "integers" if self.k is None else f"multiples of 2^{self.k}"


def lattice_of(cert: Certified, gaussian: bool) -> tuple[Optional[int], int]:
    """(k, S): the lattice exponent (None for integer queries) and the shift in lattice units."""
    sens = cert.l2 if gaussian else cert.l1
    if cert.integer:
        return None, int(sens)
    k = math.frexp(sens)[1] - 1 - LATTICE_BITS     # 2^k <= sens 2^-40 < 2^(k+1)
    return k, math.ceil(Fraction(sens) / Fraction(2) ** k) + 1


def opendp_noise(cert: Certified, gaussian: bool, epsilon: float, delta: float) -> OpenDPNoise:
    """The noise for a release calibrated to (epsilon, delta) (functioning values) when one
    individual moves ``cert.cells`` cells by at most one cell's sensitivity each (the shift S
    lattice units: opendp_sensitivity, contributions.py). ValueError from the engine when it
    cannot be calibrated (the message says why).

    - cells of one number (or a real-valued query, whose lattice needs per-cell margins): C cells
      of shift S, composed one by one by the engine ("discrete-laplace:S*C": t =
      discrete_laplace_scale(eps, C S), so C S / t <= eps; "discrete-gaussian:S*C": sigma =
      discrete_gaussian_sigma(eps, delta, S, C)). When C cells at full shift exceed the whole
      release's bound (slack) this is still sound, only noisier than needed.
    - otherwise (whole numbers): Laplace with no slack: C cells each pure (S / t <= eps / C),
      "eps-delta*C"; with slack: one pure release of the whole L1 bound, t =
      discrete_laplace_scale(eps, L1), "eps-delta". Gaussian: the whole release's squared L2
      bound through zCDP (a discrete Gaussian vector of that L2 is (L2^2 / 2 sigma^2)-zCDP,
      Canonne, Kamath & Steinke 2020): sigma = zcdp_gaussian_sigma(eps, delta, L2^2), "eps-delta".
    """
    k, shift = lattice_of(cert, gaussian)
    how, tag = _recipe(cert, gaussian, shift)
    t = _calibrated(how, cert, shift, epsilon, delta)
    if how == "gaussian-cells":
        rho = _up(cert.cells * Fraction(shift) ** 2 / (2 * Fraction(t) ** 2))
    elif how == "gaussian-whole":
        rho = _up(cert.whole_l2_squared / (2 * Fraction(t) ** 2))
    else:
        rho, delta = None, 0.0
    scale = t if k is None else math.ldexp(t, k)
    return OpenDPNoise(cert, gaussian, k, shift, t, scale, epsilon, delta, rho, tag)


def opendp_tags(releases) -> list[str]:
    """The engine tag of each (cert, gaussian, epsilon, delta): ``opendp_noise``'s, or "eps-delta"
    where it raises ValueError (the noise cannot be calibrated there), without building the rest
    of it. A plan asks for its tags up to three times per edit (its pins' check, its allocation's
    request, its totals'), most of them for releases the edit left alone: each tag is remembered
    (``_TAGS``), each recipe too (``_RECIPES``). Of those not remembered, the one-cell discrete
    Gaussians are calibrated together (one vectorised pass with the same checks and bits as one by
    one, remembered by the engine for the totals), the others one by one, and so is each of the
    Gaussians when their pass is refused (to find which cannot be calibrated)."""
    tags = [_remembered(_TAGS, cert, (gaussian, e, d)) for cert, gaussian, e, d in releases]
    todo = [(i, (cert, gaussian, e, d), _recipe_of(cert, gaussian))
            for i, ((cert, gaussian, e, d), tag) in enumerate(zip(releases, tags)) if tag is None]
    alone = {i: (e, d, shift) for i, (cert, _g, e, d), (how, _tag, shift) in todo
             if how == "gaussian-cells" and cert.cells == 1}
    if alone:
        try:
            engine.discrete_gaussian_sigmas(*zip(*alone.values()))
        except ValueError:
            alone = {}
    for i, (cert, _g, e, d), (how, tag, shift) in todo:
        if i not in alone:
            try:
                _calibrated(how, cert, shift, e, d)
            except ValueError:
                tag = "eps-delta"
        tags[i] = tag
    _TAGS.put_all(((id(cert), *rest), (cert, tags[i])) for i, (cert, *rest), _recipe in todo)
    return tags


#: Tags found, by (cert, gaussian, epsilon, delta); recipes, by (cert, gaussian). Both are pure
#: functions of those values. The cert is keyed by its identity and kept in the value: while an
#: entry is kept, so is its cert, so no other object has its id (``_remembered`` checks it is the
#: same one). Certifications come from opendp_sensitivity's memory, the same object for the same
#: statistic; hashing one by value (its Fractions) was a third of a warm plan's tags. Bounded (a
#: plan edited for hours keeps at most this many, or its size: ``hold_plan``) and cleared by
#: ``engine.memo.forget`` (the benchmarks' cold runs, the tests' uncached path).
_TAGS = Memo(1 << 14)
_RECIPES = Memo(1 << 12)


def hold_plan(statistics: int) -> None:
    """Let the certifications, recipes and tags be kept for a whole plan of this many statistics.
    A plan's are asked for in one pass, in plan order, up to three times per edit; a memory that
    drops the least recently used and holds fewer than the pass has dropped each one before it is
    asked for again (10,000 distinct statistics: all recomputed every pass). The memories grow
    to at most MAX_STATISTICS entries (a plan's limit), so they stay bounded."""
    n = min(int(statistics), MAX_STATISTICS)
    for memo in (CERTIFICATIONS, _RECIPES, _TAGS):
        memo.size = max(memo.size, n)


def _remembered(memo: Memo, cert: Certified, rest: tuple):
    known = memo.get((id(cert), *rest))
    return known[1] if known is not None and known[0] is cert else None


def _recipe_of(cert: Certified, gaussian: bool) -> tuple[str, str, int]:
    """(how, tag, shift) of ``_recipe`` with ``lattice_of``'s shift, remembered."""
    known = _remembered(_RECIPES, cert, (gaussian,))
    if known is None:
        shift = lattice_of(cert, gaussian)[1]
        known = (*_recipe(cert, gaussian, shift), shift)
        _RECIPES.put((id(cert), gaussian), (cert, known))
    return known


def _recipe(cert: Certified, gaussian: bool, shift: int) -> tuple[str, str]:
    """(how the noise is calibrated, the engine's tag) for ``opendp_noise``: "gaussian-cells"
    (discrete Gaussian cells), "gaussian-whole" (the whole release's L2 through zCDP),
    "laplace-cells" (discrete Laplace of C S) or "laplace-whole" (of the whole L1 bound)."""
    if gaussian:
        if cert.scalar and (cert.exact or not cert.integer):
            return "gaussian-cells", _cells("discrete-gaussian:%d" % shift, cert.cells)
        return "gaussian-whole", "eps-delta"
    if cert.exact or not cert.integer:
        tag = "discrete-laplace:%d" % shift if cert.scalar else "eps-delta"
        return "laplace-cells", _cells(tag, cert.cells)
    return "laplace-whole", "eps-delta"


def _calibrated(how: str, cert: Certified, shift: int, epsilon: float, delta: float) -> float:
    """The engine's t or sigma (lattice units) for ``_recipe``'s ``how``; ValueError where none."""
    if how == "gaussian-cells":
        try:
            return engine.discrete_gaussian_sigma(epsilon, delta, shift, cert.cells)
        except ValueError:
            from dpplanner.engine.validation import DISCRETE_MIN_EPSILON, least_epsilon
            least = least_epsilon(_cells("discrete-gaussian:%d" % shift, cert.cells), delta)
            if not DISCRETE_MIN_EPSILON <= epsilon < least:
                raise
            # (the engine's words name its sigma and shift: say what the user can change)
            raise ValueError(f"at ε {epsilon:.3g} and δ {delta:.3g} its OpenDP discrete Gaussian noise would "
                             f"need σ above 2^57 steps of its lattice (a shift of {shift} steps), more than "
                             f"the engine accounts; it needs ε {least:.3g} or more: raise its ε or the "
                             "global ε, narrow its bounds, or give it Laplace noise") from None
    if how == "gaussian-whole":
        return engine.zcdp_gaussian_sigma(epsilon, delta, cert.whole_l2_squared)
    if how == "laplace-cells":
        return engine.discrete_laplace_scale(epsilon, cert.cells * shift)
    return engine.discrete_laplace_scale(epsilon, int(cert.whole_l1))


def _cells(tag: str, cells: int) -> str:
    return tag if cells == 1 else f"{tag}*{cells}"


def _up(exact: Fraction) -> float:
    r = float(exact)
    return r if Fraction(r) >= exact else math.nextafter(r, math.inf)


# --- errors ---------------------------------------------------------------------------------

def error(noise: OpenDPNoise, beta: float, cumulative: bool = False, groups: int = 1) -> float:
    """The error of every released coordinate at once with probability >= 1 - beta, in the
    released statistic's units. ``cumulative``: the coordinates are a CDF's running sums;
    ``groups``: that many groups of them (union bound: beta / groups each)."""
    beta = beta / groups
    m = noise.certified.coordinates
    t = noise.lattice_scale
    if cumulative:
        j = (_dg_prefix(t, m, beta) if noise.gaussian else _dl_prefix(t, m, beta))
    else:
        j = _dg_count(t, beta / m) if noise.gaussian else _dl_count(t, beta / m)
    return j * noise.lattice / noise.certified.divisor


def _dl_count(t: float, beta: float) -> int:
    """The least integer j >= 0 with P(|X| > j) = 2 a^{j+1} / (1 + a) <= beta, X discrete Laplace."""
    log_a = -1.0 / t
    def tail(j: int) -> float:      # log P(|X| > j)
        return math.log(2.0) + (j + 1) * log_a - math.log1p(math.exp(log_a))
    target = math.log(beta)
    j = max(0, math.ceil((target - math.log(2.0) + math.log1p(math.exp(log_a))) / log_a) - 1)
    if j >= 2 ** 52:    # steps of 1 no longer move tail(j) (ε_g 1e-15: j ~ 1.5e16, a loop without
        return math.ceil(j * (1 + 1e-12)) + 2    # end): the closed form, widened past its rounding
    while j > 0 and tail(j - 1) <= target:       # the closed form may be off by a rounding
        j -= 1
    while tail(j) > target:
        j += 1
    return j


def _dg_count(sigma: float, beta: float) -> int:
    """The least integer j with 2 Phi(-j / sigma) <= beta (a bound on P(|X| > j))."""
    from scipy.special import ndtri   # here: a plan without Gaussian noise opens without scipy
    return math.ceil(sigma * -float(ndtri(beta / 2.0)) * (1 + 1e-15))


@functools.lru_cache(maxsize=1024)
def _dl_prefix(t: float, m: int, beta: float) -> int:
    """s (lattice units) with P(max_J |S_J| >= s) <= beta for m iid discrete Laplace(t):
    union over the m prefixes of 2 min_u e^{-us} M(u)^m, M the discrete Laplace MGF (the
    minimising u in closed form, _chernoff_u; any u gives a valid bound). (Remembered: a plan of
    many alike statistics asks again with the same arguments.)"""
    target = math.log(beta)

    def log_bound(s: float) -> float:
        return math.log(2.0 * m) + _log_chernoff(_chernoff_u(s / m, t), s, m, t)

    lo, hi = 0.0, max(1.0, t)
    for _ in range(200):
        if log_bound(hi) <= target:
            break
        lo, hi = hi, hi * 2.0
    else:
        raise ValueError(f"no discrete Laplace CDF error found for {m} cells at beta = {beta:g}")
    # the least whole s with a bound <= beta (the bound falls as s grows): bisect on whole numbers
    below, above = math.floor(lo), math.ceil(hi)     # the bound fails at ``below``, holds at ``above``
    while above - below > 1:
        mid = (below + above) // 2
        if log_bound(mid) > target:
            below = mid
        else:
            above = mid
    return above


def _chernoff_u(c: float, t: float) -> float:
    """The u in (0, 1/t) minimising -u s + m log M(u) for s / m = c > 0: the root of (log M)'(u) =
    a x / (1 - a x) - a / (x - a) = c in x = e^u, a = e^{-1/t}, i.e. of a (1 + c) x^2 - c (1 + a^2) x
    + a (c - 1) = 0, whose root in (1, 1/a) is x = 1 + (c (1 - a)^2 + y / (sqrt(y + 4 a^2) + 2 a))
    / (2 a (1 + c)), y = c^2 (1 - a^2)^2 (every term positive: no cancellation, even at t ~ 2^40).
    (It replaced a 100-step ternary search inside each of ~50 bisection steps: ~40 ms of a
    quantile's error on the GUI thread.)"""
    a = math.exp(-1.0 / t)
    one_a, one_a2 = -math.expm1(-1.0 / t), -math.expm1(-2.0 / t)
    y = (c * one_a2) ** 2
    u = math.log1p((c * one_a * one_a + y / (math.sqrt(y + 4.0 * a * a) + 2.0 * a)) / (2.0 * a * (1.0 + c)))
    return min(u, math.nextafter(1.0 / t, 0.0))


def _log_chernoff(u: float, s: float, m: int, t: float) -> float:
    """-u s + m log M(u), M(u) = (1 - a)^2 / ((1 - a e^u)(1 - a e^-u)), a = e^{-1/t}, in log space
    (a e^u = e^{u - 1/t} < 1 on the search interval u < 1/t)."""
    if u <= 0.0:
        return 0.0
    up = u - 1.0 / t
    if up >= 0.0:
        return math.inf
    # (1 - e^v as -expm1(v): log1p(-exp(v)) kept only ~1e-4 of 1 - e^v at t ~ 1e12)
    log_m = 2.0 * math.log(-math.expm1(-1.0 / t)) - math.log(-math.expm1(up)) \
        - math.log(-math.expm1(-1.0 / t - u))
    return -u * s + m * log_m


def _dg_prefix(sigma: float, m: int, beta: float) -> float:
    """s with 2 m e^{-s^2 / (2 m sigma^2)} <= beta: sub-Gaussian prefix sums, union over m."""
    return math.ceil(sigma * math.sqrt(2.0 * m * math.log(2.0 * m / beta)) * (1 + 1e-15))
