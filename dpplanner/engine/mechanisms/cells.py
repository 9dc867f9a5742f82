"""Releases made of cells (tags ending in "*C"): what the noise-aware theorems compose for each.

A grouped statistic (a table with one cell per group), or a histogram whose bins one replaced
record moves two of, is ONE release of many cells with independent noise, of which neighbouring
datasets move at most C cells, each by at most one sensitivity (S lattice units for discrete
noise). Its (eps_i, delta_i) is the whole release's: the generic theorems compose it as one
release. "pld" and "zcdp" compose its C moved cells, each the kind's per-cell release:

- "laplace*C": every cell adds Laplace noise of scale sensitivity / (eps_i / C) (the model divides
  eps_i by C the same way, so the per-cell loss a = eps_i / C is the same double the "laplace"
  row of a plain release would carry): C releases of loss a; the whole is pure eps_i-DP.
- "gaussian*C": every cell adds Gaussian noise of sigma = sqrt(C) m sensitivity, m the analytic
  Gaussian multiplier of (eps_i, delta_i). C such cells compose to ONE Gaussian with
  mu^2 = C / (C m^2) = 1 / m^2: exactly the "gaussian" release of (eps_i, delta_i) (the moved
  cells are one shift of L2 norm sqrt(C) sensitivity). It is accounted as that.
- "eps-delta*C": every cell is (eps_i / C, delta_i / C)-DP (so the whole is (eps_i, delta_i)-DP by
  basic composition); C such worst-case pairs are composed.
- "discrete-laplace:S*C": every cell adds discrete Laplace noise of scale
  t = discrete_laplace_scale(eps_i, C S), so that C S / t <= eps_i: C releases DL(t, S).
- "discrete-gaussian:S*C": every cell adds discrete Gaussian noise of sigma =
  discrete_gaussian_sigma(eps_i, delta_i, S, cells=C), at which C such cells composed are
  (eps_i, delta_i)-DP: C releases DG(sigma, S).

Why composing C cells at the full shift bounds the release: the cells' noises are independent, so
the pair of output distributions is the product of the cells' pairs; a cell that is not moved is
the same distribution on both sides (no loss); a moved cell's pair, for symmetric log-concave
noise and a scalar shift d <= S, is dominated by the pair at shift S (objects.py,
discrete_objects.py); and domination is kept by products. So a release that moves fewer than C
cells, or by less, is dominated by C cells at the full shift. (The model uses "laplace*C" and
"discrete-*:S*C" only for cells whose move is one number; a cell of several numbers, e.g. one
group's histogram, is "eps-delta*C" with the pure epsilon its L1 sensitivity gives.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..validation import parse_tag
from .discrete import discrete_rows
from .gaussian import gaussian_multipliers


@dataclass(frozen=True)
class CellRows:
    """Plan rows as the noise-aware theorems compose them: per row its cells' parameters.

    ``eps``/``delta``: each cell's (eps_i / C, delta_i / C) on Laplace and eps-delta rows, the
    row's own elsewhere; ``mult``: multiplicity x C on the rows whose cells are composed one by
    one (Laplace, eps-delta, discrete), the multiplicity on Gaussian rows (one Gaussian each).
    ``lap``/``gau``/``ed``/``disc``: the rows of each kind (Laplace, Gaussian and discrete rows with
    eps_i > 0 only: eps_i = 0 means infinite noise, no loss); ``cells``: C per row."""

    eps: np.ndarray
    delta: np.ndarray
    mult: np.ndarray
    cells: np.ndarray
    lap: np.ndarray
    gau: np.ndarray
    ed: np.ndarray
    disc: np.ndarray
    tags: tuple


def cell_rows(eps, delta, mult, mech) -> CellRows:
    """The cells of validated rows (eps, delta, mult, mech tags)."""
    eps = np.asarray(eps, dtype=float)
    delta = np.asarray(delta, dtype=float)
    mult = np.asarray(mult, dtype=np.int64)
    tags = tuple(mech) if len(mech) else ("eps-delta",) * eps.size
    known = {t: parse_tag(t) for t in set(tags)}     # (a curve spells out ~100 rows of a few tags)
    parsed = [known[t] for t in tags]
    base = np.array([p[0] for p in parsed]) if parsed else np.zeros(0, dtype=str)
    cells = np.array([p[2] for p in parsed], dtype=np.int64) if parsed else np.zeros(0, dtype=np.int64)
    lap = (base == "laplace") & (eps > 0)
    gau = (base == "gaussian") & (eps > 0)
    ed = base == "eps-delta"
    disc = np.char.startswith(base.astype(str), "discrete-") & (eps > 0) if base.size else np.zeros(0, bool)
    split = (lap | ed) & (cells > 1)
    cell_eps = np.where(split, eps / np.where(split, cells, 1), eps)
    cell_delta = np.where(ed & (cells > 1), delta / np.where(ed, cells, 1), delta)
    cell_mult = np.where(gau, mult, mult * cells)
    return CellRows(cell_eps, cell_delta, cell_mult, cells, lap, gau, ed, disc, tags)


def only_generic(c: CellRows) -> bool:
    """Whether every release that adds loss is known only by its (eps_i, delta_i) (one-cell
    "eps-delta" rows): pld then composes exactly the worst-case pairs "optimal" composes, so its
    totals and curves are optimal's."""
    return not (c.lap.any() or c.gau.any() or c.disc.any() or (c.ed & (c.cells > 1)).any())


def kernel_ops(cells) -> int:
    """How many convolutions composing C copies of a kernel by repeated squaring takes (at most
    2 log2 C): the truncation budget is shared by that many more operations."""
    c = int(cells)
    return 0 if c <= 1 else 2 * math.ceil(math.log2(c))


def query_rows(inputs) -> tuple:
    """(cells, _columns of them, discrete releases) of a curve's queries (theorem_inputs.CurveInputs:
    the plan spelled out in order): the pld and zcdp curves of one request build them once (kept
    with the inputs' shared work). Never modified."""
    shared = getattr(inputs, "_shared", None)
    known = None if shared is None else shared.get("queries")
    if known is None:
        c = cell_rows(inputs.eps, inputs.delta, np.ones(len(inputs.eps), dtype=np.int64), inputs.mech)
        known = (c, _columns(c), discrete_rows(inputs.eps, inputs.delta, inputs.mech))
        if shared is not None:
            shared["queries"] = known
    return known


def _columns(c: CellRows):
    """Per query: each cell's eps and delta, the kinds' masks, the Gaussian multipliers and the
    number of cells C (a query of C cells adds C kernels, or for Gaussians one: see above)."""
    eps, delta, lap, gau, ed = c.eps, c.delta, c.lap, c.gau, c.ed
    m = np.zeros(eps.size)
    if gau.any():
        m[gau] = gaussian_multipliers(eps[gau], delta[gau])
    return eps, delta, lap, gau, ed, m, np.where(gau, 1, c.cells)
