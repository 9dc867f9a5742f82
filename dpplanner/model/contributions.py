"""How far one protected individual can move a statistic: the unit of privacy and grouping.

An individual (the plan's ``unit``: a person, a household, ...) contributes at most c rows
(``Budget.contributions``). A statistic may be released "by" a grouping of g groups: one cell per
group, an individual in at most L0 groups (``max_groups``) with at most L_inf rows in any one of
them (``max_rows``), both <= c. Neighbours differ by one individual: added or removed
(add-remove), or replaced by another with as many rows (replace-one; the number of rows n is then
public, as for the ungrouped statistics).

The release is described as C cells moved, each by at most (cell_l1, cell_l2), plus a bound
(l1, l2) on the whole release; ``scalar`` says that a moved cell is one number. Per row of data
(the kind's own sensitivities), with M = max(|L|, |U|) for values clamped to [L, U]:

  kind        add/remove one row   replace one row (n public)   replace rows in one group
  count       1                    1                            1
  sum         M                    U - L                        max(U - L, M)
  mean        M / n                (U - L) / n                  max(U - L, M) / n
  proportion  1 / n                1 / n                        1 / n
  histogram   one bin by 1         two bins by 1 each           (see below)

(a count counts rows meeting a condition, so a replaced row changes it by at most 1; a group's
size is not public, so a group can gain rows the other side of [L, U] from those it loses: for
L < 0 < U a sum moves by up to U - L, otherwise by up to M.)

Ungrouped, c rows (one cell, except a replace-one histogram: two bins):
- add-remove: every number moves by at most c times its row value (c rows added or removed; a
  count, sum or mean is additive over rows). Histogram: c = 1 moves one bin by 1 (a cell of one
  number); c > 1 may spread over up to c bins: a vector with L1 <= c and, as the counts are
  non-negative whole numbers with sum <= c, L2 <= c.
- replace-one: c rows replaced by c rows: a count by <= c, a sum by <= c (U - L). Histogram:
  c = 1 moves two bins by 1 each (two cells of one number, L1 2, L2 sqrt 2); c > 1: L1 <= 2c,
  L2 <= sqrt(c^2 + c^2) = c sqrt 2 (new - old of two non-negative vectors: |new - old|^2 <=
  |new|^2 + |old|^2 <= 2 c^2).
Grouped (cells = groups): the individual's rows r_j in group j satisfy r_j <= L_inf, at most L0
of them are non-zero and sum r_j <= c. So at most L0 cells move, each by <= L_inf times the row
value, and the whole release moves by L1 <= R1 = min(L0 L_inf, c) row values and
L2 <= R2 = sqrt(max sum r_j^2) row values, where the maximum puts L_inf rows in as many groups as
c allows: R2^2 = k L_inf^2 + r^2, k = min(L0, floor(c / L_inf)), r = min(c - k L_inf, L_inf) if
k < L0 else 0.
- add-remove: C = L0 cells, each moved by L_inf x (add/remove one row).
- replace-one: the old individual's <= L0 groups and the new one's <= L0 groups: C = min(2 L0, g)
  cells, each moved by at most L_inf x (replace rows in one group) (a group holding rows of both
  is one cell, moved by at most that). The whole release is a removal then an addition: L1 <= 2 R1
  and L2 <= 2 R2 row values (triangle inequality), also <= C and sqrt(C) times a cell's move.
- histograms and CDFs: with L_inf = 1 a cell is one (group, bin) count moved by 1: C = L0 such
  counts (add-remove) or min(2 L0, g m) (replace-one). With L_inf > 1 a group's rows may spread
  over its bins: the cell is a vector, L1 <= L_inf (add-remove) or 2 L_inf (replace-one), and the
  whole release L1 <= R1 or 2 R1, L2 <= R2 or sqrt 2 R2 (non-negative vectors, as above).

How the noise-aware theorems account it (``accounting``): when the C cells at their full move add
up to exactly the whole release's bound (no slack: C cell_l1 = l1), each cell is composed as its
own release ("*C" tags, engine/mechanisms/cells.py): its own noise when a cell is one number, a
pure (eps_i / C) pair when it is a vector (its L1 sensitivity over the noise scale). Otherwise the
whole release is one release of its L1 bound. Gaussian noise only needs the L2 bound.

All sensitivities are computed in exact rational arithmetic and rounded up once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from .statistic import KIND_FIELDS, Kind, Statistic

#: Kinds whose release is a vector of counts (bins, or a CDF's grid cells).
VECTOR_KINDS = (Kind.HISTOGRAM, Kind.QUANTILE)


@dataclass(frozen=True)
class Contributions:
    """How far one individual moves a statistic's release (see the module docstring).

    ``cells`` C of the release move, each by at most ``cell_l1`` / ``cell_l2`` (``scalar``: a cell
    is one number); the whole release by at most ``l1`` / ``l2``. ``rows``: an individual's rows in
    one cell (c ungrouped, L_inf grouped). ``groups``: g, or None (not grouped, or keys not known).
    ``lines``: the derivation in words, one step a line."""

    cells: int
    cell_l1: float
    cell_l2: float
    scalar: bool
    l1: float
    l2: float
    rows: int
    groups: Optional[int]
    lines: tuple[str, ...]
    #: l1 and l2^2 exactly (l1, l2 are them rounded up).
    l1_exact: Fraction = Fraction(0)
    l2_squared: Fraction = Fraction(0)

    @property
    def cells_exact(self) -> bool:
        """Whether the C cells at their full move are exactly the whole release's L1 bound, so
        that composing the cells one by one charges nothing the release cannot spend."""
        return self.cells * self.cell_l1 <= self.l1 * (1 + 2.0 ** -50)


def up(x: Fraction) -> float:
    """x rounded up to a double."""
    r = float(x)
    return r if Fraction(r) >= x else math.nextafter(r, math.inf)


def default_max_groups(stat: Statistic, c: int) -> int:
    """L0 when not typed: 1 for a grouping that is a property of the individual; otherwise the
    most groups c rows can reach, min(c, g) (c when g is not known)."""
    if stat.one_group_each:
        return 1
    g = group_count(stat)
    return c if g is None else min(c, g)


def default_max_rows(stat: Statistic, c: int) -> int:
    """L_inf when not typed: c (all of an individual's rows may fall in one group)."""
    return c


def group_count(stat: Statistic) -> Optional[int]:
    """g: the number of listed keys, else the typed number of groups (None: not known)."""
    keys = listed_keys(stat)
    if keys:
        return len(keys)
    return stat.groups


def listed_keys(stat: Statistic) -> tuple[str, ...]:
    """The group keys the statistic lists (comma-separated), stripped; () when none."""
    text = stat.group_keys if isinstance(stat.group_keys, str) else ""
    return tuple(k.strip() for k in text.split(",") if k.strip()) if text.strip() else ()


def bounds(stat: Statistic, c: int) -> tuple[int, int]:
    """(L0, L_inf) of a grouped statistic: typed, or the defaults."""
    l0 = stat.max_groups if stat.max_groups is not None else default_max_groups(stat, c)
    linf = stat.max_rows if stat.max_rows is not None else default_max_rows(stat, c)
    return int(l0), int(linf)


def _row_values(stat: Statistic, n: Optional[int]) -> tuple[Fraction, Fraction, Fraction]:
    """(add/remove one row, replace one row with n public, replace rows in one group) for a
    one-number kind, in the released units (exact)."""
    kind = stat.kind
    if kind is Kind.COUNT:
        return Fraction(1), Fraction(1), Fraction(1)
    if kind is Kind.PROPORTION:
        one = Fraction(1, int(n))
        return one, one, one
    lo, hi = Fraction(float(stat.lower)), Fraction(float(stat.upper))
    m = max(abs(lo), abs(hi))
    add, sized, cell = m, hi - lo, max(hi - lo, m)
    if kind is Kind.MEAN:
        add, sized, cell = add / int(n), sized / int(n), cell / int(n)
    return add, sized, cell


def reach(l0: int, linf: int, c: int) -> tuple[int, int]:
    """(R1, R2^2): the most rows one individual has in the groups, and the largest sum of squared
    rows per group, with r_j <= L_inf, at most L0 groups and sum r_j <= c."""
    r1 = min(l0 * linf, c)
    k = min(l0, c // linf)
    rest = min(c - k * linf, linf) if k < l0 else 0
    return r1, k * linf * linf + rest * rest


def contributions(stat: Statistic, replace: bool, c: int, n: Optional[int]) -> Contributions:
    """The contributions of one individual to ``stat`` (validated; ``n``: the public number of
    records a mean or proportion divides by). ValueError for custom statistics."""
    if stat.kind is Kind.CUSTOM:
        raise ValueError(f"statistic {stat.name!r}: a custom statistic has no sensitivity")
    uses = KIND_FIELDS[stat.kind]
    key = (stat.kind, bool(replace), int(c), int(n) if n is not None and ("n" in uses) else None,
           stat.lower if "lower" in uses else None, stat.upper if "upper" in uses else None,
           stat.bins if "bins" in uses else None, stat.granularity if "granularity" in uses else None,
           stat.group_by.strip() != "", stat.groups, stat.group_keys, stat.one_group_each, stat.max_groups,
           stat.max_rows)
    return _cached(key, stat)


_MEMO: dict = {}


def _cached(key, stat: Statistic) -> Contributions:
    """The contributions of every statistic with the same key (the fields they depend on) are the
    same: the window asks for them after every edit of a plan of thousands."""
    known = _MEMO.get(key)
    if known is None:
        known = _grouped(stat, key[1], key[2], key[3]) if key[8] else _ungrouped(stat, key[1], key[2], key[3])
        if len(_MEMO) >= 1 << 14:
            _MEMO.clear()
        _MEMO[key] = known
    return known


def _ungrouped(stat: Statistic, replace: bool, c: int, n: Optional[int]) -> Contributions:
    rows = f"at most {c} row{'s' if c != 1 else ''} per individual"
    if stat.kind in VECTOR_KINDS:
        if c == 1 and not replace:
            return Contributions(1, 1.0, 1.0, True, 1.0, 1.0, 1, None,
                                 ("one row added or removed moves one bin count by 1",), Fraction(1), Fraction(1))
        if c == 1:
            return Contributions(2, 1.0, 1.0, True, 2.0, up_sqrt(Fraction(2)), 1, None,
                                 ("one row replaced moves two bin counts by 1 each (two cells)",),
                                 Fraction(2), Fraction(2))
        l1 = 2 * c if replace else c
        l2sq = Fraction(2 * c * c if replace else c * c)
        l2 = up_sqrt(l2sq)
        what = (f"{c} rows replaced: the counts move by L1 <= 2c = {l1}, L2 <= c sqrt 2"
                if replace else f"{c} rows added or removed: the counts move by L1 <= c = {c}, L2 <= c = {c}")
        return Contributions(1, float(l1), l2, False, float(l1), l2, c, None, (rows, what),
                             Fraction(l1), l2sq)
    add, sized, _ = _row_values(stat, n)
    exact = c * (sized if replace else add)
    move = up(exact)
    what = ("each replaced row moves it by at most " if replace else "each row moves it by at most ") + \
        f"{_fmt(sized if replace else add)}, so {c} row{'s' if c != 1 else ''} by {_fmt_f(move)}"
    return Contributions(1, move, move, True, move, move, c, None, (rows, what), exact, exact * exact)


def _grouped(stat: Statistic, replace: bool, c: int, n: Optional[int]) -> Contributions:
    g = group_count(stat)
    l0, linf = bounds(stat, c)
    r1, r2sq = reach(l0, linf, c)
    lines = [f"at most {c} row{'s' if c != 1 else ''} per individual, in at most L0 = {l0} group"
             f"{'s' if l0 != 1 else ''}, at most L∞ = {linf} in any one group"]
    if stat.kind in VECTOR_KINDS:
        m = _bins(stat)
        if linf == 1:
            cells = l0 if not replace else min(2 * l0, g * m if g is not None else 2 * l0)
            lines.append(f"{cells} counts (group, bin) move by 1 each"
                         + (" (the old individual's and the new one's)" if replace else ""))
            return Contributions(cells, 1.0, 1.0, True, float(cells), up_sqrt(Fraction(cells)), 1, g,
                                 tuple(lines), Fraction(cells), Fraction(cells))
        cells = l0 if not replace else min(2 * l0, g if g is not None else 2 * l0)
        cell_l1 = float(2 * linf if replace else linf)
        cell_l2 = up_sqrt(Fraction(2 * linf * linf)) if replace else float(linf)
        l1 = 2 * r1 if replace else r1
        l2sq = Fraction(2 * r2sq if replace else r2sq)
        l2 = up_sqrt(l2sq)
        lines.append(f"{cells} {'groups move' if cells != 1 else 'group moves'}, each by L1 <= {_fmt_f(cell_l1)}; "
                     f"the whole table by L1 <= {l1}, L2 <= {_fmt_f(l2)}")
        return Contributions(cells, cell_l1, cell_l2, False, float(l1), l2, linf, g, tuple(lines),
                             Fraction(l1), l2sq)
    add, _, in_cell = _row_values(stat, n)
    if not replace:
        cells, per_row = l0, add
        l1, l2sq = Fraction(r1) * add, Fraction(r2sq) * add * add
        lines.append(f"{cells} {'groups move' if cells != 1 else 'group moves'}, each by at most L∞ × "
                     f"{_fmt(add)} = {_fmt(linf * add)}")
    else:
        cells, per_row = (min(2 * l0, g) if g is not None else 2 * l0), in_cell
        l1 = min(cells * linf * in_cell, 2 * r1 * add)
        l2sq = min(cells * (linf * in_cell) ** 2, 4 * r2sq * add * add)
        lines.append(f"{cells} groups move (the old individual's and the new one's), each by at most "
                     f"L∞ × {_fmt(in_cell)} = {_fmt(linf * in_cell)}")
    cell = up(linf * per_row)
    whole_l1, whole_l2 = up(l1), up_sqrt(l2sq)
    lines.append(f"the whole table moves by L1 <= {_fmt_f(whole_l1)}, L2 <= {_fmt_f(whole_l2)}")
    return Contributions(cells, cell, cell, True, whole_l1, whole_l2, linf, g, tuple(lines),
                         Fraction(l1), Fraction(l2sq))


def up_sqrt(x: Fraction) -> float:
    """sqrt(x) rounded up (checked in rational arithmetic)."""
    r = math.sqrt(float(x))
    while Fraction(r) ** 2 < x:
        r = math.nextafter(r, math.inf)
    return r


def _bins(stat: Statistic) -> int:
    from .accuracy import quantile_bins
    if stat.kind is Kind.HISTOGRAM:
        return int(stat.bins)
    return quantile_bins(float(stat.lower), float(stat.upper), float(stat.granularity))


def _fmt(x: Fraction) -> str:
    return _fmt_f(up(x))


def _fmt_f(x: float) -> str:
    from .display import exact
    return exact(x)
