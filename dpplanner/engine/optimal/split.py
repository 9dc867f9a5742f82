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

Replace the rest's queries by their CTD twins one at a time. For query j, given the sum W_j of all
the other losses (A, the twins before j, the true queries after j), splitting its atom Y_j = 2 eps_j
into g_j and g_j + D raises E[(1 - c e^{-Y_j})^+] (c = e^{x - W_j + eps_j}) by the Jensen gap of a
hinge, at most p_j G_j with
    G_j = e^D (1 - e^{-a}) (e^{-a} - e^{-D}) / (1 - e^{-D}) <= ~D / 4,    a = 2 eps_j - g_j,
and only if W_j lies in the open window I_j = (t_j, t_j + D), t_j = x + eps_j - g_j - D.
So Err(x) <= sum_j p_j G_j P(W_j in I_j). Write W_j = A + B_j (independent). For any theta >= 0,
    P(A in (s, s + D)) <= e^{-theta s} S_theta,   S_theta = max over windows of length D of
                                                  sum_{a in window} P(A = a) e^{theta a},
hence P(W_j in I_j) <= e^{-theta t_j} M_{B_j}(theta) S_theta, where M_{B_j} <= prod_{i != j}
M_i(theta), M_i the MGF of the CTD twin (the split is a mean-preserving spread of u = e^{-Y} and
e^{theta Y} = u^{-theta} is convex, so a twin's MGF bounds the true one's). With theta at the saddle
point, P(W_j in I_j) is about D times the density of the loss near x: the bound is loose only by
sd(loss) / sd(A) and the hinge's peak-to-mean ratio, and it shrinks like D^2.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional

import numpy as np

from .atoms import U, delta_at, delta_fn, delta_slope, lower_root, sup_root
from .binomial import log_rr
from .lattice import LatticePMF, convolve
from .pld import FFT_FRACTION, STEP_MAX, TAIL_FRACTION, ctd_weight, lattice_points, plan_pmf

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


def kernel_shift(m: np.ndarray, step: float) -> float:
    """Bound on how much the rounded-up CTD weights (<= 17 ulps of each query's mass moved up one
    step) can raise delta: the moved mass times max_l |(1 - e^{x-l-D})^+ - (1 - e^{x-l})^+|."""
    return float(np.sum(m)) * (20 * U * -math.expm1(-step) + 1e-300)


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


def entry_bound(a: LatticePMF, extra_mass: float, terms: int):
    """(upper bounds on the atom positions, log upper bounds on their masses, additive mass).

    The exact atoms sit on o + i D with D the step, so an open window of length D holds at most
    one of them. Every exact entry is <= p_hat (1 + rel) + e with sum(e) <= the returned mass.
    ``terms``: how many kernels were composed; each addition of offsets (rounded in the pmf's own
    direction, down for a lower pmf) is off by <= 2 ulps of the offset, so positions are raised
    by that much as well.
    """
    n = a.p.size
    idx = np.arange(a.start, a.start + n, dtype=float)
    l = a.offset + a.step * idx
    with np.errstate(divide="ignore"):
        logp = np.log(a.p * (1 + a.rel) * (1 + 8 * U) + 2.0 ** -1022)
    return l + position_pad(a, terms), logp, a.err + a.inf_mass + extra_mass


def position_pad(a: LatticePMF, terms: int) -> float:
    """How far a computed atom position of ``a`` (``terms`` kernels composed) may be from the exact
    one, either way: the offset's roundings and the product step x index."""
    return 4 * U * (abs(a.offset) * (terms + 2) + a.step * (abs(a.start) + a.p.size) + 1.0)


#: Largest (thetas x atoms) table ``log_window_max`` builds at once (beyond: one theta at a time).
WINDOW_MAX_CELLS = 1 << 16


def log_window_max(l: np.ndarray, logp: np.ndarray, thetas: np.ndarray) -> np.ndarray:
    """log S_theta = max_i (log p_i + theta l_i) for each theta (l ascending, every theta >= 0).

    An atom with one at least as heavy above it is never the max for theta >= 0: only the atoms
    heavier than every atom above them (at most the half above the mode) are scanned."""
    above = np.maximum.accumulate(logp[::-1])[::-1]
    keep = np.ones(l.size, dtype=bool)
    keep[:-1] = logp[:-1] > above[1:]
    l, logp = l[keep], logp[keep]
    if l.size * thetas.size <= WINDOW_MAX_CELLS:  # one (thetas x atoms) table: the same sums
        return np.max(logp[None, :] + thetas[:, None] * l[None, :], axis=1)
    return np.array([float(np.max(logp + th * l)) for th in thetas.tolist()])


def group_terms(e: np.ndarray, m: np.ndarray, step: float, thetas: np.ndarray):
    """Per group j: log M_j(theta) of the CTD twin, log(p_j G_j e^{-theta (eps_j - g_j - D)}), p_j G_j.

    The CTD weight is the kernels' own (``ctd_weight``, rounded up); a larger weight on g + D only
    raises M_j.
    """
    n = np.floor(2.0 * e / step)
    g = n * step
    a = 2.0 * e - g
    lp, lq = log_rr(e)
    w = ctd_weight(a, step)
    th = thetas[None, :]
    top = (g + step)[:, None]
    with np.errstate(under="ignore", divide="ignore"):
        inner = (np.exp(lq)[:, None] * np.exp(-th * top) + (np.exp(lp) * (1 - w))[:, None] * np.exp(-th * step)
                 + (np.exp(lp) * w)[:, None])
        log_m = -th * e[:, None] + th * top + np.log(inner)
        # e^{-a} - e^{-D} = e^{-a} (1 - e^{-(D - a)}): no cancellation as a -> D; rounded up
        G = np.where(a > 0, np.exp(step - a) * -np.expm1(-a) * -np.expm1(-(step - a)) / -np.expm1(-step), 0.0)
        G = G * (1 + 16 * U)
        pg = np.exp(lp) * G
        log_term = np.log(pg)[:, None] - th * (e - g - step)[:, None] - log_m
    return log_m, log_term, pg


