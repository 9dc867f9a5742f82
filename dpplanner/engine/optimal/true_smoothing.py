"""The window bound S_theta of a smoothing part that holds TRUE queries beside lattice twins.

In the hybrid argument of ``split``, while query j is replaced by its twin the queries replaced
after it are still the true ones: any of them may join the smoothing part A (they are independent
of the rest) and leave the rest's MGF. That is never looser: S_theta(A + T) <= S_theta(A) M_T(theta),
and a twin's MGF bounds the true query's. The prefix curve replaces its first queries before any
twin can smooth them; with A a point mass, e^{-theta t} S_theta M_B(theta) is the bare Chernoff tail
instead of about D times the density near t (on the k = 1000 bench plan the first twelve queries
gave 5e-8 of the 6.4e-8 error bound). The exact distribution of a few true queries, 2^m atoms off
the lattice, smooths them instead.
"""

from __future__ import annotations

import numpy as np

from .atoms import U
from .binomial import log_rr
from .lattice import LatticePMF
from .hybrid_error import entry_bound, log_window_max, position_pad

#: Most atoms of A (lattice atoms x outcomes of the true queries) scanned for the window bound.
MAX_ATOMS = 1 << 10


def true_queries_that_fit(lattice_atoms: int, available: int) -> int:
    """How many true queries may join a smoothing part of ``lattice_atoms`` atoms (2^m outcomes)."""
    m = 0
    while m < available and lattice_atoms << (m + 1) <= MAX_ATOMS:
        m += 1
    return m


