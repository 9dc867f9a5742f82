"""All input checks of the engine, in one place.

Every public engine function runs its arguments through these helpers, so a bad value gets the
same message whichever entry point it came through: what is wrong, which query (index), the
value, and what is allowed.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

FILTERS = ("basic", "rruv", "wrrw")
#: What each release is, for the theorems that account the noise itself (pld, zcdp): "eps-delta"
#: is any release known only by its (eps_i, delta_i); "laplace" / "gaussian" mean the release adds
#: exactly that continuous noise, calibrated to (eps_i, delta_i) (Laplace: b = sensitivity/eps_i;
#: Gaussian: the analytic-Gaussian sigma of Balle & Wang 2018). "discrete-laplace" /
#: "discrete-gaussian", optionally with an integer shift ":S" (1 <= S <= 2^53 lattice units; no
#: suffix means 1), mean discrete noise on the integers for a query that neighbouring datasets
#: move by at most S: scale discrete_laplace_scale(eps_i, S) (pure eps_i-DP), sigma
#: discrete_gaussian_sigma(eps_i, delta_i, S). Generic theorems ignore the tag.
#: Any tag may end in "*C" (C cells, 1 <= C <= MAX_CELLS): the release is C cells (a grouped table's
#: groups, a histogram's bins) with independent noise, of which neighbouring datasets move each by
#: at most one sensitivity (S lattice units); (eps_i, delta_i) is the whole release's. See
#: mechanisms/cells.py for what each kind then adds per cell.
MECHANISMS = ("eps-delta", "laplace", "gaussian", "discrete-laplace", "discrete-gaussian")
DISCRETE = ("discrete-laplace", "discrete-gaussian")
#: The epsilons a discrete (OpenDP) release is calibrated and composed for (below 2^-64 its noise
#: would not fit the lattice; above 1024 its loss is below 2^-64: discrete_objects.py).
DISCRETE_MIN_EPSILON = 2.0 ** -64
DISCRETE_MAX_EPSILON = 1024.0
DISCRETE_RANGE = "epsilon between 5.43e-20 and 1024"      # (2^-64 = 5.421e-20, shown rounded up)
#: Largest shift S of a discrete release (exact in a double).
MAX_SHIFT = 2 ** 53
#: Largest number of cells of one release (a grouped statistic moves at most 2 L0 <= 2 c cells).
MAX_CELLS = 2 ** 24
#: Per-query work (curves, filters) expands multiplicities; beyond this it would exhaust memory.
MAX_EXPANDED = 5_000_000
#: Most queries a plan may compose (the sum of the multiplicities): every theorem answers up to
#: here within bounded memory (the homogeneous root reads only the binomial's window that matters).
MAX_QUERIES = 10**9
#: The least accuracy eta: a certified bracket is never narrower than its floating-point error
#: bounds, about 1e-12 relative (numerics.BRACKET_MARGIN), so a smaller eta could only be missed.
MIN_ETA = 1e-12
#: Largest total epsilon (a plan's sum of multiplicity x epsilon, and epsilon_g): every theorem's
#: total, rounded up and widened by its error bounds, and every scale an allocation tries a few
#: times above its budget, stay finite doubles (above ~1.8e308 a sum is inf, and the lattices'
#: arithmetic on 10^6 copies of 1e308 loses them: 2.2e298 under optimal, far below one release).
MAX_TOTAL_EPSILON = 1e305


@dataclass(frozen=True)
class Releases:
    """The validated releases of a plan: row i is the query (eps[i], delta[i]) repeated mult[i]
    times; mech[i] is one of MECHANISMS (what the release is, see there). Not the document
    (that is ``model.Plan``): only the numbers the engine composes."""

    eps: np.ndarray
    delta: np.ndarray
    mult: np.ndarray
    mech: tuple = ()

    def __post_init__(self):
        if not self.mech:  # internal callers that build Releases directly mean generic releases
            object.__setattr__(self, "mech", ("eps-delta",) * int(self.eps.size))

    @property
    def k(self) -> int:
        return int(self.mult.sum())

    def expanded(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-query (eps, delta) in plan order with multiplicities spelled out."""
        return np.repeat(self.eps, self.mult), np.repeat(self.delta, self.mult)


def mechanism_kind(tag, what: str = "mechanism") -> tuple[str, int]:
    """(one of MECHANISMS, shift) of a release tag such as "discrete-laplace:3" (shift 1 for
    untagged discrete and for continuous kinds). ValueError naming ``what`` and what is allowed."""
    base, shift, _ = parse_tag(tag, what)
    return base, shift


