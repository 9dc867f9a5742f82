"""Errors of different statistics on one scale: the error as a percentage of the statistic's range.

Errors come in records, dollars and proportions, which cannot share an axis. Divided by the
largest value the statistic can take they can: a count's range is the dataset size n, a sum's
n·max(|a|, |b|), a mean's b − a, a proportion's 1, a histogram's or CDF's n records. Without the
numbers that range needs (no n, a custom statistic) there is no relative error.
"""

from __future__ import annotations

import math
from typing import Optional

from .statistic import Kind, Statistic


def full_range(stat: Statistic, dataset_size: Optional[int]) -> Optional[float]:
    """The width of the values the released statistic can take, or None when it is unknown."""
    n = stat.n if stat.n is not None else dataset_size
    if stat.kind is Kind.MEAN and stat.lower is not None and stat.upper is not None:
        return float(stat.upper) - float(stat.lower)
    if stat.kind is Kind.PROPORTION:
        return 1.0
    if n is None or n <= 0:
        return None
    if stat.kind in (Kind.COUNT, Kind.HISTOGRAM, Kind.QUANTILE):
        return float(n)
    if stat.kind is Kind.SUM and stat.lower is not None and stat.upper is not None:
        return n * max(abs(float(stat.lower)), abs(float(stat.upper)))
    return None


def relative_error_percent(stat: Statistic, error: Optional[float], dataset_size: Optional[int]) -> float:
    """100 · error / range, rounded up like every displayed error (nan when undefined)."""
    scale = full_range(stat, dataset_size)
    if error is None or scale is None or not scale > 0 or not math.isfinite(error):
        return math.nan
    # One division and one multiplication, each at most half an ulp off: nudge up by two ulps.
    return math.nextafter(math.nextafter(100.0 * error / scale, math.inf), math.inf)