def _true_outcomes(e: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(positions, log masses, position error, log-mass error) of the sum of the losses of RR(e_i),
    each -e_i (log mass log q_i) or +e_i (log p_i)."""
    lp, lq = log_rr(e)
    pos, logp = np.zeros(1), np.zeros(1)
    for x, a, b in zip(e.tolist(), np.atleast_1d(lp).tolist(), np.atleast_1d(lq).tolist()):
        pos = np.concatenate([pos - x, pos + x])
        logp = np.concatenate([logp + b, logp + a])
    m = e.size
    # each addition rounds by <= u of a partial sum <= sum e (positions) or sum |log| (masses);
    # log_rr is accurate to a few ulps of its magnitudes (8 u budgeted)
    pos_err = 2.02 * (m + 1) * U * float(np.sum(e))
    log_err = 8 * U * (m + 2) * (float(np.sum(np.abs(lp) + np.abs(lq))) + 1.0)
    return pos, logp, pos_err, log_err


def log_window_max_with_true(l: np.ndarray, logp: np.ndarray, lam: float, e_true: np.ndarray,
                             step: float, thetas: np.ndarray) -> np.ndarray:
    """log S_theta for each theta, A = (lattice atoms within ``lam`` of ``l`` with log masses at
    most ``logp``) + (the true queries ``e_true``): an upper bound on the largest tilted mass
    sum P(A = a) e^{theta a} over the atoms of any open window of length ``step``."""
    pos, lpt, pos_err, log_err = _true_outcomes(np.asarray(e_true, dtype=float))
    c = (l[:, None] + pos[None, :]).ravel()
    w0 = (logp[:, None] + lpt[None, :]).ravel()
    order = np.argsort(c, kind="stable")
    c, w0 = c[order], w0[order]
    # every computed position is within big_lam of its exact one: an exact window of length
    # step holds atoms whose computed positions span at most step + 2 big_lam
    big_lam = lam + pos_err + 2 * U * float(np.max(np.abs(c)))
    ends = np.nextafter(c + (step + 2 * big_lam), np.inf)
    hi = np.searchsorted(c, ends, side="right")
    lo = np.arange(c.size)
    w = w0[:, None] + thetas[None, :] * (c + big_lam)[:, None]
    top = np.max(w, axis=0)
    with np.errstate(under="ignore"):
        v = np.exp(w - top[None, :])
    cs = np.vstack([np.zeros((1, thetas.size)), np.cumsum(v, axis=0)])
    win = np.max(cs[hi] - cs[lo], axis=0)
    # a partial sum is within gamma_n of the total, a difference of two within 2 gamma_n; each
    # exp within a few ulps (and its exponent within 8 u of its magnitude), underflows add < 1e-300
    n = c.size
    win = (win + 2.02 * (n + 2) * U * cs[-1] + n * 1e-300) * (1 + 8 * U)
    pad = log_err + 8 * U * (float(np.max(np.abs(w0))) + thetas * float(np.max(np.abs(c)) + big_lam) + 1.0)
    return np.log(win) + top + pad + 4 * U * np.abs(np.log(win) + top)


def smoothing_window(a: LatticePMF, terms: int, e_later: np.ndarray, step: float,
                     thetas: np.ndarray) -> tuple[np.ndarray, float, int]:
    """(log S_theta, additive mass, n) for the smoothing part A = ``a`` (the twins composed so far,
    ``terms`` kernels) + the first n of the true queries ``e_later``: as many as fit.

    Only the entries computed > 0 (L) are enumerated with the true queries T: most empty ones are
    structural (between a kernel's atoms), and each would halve the true queries that fit. An empty
    entry (Z) may still hold an exact mass that underflowed, at most entry_bound's 2^-1022, and
    tilted by e^{theta l} it can be the heaviest atom, so it is charged apart: every window's
    tilted mass splits into its L + T and Z + T parts, hence
        S_theta(A + T) <= S_theta(L + T) + S_theta(Z + T) <= S_theta(L + T) + S_theta(Z) M_T(theta)
    (the module doc's inequality), and S_theta(Z) <= max over empty entries of 2^-1022 e^{theta l}
    (an open window of length D holds one lattice atom at most; l bounds its position from above).
    """
    l, logp, extra = entry_bound(a, 0.0, terms)  # C' twins
    live = a.p > 0
    n_true = true_queries_that_fit(int(live.sum()), e_later.size)
    if not n_true:
        return log_window_max(l, logp, thetas), extra, 0
    e_true = e_later[:n_true]
    log_s = log_window_max_with_true(l[live], logp[live], 2 * position_pad(a, terms), e_true, step, thetas)
    if live.all():
        return log_s, extra, n_true
    dead = ~live
    # every term is rounded up: log_window_max's logp + theta l is two roundings (<= 2 ulps of its
    # magnitude), log M_T is padded by _log_mgf_up, and logaddexp(x, y) = max + log1p(e^-|x - y|)
    # is within a few ulps of its result (the log1p term is in [0, log 2])
    log_z = log_window_max(l[dead], logp[dead], thetas)
    log_z = log_z + 4 * U * (float(np.max(np.abs(logp[dead]))) + thetas * float(np.max(np.abs(l[dead]))) + 1.0)
    both = np.logaddexp(log_s, log_z + _log_mgf_up(e_true, thetas))
    return both + 8 * U * (np.abs(both) + 1.0), extra, n_true


def _log_mgf_up(e: np.ndarray, thetas: np.ndarray) -> np.ndarray:
    """An upper bound on log M_T(theta) = sum_i log E[e^{theta L_i}], L_i = -e_i or +e_i (RR(e_i)).

    Each term theta e + log(p + q e^{-2 theta e}) is within a few ulps of its magnitudes (log_rr:
    8 u budgeted, as in ``_true_outcomes``), and the sum of m terms within (m + 1) u of the sum of
    their magnitudes: 8 u (m + 2) of that sum covers both."""
    lp, lq = log_rr(e)
    lp, lq = np.atleast_1d(lp)[:, None], np.atleast_1d(lq)[:, None]
    th, x = thetas[None, :], e[:, None]
    terms = th * x + np.logaddexp(lp, lq - 2 * th * x)
    mag = np.sum(3 * th * x + np.abs(lp) + np.abs(lq), axis=0) + 1.0
    return np.sum(terms, axis=0) + 8 * U * (e.size + 2) * mag