def parse_tag(tag, what: str = "mechanism") -> tuple[str, int, int]:
    """(one of MECHANISMS, shift S, cells C) of a release tag "<kind>[:S][*C]", e.g.
    "discrete-gaussian:2*3" (S = 1 and C = 1 where not given). ValueError naming ``what``."""
    if not isinstance(tag, str):
        tag = None
    known = _TAGS.get(tag) if tag is not None else None
    if known is None:
        known = _parsed(tag, what)
        if len(_TAGS) >= _tag_room:
            _TAGS.clear()       # (one atomic step for any thread; the plan's pass refills it once)
        _TAGS[tag] = known
    return known


def _parsed(tag: Optional[str], what: str) -> tuple[str, int, int]:
    head, star, cells_text = tag.partition("*") if tag is not None else ("", "", "")
    base, sep, suffix = head.partition(":")
    if tag is None or base not in MECHANISMS or (sep and base not in DISCRETE):
        raise ValueError(f"{what} = {tag!r} is not allowed; use one of: {', '.join(MECHANISMS)} (the "
                         "discrete ones optionally with a whole-number shift, e.g. 'discrete-laplace:3'; "
                         "any of them optionally with a number of cells, e.g. 'laplace*3')")
    shift = cells = 1
    if sep:
        if not (suffix.isascii() and suffix.isdigit()) or not 1 <= int(suffix) <= MAX_SHIFT:
            raise ValueError(f"{what} = {tag!r} has shift {suffix!r}; the shift after ':' must be a whole "
                             "number from 1 to 2^53 (lattice units)")
        shift = int(suffix)
    if star:
        if not (cells_text.isascii() and cells_text.isdigit()) or not 1 <= int(cells_text) <= MAX_CELLS:
            raise ValueError(f"{what} = {tag!r} has {cells_text!r} cells; the number after '*' must be a "
                             f"whole number from 1 to {MAX_CELLS}")
        cells = int(cells_text)
        if base in DISCRETE and shift * cells > MAX_SHIFT:
            raise ValueError(f"{what} = {tag!r}: shift x cells = {shift * cells} is above 2^53")
    return base, shift, cells


def least_epsilon(tag: str, delta: float) -> float:
    """The least epsilon a discrete release of this tag is calibrated for (0 for a continuous
    one): DISCRETE_MIN_EPSILON, or for a discrete Gaussian more where its sigma would pass 2^57
    lattice units (discrete_objects.MAX_SIGMA): from the epsilon at which the continuous noise
    it is calibrated through needs sigma = 2^57 (1 - 1e-3), doubled until the calibration
    holds there (its exact profile, used at a tiny delta, may need more). Every epsilon above
    it is calibrated too (sigma falls as epsilon grows)."""
    base, shift, cells = parse_tag(tag)
    if base not in DISCRETE:
        return 0.0
    if base != "discrete-gaussian":
        return DISCRETE_MIN_EPSILON
    key = (tag, float(delta))
    if key not in _LEAST:
        from .mechanisms.discrete_objects import MAX_SIGMA
        top = MAX_SIGMA * (1 - 1e-3)
        if cells == 1:
            from .mechanisms.gaussian_inverse import gaussian_epsilon
            eps = gaussian_epsilon(top / shift, delta)
        else:   # (through zCDP: C S^2 / (2 sigma^2)-zCDP, as discrete_gaussian._cells_sigma)
            from .mechanisms.zcdp import cks_epsilon
            eps = cks_epsilon(cells * shift * shift / (2 * top * top), delta)
        from .mechanisms.discrete_gaussian import discrete_gaussian_sigma
        eps = max(DISCRETE_MIN_EPSILON, float(eps))
        for _ in range(64):
            try:
                discrete_gaussian_sigma(eps, delta, shift, cells)
                break
            except ValueError:
                eps *= 2.0
        else:       # (never a floor that is not calibrated)
            raise ValueError(f"no epsilon up to {eps:.3g} calibrates a discrete Gaussian of shift {shift}")
        if len(_LEAST) >= _tag_room:
            _LEAST.clear()
        _LEAST[key] = eps
    return _LEAST[key]


#: least_epsilon's answers, by (tag, delta).
_LEAST: dict = {}


#: Tags already parsed. A plan of thousands of rows usually has a few distinct tags, but one of
#: discrete sums of distinct bounds has one per row (its shift), asked for in one pass, in order,
#: on every validation: the memory holds the largest plan validated (``_hold_tags``), at least
#: 4096 tags and at most MAX_TAGS, and starts again when full.
_TAGS: dict = {}
_tag_room = 4096
#: Above the rows of the largest plan the model allows (20,000 statistics, one row each).
MAX_TAGS = 1 << 15


def _hold_tags(rows: int) -> None:
    global _tag_room
    _tag_room = max(_tag_room, min(rows, MAX_TAGS))


def _as_sequence(values, name: str) -> list:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise ValueError(f"{name} must be a sequence of numbers, got {values!r}")
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got an array of shape {values.shape}")
    return list(values)


