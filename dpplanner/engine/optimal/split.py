"""The split PLD bracket: a certified second-order bound on the connect-the-dots error.

Write each query's loss under P as L_i = -eps_i + Y_i, Y_i = 2 eps_i with probability p_i (else 0),
and let delta(x) = E[(1 - e^{x - L})^+]. On the lattice D Z, with T = the true query, C = its
connect-the-dots (CTD) twin and R = its rounded-down twin RR(eps^-) (see ``pld``):

    upper:  delta_true <= delta(C_all)                                         (Jensen)
    lower:  delta_true >= delta(R_S, T_rest)      (RR(eps^-) is a post-processing of RR(eps))
                       >= delta(R_S, C_rest) - Err                              (below)

for any subset S. Rounding down is first order in D, so S is a few queries for which it is cheap
(2 eps_i close above a lattice point, large eps_i); they make the SMOOTHING part A = R_S. The
connect-the-dots error of the rest is second order and certified as follows (a hybrid argument).

The error bound Err and its derivation live in ``hybrid_error``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional

import numpy as np

from .atoms import U, delta_at, delta_fn, delta_slope, lower_root, sup_root
from .hybrid_error import ErrorSum, block_terms, chain_rows, group_terms, kernel_shift
from .lattice import LatticePMF, convolve
from .pld import FFT_FRACTION, STEP_MAX, TAIL_FRACTION, lattice_points, plan_pmf, spectral_plan

#: Tilts tried for the error bound (every theta >= 0 is valid; the grid only tightens the bound).
THETA_POINTS = 48
#: Largest lattice the refinement loop will build.
MAX_POINTS = 1 << 22
#: Share of eta the rounded-down smoothing part may cost (its error is first order). A little
#: smoothing is all the error bound needs: measured on the bench plans (k = 50 .. 10^5), 0.01 gives
#: the narrowest bracket on a given lattice (k = 1000 at D = 2^-11: width 1.1e-4 against 2.9e-4 at
#: 0.2; k = 2000 at 2^-11: 2.5e-4 against 4.4e-4); a larger share pays more first-order rounding
#: than the smoother window bound saves.
SMOOTH_SHARE = 0.01


def _split_offsets(eps: np.ndarray, step: float) -> np.ndarray:
    """a_i = 2 eps_i - g_i in [0, D): how far above the lattice each query's atom sits (exact)."""
    return 2.0 * eps - np.floor(2.0 * eps / step) * step


def _sensitivity(e: np.ndarray, m: np.ndarray, delta_bar: float) -> np.ndarray:
    """Rough d eps / d eps_i near the answer (how much rounding eps_i down lowers the bound)."""
    sigma = math.sqrt(float(np.sum(m * e * e)))
    z = math.sqrt(2.0 * math.log(1.0 / min(delta_bar, 0.5)))
    return e * (1.0 + z / max(sigma, 1e-12))


def _tilt_guess(e: np.ndarray, m: np.ndarray, delta_bar: float) -> float:
    """The tilt near the answer, from a normal approximation (it only steers choices)."""
    t = np.tanh(e / 2)
    sigma = math.sqrt(max(float(np.sum(m * e * e * (1 - t * t))), 1e-300))
    return math.sqrt(2.0 * math.log(1.0 / min(delta_bar, 0.5))) / sigma


def _tilted_variance(e: np.ndarray, theta: float) -> np.ndarray:
    """Variance of one query's loss under the tilt theta: tilting makes big-eps queries nearly
    deterministic, so they smooth little and small-eps ones a lot."""
    # 1 / cosh(x) = 2 e^-|x| / (1 + e^-2|x|): cosh itself overflows from |x| ~ 710 (an epsilon
    # of 2000 beside small ones), where the variance is 0 to double precision
    a = np.exp(-np.abs(e * (1.0 + 2.0 * theta) / 2.0))
    return e * e * (2.0 * a / (1.0 + a * a)) ** 2


def choose_smoothing(e, m, delta_bar, step, budget) -> np.ndarray:
    """Groups rounded down to smooth the error bound: most tilted variance per first-order cost."""
    a = _split_offsets(e, step)
    cost = m * (a / 2.0) * _sensitivity(e, m, delta_bar)
    value = m * _tilted_variance(e, _tilt_guess(e, m, delta_bar))
    ratio = np.where(cost > 0, value / np.maximum(cost, 1e-300), np.inf)
    take = np.zeros(e.size, dtype=bool)
    spent = 0.0
    for g in np.argsort(-ratio, kind="stable").tolist():
        if spent + cost[g] > budget:
            break
        take[g] = True
        spent += cost[g]
    return take


