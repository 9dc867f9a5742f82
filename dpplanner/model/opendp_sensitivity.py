"""The sensitivities OpenDP 0.16 certifies for each statistic, computed as OpenDP computes them.

A statistic with ``noise = "opendp"`` is released by the exported script through OpenDP's
transformations (``dpplanner.release``); its plan uses exactly the sensitivity OpenDP's stability
map gives at the plan's d_in, so that the plan's scale is the script's scale. OpenDP is not needed
to plan: the maps are replicated here, with OpenDP's rounding (every step rounded up, exactly as
its ``inf_*`` arithmetic does), and a test compares them with the installed OpenDP's maps.

Distances: records are compared by the symmetric distance; adding or removing one record is
d_in = 1, replacing one is d_in = 2 (OpenDP counts a removal and an addition). Under replace-one
the number of records is public: the script works on a dataset of that known size (a sized
domain), which is what makes the sums' (U - L) sensitivity certifiable.

What each kind becomes (the query OpenDP noises, and what OpenDP certifies for it):
- count: the sum of a 0/1 indicator per record (1 where the column holds 1/true/yes, every record
  when the statistic names no column). A bounded integer sum: 1 under both relations. (OpenDP's
  ``make_count`` counts rows and certifies 2 under replace-one; the indicator sum certifies the
  tighter 1 that dpplanner's own analysis gives.)
- proportion: the same indicator sum, divided by the public n after the noise.
- sum / mean of whole numbers: the integer sum of values clamped to [L, U]: (U - L) d_in / 2 over
  the sized domain (replace-one); max(|L|, |U|) d_in unsized (add/remove). A mean is that sum
  divided by the public n after the noise.
- sum / mean of real numbers: OpenDP's pairwise float sum, which adds a rounding term to the ideal
  sensitivity (Casacuberta et al. 2022): over the sized domain (U - L) d_in / 2 + relaxation(n);
  unsized, a sum over at most ``size_limit`` records, max(U - L, |L|, |U|) d_in +
  relaxation(size_limit), where relaxation(n) = 2 n max(|L|, |U|) u k / (1 - u k), u = 2^-52,
  k = log2(n).
- histogram: counts of the m categories (``make_count_by_categories``, no extra cell): L1 = d_in
  and L2 = d_in. Under replace-one a replaced record moves two counts by 1 each: two cells, each
  certified at d_in = 1 (L1 = L2 = 1) and composed as two releases (engine/mechanisms/cells.py),
  not as one shift of OpenDP's L2 = 2.
- quantile / CDF: the same counts over the grid cells of [L, U].

Several rows per individual and grouped statistics (contributions.py): with c rows per individual
d_in is c (add-remove) or 2c (replace-one). A grouped statistic is released one cell per group,
each cell's query reading the group's records (a group's size is not public, so its domain is
unsized) and certified at d_in = L_inf, the individual's rows in one group: a count L_inf; an
integer sum L_inf max(|L|, |U|) (add-remove) or L_inf max(U - L, |L|, |U|) (replace-one: a group
may gain rows on the other side of the bounds from those it loses); a float sum OpenDP's bounded
checked sum at d_in = L_inf, L_inf max(U - L, |L|, |U|) + relaxation, which covers both; the counts
of a histogram by group 1 per (group, bin) when L_inf = 1, else L_inf (2 L_inf under replace-one)
per group. ``Certified`` holds one cell's sensitivity, how many cells move, and the whole release's
L1 and squared L2 bounds (in the noised query's units, exact).
"""

from __future__ import annotations

import decimal
import functools
import math
import operator
from dataclasses import dataclass, fields
from fractions import Fraction
from typing import Optional

from dataclasses import replace as replace_fields

from dpplanner.engine.memo import Memo

from .accuracy import quantile_bins
from .contributions import contributions
from .statistic import Budget, Kind, Neighbouring, Statistic

#: OpenDP's size limit of an unsized float sum (``make_sum`` on a dataset of unknown size).
DEFAULT_SIZE_LIMIT = 2 ** 20
_MANTISSA_BITS = 52


@dataclass(frozen=True)
class Certified:
    """What OpenDP certifies for one statistic's noised query.

    ``l1``/``l2`` are OpenDP's d_out at ``d_in`` for the query OpenDP noises (a sum for a mean or a
    proportion, which are divided by ``divisor`` afterwards); ``integer`` says whether that query
    is integer-valued (integer noise) or real-valued (noise on a 2^k lattice). ``size`` is the
    sized domain's number of records (replace-one) and ``size_limit`` the most records an unsized
    float sum reads (add/remove); ``bounds`` are the clamping bounds, ``categories`` the number of
    counts released together.
    """

    d_in: int
    l1: float
    l2: float
    integer: bool
    divisor: float
    coordinates: int
    data_type: str
    bounds: Optional[tuple[float, float]] = None
    size: Optional[int] = None
    size_limit: Optional[int] = None
    note: str = ""
    #: How many cells of this sensitivity one individual moves (contributions.py), whether a cell
    #: is one number, whether the cells at full sensitivity are exactly the whole release's L1
    #: bound, and that bound and the squared L2 bound (query units, exact); g for grouped ones.
    cells: int = 1
    scalar: bool = True
    exact: bool = True
    whole_l1: Fraction = Fraction(0)
    whole_l2_squared: Fraction = Fraction(0)
    groups: Optional[int] = None