def _as_real(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.floating, np.integer)):
        raise ValueError(f"{what} = {value!r} is not a number")
    try:
        return float(value)
    except OverflowError:  # an int (or Fraction) beyond the largest double, e.g. 10**400
        raise ValueError(f"{what} = {_short(value)} is too large; it must be at most "
                         f"{np.finfo(float).max:.4g}") from None


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


def validate_plan(epsilons: Sequence[float], deltas: Sequence[float],
                  multiplicities: Optional[Sequence[int]] = None,
                  mechanisms: Optional[Sequence[str]] = None) -> Releases:
    eps_list = _as_sequence(epsilons, "epsilons")
    delta_list = _as_sequence(deltas, "deltas")
    if not eps_list:
        raise ValueError("the plan is empty: give at least one query (epsilons has length 0)")
    if len(delta_list) != len(eps_list):
        raise ValueError(f"epsilons has {len(eps_list)} entries but deltas has {len(delta_list)}; "
                         "give one delta per query")
    eps, delta = _plain_reals(eps_list), _plain_reals(delta_list)
    if eps is None or delta is None or not (np.all(eps >= 0) and np.all(eps < math.inf)
                                            and np.all(delta >= 0) and np.all(delta < 1)):
        eps, delta = _checked_one_by_one(eps_list, delta_list)
    mult = np.ones(len(eps_list), dtype=np.int64)
    if multiplicities is not None:
        mult_list = _as_sequence(multiplicities, "multiplicities")
        if len(mult_list) != len(eps_list):
            raise ValueError(f"epsilons has {len(eps_list)} entries but multiplicities has "
                             f"{len(mult_list)}; give one multiplicity per query")
        mult = _plain_counts(mult_list)
        for i, m in enumerate(mult_list if mult is None else ()):
            m_f = _as_real(m, f"multiplicities[{i}]")
            if not math.isfinite(m_f) or m_f != int(m_f) or m_f < 1:
                raise ValueError(f"multiplicities[{i}] = {_short(m)} is not allowed; a multiplicity must be "
                                 "a whole number >= 1")
            if m_f > MAX_QUERIES:
                raise ValueError(f"multiplicities[{i}] = {_short(m)} is too large; a plan composes at most "
                                 f"{MAX_QUERIES:,} queries")
            mult_list[i] = int(m_f)
        if mult is None:
            mult = np.array(mult_list, dtype=np.int64)
        if int(mult.sum()) > MAX_QUERIES:
            raise ValueError(f"the multiplicities add up to {int(mult.sum()):,} queries; a plan composes at "
                             f"most {MAX_QUERIES:,}")
    _check_total(eps, mult)
    mech = ("eps-delta",) * len(eps_list)
    if mechanisms is not None:
        mech_list = _as_sequence(mechanisms, "mechanisms")
        if len(mech_list) != len(eps_list):
            raise ValueError(f"epsilons has {len(eps_list)} entries but mechanisms has {len(mech_list)}; "
                             "give one mechanism per query")
        _hold_tags(len(mech_list))
        for i, m in enumerate(mech_list):
            kind, _, cells = parse_tag(m, f"mechanisms[{i}]")
            if kind == "eps-delta" and cells > 1 and delta[i] != 0.0:
                raise ValueError(f"mechanisms[{i}] is {m!r} but delta = {float(delta[i])!r}; a release of several "
                                 "(epsilon, delta) cells must be pure (delta 0): give its cells' noise instead")
            if kind == "discrete-laplace" and (delta[i] != 0.0 or not DISCRETE_MIN_EPSILON <= eps[i] <= DISCRETE_MAX_EPSILON):
                raise ValueError(f"mechanisms[{i}] is {m!r} but (epsilon, delta) = ({float(eps[i])!r}, {float(delta[i])!r}); "
                                 f"a discrete Laplace release has delta 0 and {DISCRETE_RANGE}")
            if kind == "discrete-gaussian" and not (0.0 < delta[i] and DISCRETE_MIN_EPSILON <= eps[i] <= DISCRETE_MAX_EPSILON):
                raise ValueError(f"mechanisms[{i}] is {m!r} but (epsilon, delta) = ({float(eps[i])!r}, {float(delta[i])!r}); "
                                 f"a discrete Gaussian release needs delta > 0 and {DISCRETE_RANGE}")
            if kind == "laplace" and (delta[i] != 0.0 or eps[i] == 0.0):
                raise ValueError(f"mechanisms[{i}] is {m!r} but (epsilon, delta) = ({float(eps[i])!r}, "
                                 f"{float(delta[i])!r}); a Laplace release has epsilon > 0 and delta 0")
            if kind == "gaussian" and not (delta[i] > 0.0 and eps[i] > 0.0):
                raise ValueError(f"mechanisms[{i}] is {m!r} but (epsilon, delta) = ({float(eps[i])!r}, "
                                 f"{float(delta[i])!r}); a Gaussian release needs epsilon > 0 and delta > 0")
        mech = tuple(mech_list)
    eps.flags.writeable = False
    delta.flags.writeable = False
    mult.flags.writeable = False
    return Releases(eps, delta, mult, mech)


