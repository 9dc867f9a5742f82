"""The unit of privacy and grouped statistics: every kind's sensitivity against a hand derivation.

Each case gives the statistic, the relation, c (rows per individual), and what one individual can
move: (cells C, one cell's L1, the whole release's L1, its L2), with the derivation beside it. In
the comments M = max(|L|, |U|); R1 = min(L0 L_inf, c) rows in the groups; R2^2 = the largest sum
of squared rows per group.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from dpplanner.model import Kind, Statistic
from dpplanner.model.contributions import contributions, reach

S = Statistic
r2, r3 = math.sqrt(2), math.sqrt(3)

CASES = [
    # --- not grouped ---------------------------------------------------------------------------
    # one row added or removed moves a count by 1
    (S("a", kind=Kind.COUNT), False, 1, None, (1, 1, 1, 1)),
    # three rows: by 3
    (S("a", kind=Kind.COUNT), False, 3, None, (1, 3, 3, 3)),
    # three rows replaced, each flipping the condition at most once: by 3
    (S("a", kind=Kind.COUNT), True, 3, None, (1, 3, 3, 3)),
    # values in [-10, 40]: a row adds at most M = 40; two rows 80
    (S("a", "v", Kind.SUM, lower=-10, upper=40), False, 2, None, (1, 80, 80, 80)),
    # a replaced row changes the sum by at most U - L = 50 (n public); two rows 100
    (S("a", "v", Kind.SUM, lower=-10, upper=40), True, 2, None, (1, 100, 100, 100)),
    # [10, 40]: U - L = 30
    (S("a", "v", Kind.SUM, lower=10, upper=40), True, 1, None, (1, 30, 30, 30)),
    # mean over the public n = 100: two rows of M = 40 move the sum by 80, the mean by 0.8
    (S("a", "v", Kind.MEAN, lower=-10, upper=40, n=100), False, 2, 100, (1, 0.8, 0.8, 0.8)),
    # proportion: four replaced rows flip at most 4 of the n = 100 indicators: 4/100
    (S("a", "v", Kind.PROPORTION, n=100), True, 4, 100, (1, 0.04, 0.04, 0.04)),
    # histogram: a row lands in one bin
    (S("a", "v", Kind.HISTOGRAM, bins=6), False, 1, None, (1, 1, 1, 1)),
    # a replaced row leaves one bin and enters another: two cells of 1 (L1 2, L2 sqrt 2)
    (S("a", "v", Kind.HISTOGRAM, bins=6), True, 1, None, (2, 1, 2, r2)),
    # three rows may land in up to three bins: L1 3; all in one bin: L2 3
    (S("a", "v", Kind.HISTOGRAM, bins=6), False, 3, None, (1, 3, 3, 3)),
    # three rows replaced: L1 6; |new - old|^2 <= |new|^2 + |old|^2 <= 9 + 9: L2 3 sqrt 2
    (S("a", "v", Kind.HISTOGRAM, bins=6), True, 3, None, (1, 6, 6, 3 * r2)),
    # a CDF's grid cells are counted like a histogram's bins
    (S("a", "v", Kind.QUANTILE, lower=0, upper=10, granularity=1), True, 1, None, (2, 1, 2, r2)),
    # --- grouped -------------------------------------------------------------------------------
    # a household of 4 in one region (a property of the household: L0 = 1, L_inf = c = 4): one
    # region's count moves by 4, whatever the 50 regions
    (S("a", kind=Kind.COUNT, group_by="region", groups=50, one_group_each=True), False, 4, None, (1, 4, 4, 4)),
    # replaced: the old household's region and the new one's: 2 cells of 4 (L1 8, L2 4 sqrt 2)
    (S("a", kind=Kind.COUNT, group_by="region", groups=50, one_group_each=True), True, 4, None,
     (2, 4, 8, 4 * r2)),
    # by age group (5 groups; not a property of the household): L0 = min(c, g) = 4, L_inf = 4;
    # 4 cells of 4 would be 16, but the 4 rows are R1 = 4 in all: L1 4; R2^2 = 16 (all in one
    # group): L2 4
    (S("a", kind=Kind.COUNT, group_by="age", groups=5), False, 4, None, (4, 4, 4, 4)),
    # L0 = 2, L_inf = 2, c = 4: two groups of 2 rows: L1 4, L2 sqrt(4 + 4)
    (S("a", kind=Kind.COUNT, group_by="age", groups=5, max_groups=2, max_rows=2), False, 4, None,
     (2, 2, 4, 2 * r2)),
    # replaced: 2 L0 = 4 groups of <= 2 (a count in a group holding old and new rows still
    # moves by <= 2): L1 min(4 x 2, 2 R1 = 8) = 8, L2 min(sqrt(4 x 4) = 4, 2 sqrt 8)
    (S("a", kind=Kind.COUNT, group_by="age", groups=5, max_groups=2, max_rows=2), True, 4, None,
     (4, 2, 8, 4)),
    # sum in [-10, 40] by 10 groups, L0 = 3, L_inf = 1, c = 3: 3 groups of M = 40: L1 120,
    # L2 40 sqrt 3
    (S("a", "v", Kind.SUM, lower=-10, upper=40, group_by="g", groups=10, max_groups=3, max_rows=1), False, 3,
     None, (3, 40, 120, 40 * r3)),
    # replaced: 6 groups; a group's size is not public, so one may lose a -10 and gain a 40:
    # max(U - L, M) = 50 a cell; L1 min(6 x 50, 2 R1 M = 240), L2 min(sqrt 6 x 50, 2 sqrt 3 x 40)
    (S("a", "v", Kind.SUM, lower=-10, upper=40, group_by="g", groups=10, max_groups=3, max_rows=1), True, 3,
     None, (6, 50, 240, math.sqrt(6) * 50)),
    # mean in [10, 40] over the smallest group's n = 200, L0 = 1, L_inf = 2, replaced: 2 groups of
    # 2 max(30, 40) / 200 = 0.4
    (S("a", "v", Kind.MEAN, lower=10, upper=40, n=200, group_by="g", groups=10, max_groups=1, max_rows=2),
     True, 2, 200, (2, 0.4, 0.8, 0.4 * r2)),
    # histogram by group, L_inf = 1: each of L0 = 2 groups gets one row in one bin
    (S("a", "v", Kind.HISTOGRAM, bins=6, group_by="g", groups=10, max_groups=2, max_rows=1), False, 2, None,
     (2, 1, 2, r2)),
    # replaced: 4 (group, bin) counts of 1
    (S("a", "v", Kind.HISTOGRAM, bins=6, group_by="g", groups=10, max_groups=2, max_rows=1), True, 2, None,
     (4, 1, 4, 2)),
    # L_inf = 2: a group's 2 rows may spread over 2 bins (a cell of several numbers): cells of
    # L1 2; R1 = 4: L1 4; R2^2 = 2 x 4: L2 sqrt 8
    (S("a", "v", Kind.HISTOGRAM, bins=6, group_by="g", groups=10, max_groups=2, max_rows=2), False, 4, None,
     (2, 2, 4, 2 * r2)),
    # replaced: 4 groups, a group holding old and new rows moves by L1 2 L_inf = 4; the whole table
    # L1 2 R1 = 8, L2 sqrt(2 x 8) = 4
    (S("a", "v", Kind.HISTOGRAM, bins=6, group_by="g", groups=10, max_groups=2, max_rows=2), True, 4, None,
     (4, 4, 8, 4)),
]


@pytest.mark.parametrize("stat, replace, c, n, expected", CASES,
                         ids=[f"{s.kind.value}-{s.group_by or 'whole'}-{'replace' if r else 'add'}-c{c}-{i}"
                              for i, (s, r, c, n, e) in enumerate(CASES)])
def test_each_kind_moves_as_derived_by_hand(stat, replace, c, n, expected):
    moves = contributions(stat, replace, c, n)
    cells, cell_l1, l1, l2 = expected
    assert moves.cells == cells
    assert moves.cell_l1 == pytest.approx(cell_l1, rel=1e-15)
    assert moves.l1 == pytest.approx(l1, rel=1e-15) and moves.l1 >= l1 * (1 - 1e-16)
    assert moves.l2 == pytest.approx(l2, rel=1e-15) and moves.l2 >= l2 * (1 - 1e-16)
    # the cells, each at its full move, never undercount the whole release's L1
    assert moves.cells * moves.cell_l1 >= moves.l1 * (1 - 1e-15)


@pytest.mark.parametrize("l0, linf, c, expected", [
    (1, 4, 4, (4, 16)),      # one group of 4
    (4, 4, 4, (4, 16)),      # the 4 rows are all in one group at worst
    (2, 2, 4, (4, 8)),       # two groups of 2
    (3, 2, 5, (5, 9)),       # 2 + 2 + 1
    (3, 1, 10, (3, 3)),      # 3 groups of 1
])
def test_the_rows_an_individual_reaches(l0, linf, c, expected):
    assert reach(l0, linf, c) == expected


def test_sensitivities_are_rounded_up_never_down():
    # 1/3 and 7 x 1/3 are not doubles: each sensitivity is the least double at or above the exact one
    for c in (1, 7):
        moves = contributions(S("a", "v", Kind.MEAN, lower=0, upper=1, n=3), False, c, 3)
        exact = Fraction(c, 3)
        assert Fraction(moves.l1) >= exact and Fraction(math.nextafter(moves.l1, 0)) < exact