def d_in(neighbouring: Neighbouring, contributions: int = 1) -> int:
    """OpenDP's symmetric distance between neighbouring datasets, c rows per individual."""
    return (2 if neighbouring is Neighbouring.REPLACE_ONE else 1) * contributions


#: Certifications made, keyed by the budget fields ``_certified`` reads (the relation, the dataset
#: size, the rows per individual) and every field of the statistic but those no sensitivity reads
#: and that an edit or a redistribution moves (``_UNREAD``): a plan's releases are certified three
#: times per edit (its pins' check, its allocation's request, its totals'), every one of them
#: again, although only the epsilons moved. (A field added to Statistic is in the key; values
#: that compare equal, 1 and 1.0 or 0.0 and -0.0, certify the same numbers. The key was the whole
#: Budget and a generator over the fields: a remembered certification took about twice as long.)
CERTIFICATIONS = Memo(1 << 12)      # (grown to a plan's size: opendp_noise.hold_plan)
_UNREAD = frozenset({"epsilon", "weight", "held", "target_error", "extra", "name", "variable", "description"})
_KEYED = operator.attrgetter(*(f.name for f in fields(Statistic) if f.name not in _UNREAD))


def certified(stat: Statistic, budget: Budget) -> Certified:
    """OpenDP's certified sensitivity of one cell of ``stat`` (validated) under the plan's relation
    and unit of privacy, with how many cells move (see the module docstring).

    Raises ValueError naming what is missing (custom statistics have none; replace-one needs the
    dataset size, which the script's sized domain is built with)."""
    key = (budget.neighbouring, budget.dataset_size, budget.contributions, _KEYED(stat))
    known = CERTIFICATIONS.get(key)
    if known is None:
        known = _certified(stat, budget)
        CERTIFICATIONS.put(key, known)
    return known


def _certified(stat: Statistic, budget: Budget) -> Certified:
    if stat.kind is Kind.CUSTOM:
        raise ValueError(f"statistic {stat.name!r}: a custom statistic is released by code the "
                         "user writes; OpenDP certifies nothing for it here")
    replace = budget.neighbouring is Neighbouring.REPLACE_ONE
    if replace and budget.dataset_size is None:
        raise ValueError(f"statistic {stat.name!r}: under replace-one OpenDP works on a dataset of "
                         "known size: set the plan's dataset size n")
    query = stat.replace(kind=Kind.SUM) if stat.kind is Kind.MEAN else \
        stat.replace(kind=Kind.COUNT) if stat.kind is Kind.PROPORTION else stat
    moves = contributions(query, replace, budget.contributions, None)
    cert = _cell(stat, budget, moves)
    return replace_fields(cert, cells=moves.cells, scalar=moves.scalar, exact=moves.cells_exact,
                          whole_l1=moves.l1_exact, whole_l2_squared=moves.l2_squared, groups=moves.groups)


def _cell(stat: Statistic, budget: Budget, moves) -> Certified:
    """One cell's certification (the whole release when it is one cell)."""
    kind = stat.kind
    replace = budget.neighbouring is Neighbouring.REPLACE_ONE
    grouped = bool(stat.group_by)
    size = budget.dataset_size
    # the distance one cell is certified at: c or 2c rows; a bin of a replace-one histogram
    # (one of the two cells a replaced record moves) 1; a group's cell L_inf (unsized)
    din = moves.rows if grouped else d_in(budget.neighbouring, budget.contributions)
    if kind in (Kind.HISTOGRAM, Kind.QUANTILE):
        din = 1 if moves.scalar else (2 * moves.rows if grouped and replace else din)
    sized = size if replace and not grouped else None
    if kind in (Kind.COUNT, Kind.PROPORTION):
        divisor = 1.0 if kind is Kind.COUNT else float(_public_n(stat, budget))
        return Certified(din, moves.cell_l1, moves.cell_l1, True, divisor, 1,
                         "records (0/1 indicator)" if kind is Kind.COUNT else "0/1 values",
                         (0.0, 1.0), sized)
    if kind in (Kind.HISTOGRAM, Kind.QUANTILE):
        if kind is Kind.HISTOGRAM:
            m, data, bounds = int(stat.bins), "categories", None
        else:
            m = quantile_bins(float(stat.lower), float(stat.upper), float(stat.granularity))
            data, bounds = "real numbers, counted in grid cells", (float(stat.lower), float(stat.upper))
        note = "" if moves.scalar else \
            "L2 of the whole release as derived for the rows one individual spreads over the bins"
        return Certified(din, moves.cell_l1, moves.cell_l2, True, 1.0, m, data, bounds, sized, note=note)
    lo, hi = float(stat.lower), float(stat.upper)
    divisor = 1.0 if kind is Kind.SUM else float(_public_n(stat, budget))
    if stat.integer:
        return Certified(din, moves.cell_l1, moves.cell_l1, True, divisor, 1, "whole numbers", (lo, hi), sized)
    if replace and not grouped:
        sens = float_sum_sized(size, lo, hi, din)
        return Certified(din, sens, sens, False, divisor, 1, "real numbers", (lo, hi), size,
                         note="includes OpenDP's float-rounding term")
    limit = size if size is not None else DEFAULT_SIZE_LIMIT
    sens = float_sum_unsized(limit, lo, hi, din)
    note = "includes OpenDP's float-rounding term"
    if lo < 0.0 < hi and not replace:
        note += "; upper - lower, not max(|lower|, |upper|), as OpenDP's bounded float sum certifies"
    return Certified(din, sens, sens, False, divisor, 1, "real numbers", (lo, hi),
                     size_limit=limit, note=note)