def _check_total(eps: np.ndarray, mult: np.ndarray) -> None:
    with np.errstate(over="ignore"):
        parts = eps * mult
        total = float(parts.sum())
    if not total <= MAX_TOTAL_EPSILON:
        i = int(np.argmax(parts))
        times = f" x {int(mult[i]):,} (its multiplicity)" if mult[i] > 1 else ""
        said = f"{total:.4g}" if math.isfinite(total) else "more than the largest double (1.798e+308)"
        raise ValueError(f"the epsilons add up to {said} (multiplicities counted); the engine totals at "
                         f"most {MAX_TOTAL_EPSILON:g}: the largest part is epsilons[{i}] = {float(eps[i])!r}{times}")


#: Element types converted in one numpy pass (the same doubles as float(x); bool is not among them).
_PLAIN = frozenset((float, int, np.float64))
_COUNTS = frozenset((int, np.int64))


def _plain_reals(values: list) -> Optional[np.ndarray]:
    """The values as doubles in one numpy pass where each is a plain float or int (a 10^5-query
    plan spent 1.8 s in the per-value checks), else None (checked one by one, to say which is
    wrong); also None for an int beyond the largest double."""
    if not set(map(type, values)) <= _PLAIN:
        return None
    try:
        return np.array(values, dtype=float)
    except OverflowError:
        return None


def _plain_counts(values: list) -> Optional[np.ndarray]:
    """The multiplicities as int64 in one pass where each is a plain int from 1 to MAX_QUERIES,
    else None (checked one by one)."""
    if not set(map(type, values)) <= _COUNTS:
        return None
    try:
        m = np.array(values, dtype=np.int64)
    except OverflowError:
        return None
    return m if m.size and int(m.min()) >= 1 and int(m.max()) <= MAX_QUERIES else None


def _checked_one_by_one(eps_list: list, delta_list: list) -> tuple[np.ndarray, np.ndarray]:
    """The first bad epsilon or delta, in query order, named with its index and what is allowed."""
    eps = np.empty(len(eps_list))
    delta = np.empty(len(eps_list))
    for i, (e, d) in enumerate(zip(eps_list, delta_list)):
        e = _as_real(e, f"epsilons[{i}]")
        if math.isnan(e) or math.isinf(e) or e < 0:
            raise ValueError(f"epsilons[{i}] = {e!r} is not allowed; each epsilon must be a finite "
                             "number >= 0")
        d = _as_real(d, f"deltas[{i}]")
        if not (0.0 <= d < 1.0):
            raise ValueError(f"deltas[{i}] = {d!r} is not allowed; each delta must be in [0, 1)")
        eps[i], delta[i] = e, d
    return eps, delta


def validate_delta_g(delta_g) -> float:
    d = _as_real(delta_g, "delta_g")
    if not (0.0 <= d < 1.0):
        raise ValueError(f"delta_g = {d!r} is not allowed; the target delta must be in [0, 1)")
    return d


def validate_epsilon_g(epsilon_g) -> float:
    e = _as_real(epsilon_g, "epsilon_g")
    if not 0 <= e <= MAX_TOTAL_EPSILON:
        raise ValueError(f"epsilon_g = {e!r} is not allowed; the target epsilon must be a number from 0 "
                         f"to {MAX_TOTAL_EPSILON:g}")
    return e


def validate_eta(eta) -> float:
    e = _as_real(eta, "eta")
    if not (e >= MIN_ETA) or not math.isfinite(e):
        raise ValueError(f"eta = {e!r} is not allowed; the accuracy eta must be a finite number >= {MIN_ETA:g} "
                         "(a certified bracket is never narrower than its ~1e-12 relative rounding bounds)")
    return e


def validate_time_limit(seconds) -> Optional[float]:
    """None (no limit: the result depends only on the inputs) or a number of seconds > 0."""
    if seconds is None:
        return None
    t = _as_real(seconds, "time_limit")
    if not (t > 0) or math.isnan(t):
        raise ValueError(f"time_limit = {seconds!r} is not allowed; give a number of seconds > 0, or None "
                         "for no limit")
    return None if math.isinf(t) else t


def validate_filter(name) -> str:
    if name not in FILTERS:
        raise ValueError(f"unknown filter {name!r}; known filters are {', '.join(FILTERS)}")
    return name


def validate_expandable(k: int, what: str) -> None:
    if k > MAX_EXPANDED:
        raise ValueError(f"{what} works query by query and supports at most {MAX_EXPANDED:,} queries, "
                         f"got {k:,}; use a smaller k_max or fewer repetitions")