def _rr_log_mgf(e: np.ndarray, m: np.ndarray, thetas: np.ndarray) -> np.ndarray:
    """sum_i m_i log E_P[e^{theta L_i}] for exact RR(eps_i) queries (the rounded-down part)."""
    if e.size == 0:
        return np.zeros(thetas.size)
    lp, lq = log_rr(e)
    th = thetas[None, :]
    # -theta eps + log(q + p e^{2 theta eps}) = theta eps + log(q e^{-2 theta eps} + p)
    val = th * e[:, None] + np.log(np.exp(lq)[:, None] * np.exp(-2 * th * e[:, None]) + np.exp(lp)[:, None])
    return m.astype(float) @ val


def block_terms(th: np.ndarray, log_s: np.ndarray, log_k: np.ndarray, rest_mgf: np.ndarray,
                x_ref: float) -> tuple[np.ndarray, np.ndarray]:
    """Per block (rows of the (blocks x thetas) inputs): the tilt theta_b chosen at x_ref and the
    log coefficient c_b of its bound exp(c_b - theta_b x) (-inf: the block has no error at all).

    Every log here is within a few ulps of its magnitude, so the exponent is padded generously.
    """
    with np.errstate(invalid="ignore"):
        c = log_s + log_k + rest_mgf
        mag = np.abs(log_s) + np.abs(log_k) + np.abs(rest_mgf)
        mag[~np.isfinite(mag)] = 0.0  # only where c is -inf (no error) or +inf (no bound) anyway
        pad = 64 * U * (mag + th * abs(x_ref) + 1.0)
        score = c + pad - th * x_ref
    score[np.isnan(score)] = np.inf
    i = np.argmin(score, axis=1)
    rows = np.arange(c.shape[0])
    coef = c[rows, i] + pad[rows, i]
    coef[np.isnan(coef)] = np.inf
    return th[i], coef


class ErrorSum:
    """x -> sum over blocks of exp(c_b - theta_b x) + additive (each term valid for every x)."""

    def __init__(self, thetas: np.ndarray, coefs: np.ndarray, additive: float):
        live = coefs > -np.inf
        self.thetas, self.coefs, self.additive = thetas[live], coefs[live], additive

    def __call__(self, x: float) -> float:
        ex = self.coefs - self.thetas * x + 8 * U * (self.thetas * abs(x) + 1.0)
        if ex.size and float(ex.max()) >= 700:
            return math.inf
        total = float(np.exp(ex).sum()) * (1 + 1e-9) * (1 + 2 * (ex.size + 1) * U)
        return (total + self.additive) * (1 + 1e-12)


def _chain_rows(smooth_lo: LatticePMF, prefixes: list, blocks: list, e_rest, m_rest, e_smooth_lo, m_smooth,
                step: float, th: np.ndarray, delta_bar: float):
    """Per block of the rest: log S_theta, log K_b(theta), log M of the rest of W_j; and the
    additive mass term, for Err(x) >= delta(R_S, C_rest)(x) - delta(R_S, T_rest)(x).

    The rest is replaced block by block (block 1 first). For j in block b the other losses contain
    the smoothing part A_b: the rounded-down set R_S for b = 1, the CTD twins of blocks 1..b-1
    (``prefixes[b - 2]``, a computed lattice pmf) for b > 1.
    """
    log_m, log_term, pg = group_terms(e_rest, m_rest, step, th)
    mf = m_rest.astype(float)
    log_m_smooth = _rr_log_mgf(e_smooth_lo, m_smooth, th)
    block_log_m = [mf[b] @ log_m[b] for b in blocks]
    # The hybrid's twins are the computed kernels C' (weights rounded up); C' differs from the
    # exact CTD twin by a tiny shift that _as_lower charges (kernel_shift), so the smoothing pmfs
    # (compositions of C') need no per-entry charge for it.
    rows_s, rows_k, rows_m, additive = [], [], [], 0.0
    m_total = float(np.sum(m_smooth))
    for bi, b in enumerate(blocks):
        if bi > 0:
            m_total += float(np.sum(m_rest[blocks[bi - 1]]))
        if b.size == 0:
            continue
        later = np.sum(block_log_m[bi:], axis=0)
        if bi == 0:
            l, logp, extra = entry_bound(smooth_lo, TAIL_FRACTION * delta_bar, int(np.sum(m_smooth)))
            rows_m.append(later)
        else:
            l, logp, extra = entry_bound(prefixes[bi - 1], 2 * TAIL_FRACTION * delta_bar, int(m_total))
            rows_m.append(later + log_m_smooth)
        rows_s.append(log_window_max(l, logp, th))
        rows_k.append(np.logaddexp.reduce(np.log(mf[b])[:, None] + log_term[b], axis=0))
        additive += float(mf[b] @ pg[b]) * extra
    return np.array(rows_s), np.array(rows_k), np.array(rows_m), additive * (1 + 1e-9)


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
        self.rows = _chain_rows(s_lo, prefixes, blocks, er, mr, e_lo, ms, step, thetas, delta_bar)

    def error(self, x_ref: float) -> ErrorSum:
        """Err as a function of x, with each block's tilt chosen at x_ref."""
        if self.rows is None:
            return ErrorSum(np.zeros(0), np.zeros(0), 0.0)
        log_s, log_k, rest_mgf, additive = self.rows
        thetas, coefs = block_terms(self.thetas, log_s, log_k, rest_mgf, x_ref)
        return ErrorSum(thetas, coefs, additive)


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