def missing_value(stat: Statistic) -> float:
    """What a missing or unreadable value of a sum, mean or quantile counts as in the release
    script: 0 if the bounds allow it, else the bound nearest to 0 (a constant inside the bounds,
    so the clamped query's sensitivity is unchanged)."""
    lo, hi = float(stat.lower), float(stat.upper)
    return min(max(0.0, lo), hi)


def _public_n(stat: Statistic, budget: Budget) -> int:
    n = stat.n if stat.n is not None else budget.dataset_size
    if n is None:
        raise ValueError(f"statistic {stat.name!r} ({stat.kind.value}) needs the dataset size n: "
                         "set it on the statistic or on the plan")
    return int(n)


# --- OpenDP's rounded-up arithmetic (its inf_add, inf_mul, ... on f64) -----------------------

def _up(exact: Fraction) -> float:
    """The exact value rounded up to a double (what OpenDP's inf_* operations return)."""
    r = float(exact)
    return r if Fraction(r) >= exact else math.nextafter(r, math.inf)


def _down(exact: Fraction) -> float:
    r = float(exact)
    return r if Fraction(r) <= exact else math.nextafter(r, -math.inf)


def _mul(a: float, b: float) -> float:
    return _up(Fraction(a) * Fraction(b))


def _add(a: float, b: float) -> float:
    return _up(Fraction(a) + Fraction(b))


_LOG_CONTEXT = decimal.Context(prec=60)


def _log2_up(n: int) -> float:
    """log2(n) correctly rounded up, as OpenDP's inf_log2 (math.log2 is not correctly rounded;
    60 digits decide the rounding: a double next to log2(n) of an integer n < 2^63 is never
    within 10^-40 of it)."""
    if n & (n - 1) == 0:
        return float(n.bit_length() - 1)
    exact = _LOG_CONTEXT.divide(_LOG_CONTEXT.ln(decimal.Decimal(n)), _LOG_CONTEXT.ln(decimal.Decimal(2)))
    r = float(exact)
    return r if decimal.Decimal(r) >= exact else math.nextafter(r, math.inf)


@functools.lru_cache(maxsize=4096)
def relaxation(size: int, lower: float, upper: float) -> float:
    """OpenDP's pairwise float-sum rounding term: 2 error, error = (u k / (1 - u k)) n max(|L|, |U|)
    with u k = log2(n) / 2^52, each step rounded up (1 - u k rounded down)."""
    uk = _up(Fraction(_log2_up(size)) / 2 ** _MANTISSA_BITS)
    ratio = _up(Fraction(uk) / Fraction(_down(1 - Fraction(uk))))
    error = _mul(_mul(ratio, float(size)), max(abs(lower), abs(upper)))
    return _add(error, error)


def float_sum_sized(size: int, lower: float, upper: float, din: int) -> float:
    """d_out of OpenDP's sized bounded float sum: (d_in // 2)(U - L) + relaxation(size)."""
    return _add(_mul(float(din // 2), _up(Fraction(upper) - Fraction(lower))),
                relaxation(size, lower, upper))


def float_sum_unsized(size_limit: int, lower: float, upper: float, din: int) -> float:
    """d_out of OpenDP's bounded float checked sum over at most ``size_limit`` records:
    d_in max(U - L, |L|, |U|) + relaxation(size_limit)."""
    ideal = max(_up(Fraction(upper) - Fraction(lower)), abs(lower), abs(upper))
    return _add(_mul(float(din), ideal), relaxation(size_limit, lower, upper))
