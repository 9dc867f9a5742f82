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
from .split import entry_bound, log_window_max, position_pad

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
    ``terms`` kernels) + the first n of the true queries ``e_later``: as many as fit."""
    l, logp, extra = entry_bound(a, 0.0, terms)  # C' twins
    live = a.p > 0  # (an empty entry's exact mass is within ``extra``)
    n_true = true_queries_that_fit(int(live.sum()), e_later.size)
    if not n_true:
        return log_window_max(l, logp, thetas), extra, 0
    log_s = log_window_max_with_true(l[live], logp[live], 2 * position_pad(a, terms), e_later[:n_true], step, thetas)
    return log_s, extra, n_true
