"""The error bound of the split bracket's lower side (see ``split``): a hybrid argument.

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

import numpy as np

from .atoms import U
from .binomial import log_rr
from .lattice import LatticePMF
from .pld import TAIL_FRACTION, ctd_weight


def kernel_shift(m: np.ndarray, step: float) -> float:
    """Bound on how much the rounded-up CTD weights (<= 17 ulps of each query's mass moved up one
    step) can raise delta: the moved mass times max_l |(1 - e^{x-l-D})^+ - (1 - e^{x-l})^+|."""
    return float(np.sum(m)) * (20 * U * -math.expm1(-step) + 1e-300)


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


def rr_log_mgf(e: np.ndarray, m: np.ndarray, thetas: np.ndarray) -> np.ndarray:
    """sum_i m_i log E_P[e^{theta L_i}] for exact RR(eps_i) queries (the rounded-down part)."""
    if e.size == 0:
        return np.zeros(thetas.size)
    lp, lq = log_rr(e)
    th = thetas[None, :]
    # -theta eps + log(q + p e^{2 theta eps}) = theta eps + log(q e^{-2 theta eps} + p)
    val = th * e[:, None] + np.log(np.exp(lq)[:, None] * np.exp(-2 * th * e[:, None]) + np.exp(lp)[:, None])
    return weighted_rows(m.astype(float), val)


def weighted_rows(m: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """sum_i m_i rows[i] (rows: groups x thetas) by numpy's pairwise sum along a contiguous axis:
    an order fixed by the sizes, so the same bits on any machine (@ goes through BLAS kernels
    picked at run time), and its error, ~(16 + log2 groups) ulps of the non-negative terms' sum,
    stays within block_terms' pad."""
    return np.sum(np.ascontiguousarray((m[:, None] * rows).T), axis=1)


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


def chain_rows(smooth_lo: LatticePMF, prefixes: list, blocks: list, e_rest, m_rest, e_smooth_lo, m_smooth,
                step: float, th: np.ndarray, delta_bar: float):
    """Per block of the rest: log S_theta, log K_b(theta), log M of the rest of W_j; and the
    additive mass term, for Err(x) >= delta(R_S, C_rest)(x) - delta(R_S, T_rest)(x).

    The rest is replaced block by block (block 1 first). For j in block b the other losses contain
    the smoothing part A_b: the rounded-down set R_S for b = 1, the CTD twins of blocks 1..b-1
    (``prefixes[b - 2]``, a computed lattice pmf) for b > 1.
    """
    log_m, log_term, pg = group_terms(e_rest, m_rest, step, th)
    mf = m_rest.astype(float)
    log_m_smooth = rr_log_mgf(e_smooth_lo, m_smooth, th)
    block_log_m = [weighted_rows(mf[b], log_m[b]) for b in blocks]
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
        additive += float(np.sum(mf[b] * pg[b])) * extra
    return np.array(rows_s), np.array(rows_k), np.array(rows_m), additive * (1 + 1e-9)