def _as_lower(pmf: LatticePMF, e: np.ndarray, m: np.ndarray, delta_bar: float) -> LatticePMF:
    """Read an upper (CTD) pmf from below: drop the mass at +infinity, charge what was moved up.

    The composed pmf is the exact CTD composition plus a perturbation from (a) mass cut at the
    bottom and moved up (all cuts of one side total <= 1.5 TAIL_FRACTION delta_bar) and (c) FFT
    error (``err``), each moving delta by at most its mass; and (b) kernel weights rounded up by
    <= ~17 ulps of each query's mass, which shifts that much mass up by one step D, and so moves
    delta by at most (mass) x (1 - e^{-D}) (kernel_shift). The offset becomes the exact sum
    rounded down.
    """
    off = math.nextafter(math.nextafter(-math.fsum((m * e).tolist()), -math.inf), -math.inf)
    extra = 2 * TAIL_FRACTION * delta_bar + kernel_shift(m, pmf.step)
    return replace(pmf, upper=False, offset=off, inf_mass=0.0, err=(pmf.err + extra) * (1 + 4 * U))


def _pieces(e: np.ndarray, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups cut into pieces of 1, 1, 2, 4, ... copies, so that a plan of a few large groups
    still gets small early blocks (the hybrid replaces copies, not groups, one block at a time)."""
    if np.all(m == 1):
        return e, m
    pe, pm = [], []
    for x, k in zip(e.tolist(), m.tolist()):
        size, left = 1, int(k)
        while left > 0:
            take = min(size, left)
            pe.append(x)
            pm.append(take)
            left -= take
            if len(pm) >= 2 and pe[-2] == x:
                size *= 2
    return np.array(pe), np.array(pm, dtype=np.int64)


class SplitComposition:
    """One lattice step: the CTD upper pmf, the lower pmf delta(R_S, C_rest) and its error rows."""

    def __init__(self, e, m, delta_bar: float, step: float, budget: float, thetas: np.ndarray, cancel=None):
        smooth = choose_smoothing(e, m, delta_bar, step, budget)
        self.n_smooth = int(smooth.sum())
        self.thetas = thetas
        rest = ~smooth
        es, ms, er, mr = e[smooth], m[smooth], e[rest], m[rest]
        self.rows = None
        if er.size == 0:  # everything rounded down: the lower pmf needs no error term
            self.up_pmf = plan_pmf(es, ms, step, True, delta_bar, cancel)
            self.lower_pmf = plan_pmf(es, ms, step, False, delta_bar, cancel)
            return
        er, mr = _pieces(er, mr)
        # blocks of the rest, the queries with the smallest possible error first (the early
        # blocks get the least smoothing)
        _, _, pg = group_terms(er, mr, step, np.zeros(1))
        blocks = _blocks(np.argsort(pg * mr, kind="stable"))
        nb = len(blocks) + 2
        db = delta_bar / nb  # each plan_pmf call cuts <= 1.5 TAIL_FRACTION x its delta: <= 1.5 in all
        tail = TAIL_FRACTION * delta_bar / (4 * nb)
        fft = FFT_FRACTION * delta_bar / (4 * nb)
        spectral = _spectral_compositions(es, ms, er, mr, blocks, step, db, cancel)
        if spectral is not None:
            prefixes, s_lo, self.up_pmf, self.lower_pmf = spectral
            e_lo = np.floor(2.0 * es / step) * step / 2.0
            self.rows = chain_rows(s_lo, prefixes, blocks, er, mr, e_lo, ms, step, thetas, delta_bar)
            return
        prefixes = []
        for b in blocks:
            c = plan_pmf(er[b], mr[b], step, True, db, cancel)
            prefixes.append(c if not prefixes else convolve(prefixes[-1], c, tail, fft))
        c_rest = prefixes[-1]
        if es.size:
            s_up = plan_pmf(es, ms, step, True, db, cancel)
            s_lo = plan_pmf(es, ms, step, False, db, cancel)
            self.up_pmf = convolve(s_up, c_rest, tail, fft)
            self.lower_pmf = convolve(s_lo, _as_lower(c_rest, er, mr, delta_bar), tail, fft)
        else:
            s_lo = LatticePMF(step, 0, np.ones(1), 0.0, False)  # no smoothing: a point mass at 0
            self.up_pmf, self.lower_pmf = c_rest, _as_lower(c_rest, er, mr, delta_bar)
        e_lo = np.floor(2.0 * es / step) * step / 2.0
        self.rows = chain_rows(s_lo, prefixes, blocks, er, mr, e_lo, ms, step, thetas, delta_bar)

    def error(self, x_ref: float) -> ErrorSum:
        """Err as a function of x, with each block's tilt chosen at x_ref."""
        if self.rows is None:
            return ErrorSum(np.zeros(0), np.zeros(0), 0.0)
        log_s, log_k, rest_mgf, additive = self.rows
        thetas, coefs = block_terms(self.thetas, log_s, log_k, rest_mgf, x_ref)
        return ErrorSum(thetas, coefs, additive)


def _spectral_compositions(es, ms, er, mr, blocks, step: float, db: float, cancel=None):
    """(prefixes, R_S, upper pmf, lower pmf) of a plan large and smooth enough for ``spectral``,
    each straight from its characteristic function (its own small error, none accumulated through
    a chain of convolutions), or None. The lower pmf composes R_S with the rest's computed CTD
    kernels C': its read-out charges their rounded-up weights (``kernel_shift``), as ``_as_lower``
    does. The last prefix (the whole rest) is read by no block's error row."""
    up = spectral_plan([(es, ms, True), (er, mr, True)], step, True, db)
    lower = spectral_plan([(es, ms, False), (er, mr, True)], step, False, db)
    if up is None or lower is None:
        return None
    lower = replace(lower, err=(lower.err + kernel_shift(mr, step)) * (1 + 4 * U))
    prefixes = []
    for i in range(1, len(blocks)):
        if cancel is not None:
            cancel.check()
        idx = np.concatenate(blocks[:i])
        pre = spectral_plan([(er[idx], mr[idx], True)], step, True, db)
        prefixes.append(pre if pre is not None else plan_pmf(er[idx], mr[idx], step, True, db, cancel))
    s_lo = plan_pmf(es, ms, step, False, db, cancel) if es.size else LatticePMF(step, 0, np.ones(1), 0.0, False)
    return prefixes, s_lo, up, lower


def _blocks(order: np.ndarray) -> list:
    """Consecutive blocks of ``order`` of sizes ~n/64, n/64, n/32, ..., n/2 (each block is smoothed
    by all the blocks before it, so the big last blocks get most of the smoothing)."""
    n = order.size
    sizes = []
    left = n
    while left > 0:
        s = max(1, (left + 1) // 2) if left > max(2, n // 64) else left
        sizes.append(s)
        left -= s
    sizes.reverse()
    cuts = np.cumsum([0] + sizes)
    return [order[cuts[i]:cuts[i + 1]] for i in range(len(sizes))]


def split_side(e, m, delta_bar, step, budget, cancel=None, first_gap=1e-4,
               delta_bar_hi: Optional[float] = None) -> tuple[float, float, int]:
    """(upper, lower, number of rounded-down smoothing groups) on one lattice step; the lower
    bound is read at ``delta_bar_hi`` >= delta_bar (default: delta_bar)."""
    # the tilt grid is centred where the answer will be; a rough guess is enough (any tilt is valid)
    guess = _tilt_guess(e, m, delta_bar)
    thetas = np.concatenate([[0.0], guess * np.geomspace(0.1, 10.0, THETA_POINTS - 1)])
    comp = SplitComposition(e, m, delta_bar, step, budget, thetas, cancel)
    up = sup_root(comp.up_pmf.atoms(above=0.0), delta_bar)
    if not math.isfinite(up):
        return up, 0.0, comp.n_smooth
    atoms = comp.lower_pmf.atoms(above=0.0)
    err = comp.error(up)
    tol = max(1e-11, 1e-12 * up, 4e-3 * first_gap)  # a lower bound needs no more digits than that
    db_hi = delta_bar if delta_bar_hi is None else delta_bar_hi
    delta = delta_fn(atoms)
    lo = lower_root(lambda x: delta(x) - err(x) - db_hi, up, tol, first_gap,
                     delta_slope(atoms, up))
    return up, lo, comp.n_smooth


def model_step(e: np.ndarray, m: np.ndarray, eta: float) -> float:
    """The coarsest lattice step (a power of two) whose bracket is predicted to be within eta.

    Measured on the benchmark plans (k = 50 .. 10^5): width ~ C sqrt(k) D^2 / eps_rms with C = 1.2
    to 1.3 (the error sum grows like k D^2, the density of the loss falls like 1 / (sqrt(k)
    eps_rms)); C = 1.5 leaves a margin, since a step too fine costs twice the work where one too
    coarse costs a refinement (1.5x). Small plans are lumpier (see the module doc), and the grid
    must resolve the typical epsilon.
    """
    k = float(np.sum(m))
    rms = math.sqrt(float(np.sum(m * e * e)) / k)
    typical = float(np.sum(m * e)) / k
    lumpy = 1.0 + 300.0 / k  # measured: k = 100 needs about 4x the large-plan constant
    d0 = min(math.sqrt(eta * rms / (1.5 * lumpy * math.sqrt(max(k, 400.0)))), typical / 4)
    return 2.0 ** min(-5, math.floor(math.log2(max(d0, 2.0 ** -60))))


def split_profile(e: np.ndarray, m: np.ndarray, xs: np.ndarray, eta: float, delta_scale: float,
                  max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) bounds on delta(x) for each x from one split composition."""
    step = model_step(e, m, eta)
    while step < STEP_MAX and lattice_points(e, m, step) > max_points:
        step *= 2
    thetas = np.concatenate([[0.0], np.geomspace(1e-3, 300.0, 2 * THETA_POINTS - 1)])
    comp = SplitComposition(e, m, delta_scale, step, SMOOTH_SHARE * eta, thetas)
    up = delta_at(comp.up_pmf.atoms(), xs)
    atoms = comp.lower_pmf.atoms()
    lo = delta_at(atoms, xs)
    for i, x in enumerate(np.asarray(xs, dtype=float).tolist()):
        lo[i] = max(0.0, lo[i] - comp.error(x)(x))
    return up, lo
