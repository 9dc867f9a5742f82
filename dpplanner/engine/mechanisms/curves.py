"""pld_curve / zcdp_curve: total epsilon after the first k releases, for every k in ``ks``.

``inputs`` has per-query (expanded, in order) eps, delta, mech of length K, the sorted int64 ks
(1..K), delta_g, eta, mode, cancel and progress; in "repeat" mode the sequence is already the
repeated query, so both modes are the same prefix computation.

pld: releases known only by their (eps_i, delta_i) are the worst-case pairs the generic optimal
curve composes (as pld's total is optimal's then): that curve, shared with the "optimal" row.
Otherwise one lattice step for the whole curve (the one the full plan's bracket settles on, or for
upper bounds only, the coarsest one on which it met eta, or one 2-4 times coarser than a large
one if the whole plan's upper there is within eta). The
Laplace and RR releases are added one at a time to running upper and lower pmfs (small kernels:
shifted adds or direct sums, relative errors only); at each requested k the prefix's Gaussians,
one Gaussian with mu_k^2 = sum of 1/m_i^2 so far, are mixed in exactly at read-out (readout.py).
"""

from __future__ import annotations

import math

import numpy as np

from ..delta import delta_bar_from_log, delta_bar_up_from_log, log_survival_prefix
from ..memo import Memo
from ..numerics import cumsum_up, inverse_square, round_down, round_up, tiny_down, tiny_up
from ..optimal.atoms import sup_root
from ..optimal.lattice import LatticePMF, compose_all, convolve, power
from ..optimal.pld import FFT_FRACTION, TAIL_FRACTION
from ..optimal.prefix_reads import upper_root_from
from ..theorem_inputs import CurveInputs
from .bracket import _gaussian_root, aligned_step, initial_step, lattice_points
from .ladder import CHEAP_POINTS, FIRST_POINTS, bracket
from .composition import beside, twins
from .cells import kernel_ops, only_generic, query_rows
from .discrete import choose_twins, grouped
from .kernels import laplace_lower, laplace_upper, rr_lower, rr_upper
from .readout import BATCH_ATOMS, LatticeAtoms, mixed_deltas, mixed_roots
from .zcdp import cks_epsilon, rho_gaussian, rho_pure

U = 2.0 ** -53
#: Roots of prefixes of Gaussians alone by (mu, delta_bar, side): a plan's first releases keep them
#: from edit to edit (synthetic-100's three, ~0.3 ms each, were read again at every edit).
_ALONE = Memo(1 << 12)


def zcdp_curve(inputs):
    """(upper, None): the zCDP + CKS total after each k (inf where the deltas do not fit)."""
    _c, (eps, delta, lap, gau, ed, m, cells), disc = query_rows(inputs)
    ks = np.asarray(inputs.ks, dtype=np.int64)
    terms = np.where(lap | ed, rho_pure(eps), 0.0)
    with np.errstate(divide="ignore"):
        terms = np.where(gau, rho_gaussian(np.where(gau, m * (1 - 2 * U), 1.0)), terms)
    # (equal rows share one release object: each distinct release's rho once, not per query)
    rho_of = {id(d): d.rho() for d in {id(d): d for d in disc if d is not None}.values()}
    terms = np.array([rho_of[id(d)] if d is not None else t for d, t in zip(disc, terms.tolist())])
    rho = cumsum_up(terms * cells)[ks - 1]      # (C cells: C times a cell's rho; exact products)
    spent = cumsum_up(np.where(ed, delta * (1 + 2 * U), 0.0))[ks - 1]
    used = (inputs.delta_g - spent) * (1 - 2 * U)
    out = np.full(ks.size, np.inf)
    ok = used > 0
    if ok.any():
        out[ok] = np.atleast_1d(cks_epsilon(rho[ok], used[ok]))
    return out, None


def pld_curve(inputs):
    """(upper, lower, notes) over inputs.ks: certified bounds on the exact epsilon of each prefix,
    and per point "" where it met eta, else its width and why not (Curve.notes)."""
    c, (eps, delta, lap, gau, ed, m, cells), disc = query_rows(inputs)
    if only_generic(c) and hasattr(inputs, "optimal_curve"):
        # (computed once per request for both rows; per query on pld's lattice it cost ~20x more:
        # 5000 generic releases, ~65 s against ~3 s)
        return inputs.optimal_curve()
    ks = np.asarray(inputs.ks, dtype=np.int64)
    delta_g, cancel, progress = float(inputs.delta_g), inputs.cancel, inputs.progress
    log_surv = log_survival_prefix(np.where(ed, delta, 0.0))[ks - 1]
    dbars = np.atleast_1d(delta_bar_from_log(delta_g, log_surv))      # the upper twin is read here
    dbars_hi = np.atleast_1d(delta_bar_up_from_log(delta_g, log_surv))  # the lower twin here
    feasible = dbars >= 0
    upper = np.full(ks.size, np.inf)
    lower = np.full(ks.size, np.inf)
    if not feasible.any():
        return upper, lower
    k_last = int(ks[feasible][-1])
    head = slice(0, k_last)
    ones = np.ones(k_last, dtype=np.int64)
    c_head = cells[head]
    a = eps[head][lap[head]]
    d_head = [d for d in disc[:k_last] if d is not None]
    d_cells = [int(c) for d, c in zip(disc[:k_last], c_head.tolist()) if d is not None]
    db_min = float(dbars[feasible].min())
    # the whole plan's bracket (and its twins) at the totals' eta where that is no coarser: the one
    # its total composed, in memory (a third of an edit's curve); a coarser one would miss eta here
    eta = float(min(inputs.eta, getattr(inputs, "total_eta", None) or inputs.eta))
    r, _ = twins((_up2(a), _down2(a)), c_head[lap[head]], (m[head][gau[head]] * (1 - 2 * U),
                 m[head][gau[head]] * (1 + 2 * U)), ones[gau[head]], eps[head][ed[head]],
                 delta[head][ed[head]], c_head[ed[head]], delta_g, d_head, d_cells, eta, db_min)
    # the discrete rows the whole plan's bracket composes as continuous twins: the same here (a
    # row of C > 1 cells keeps its exact discrete kernel, composed C times: as sound, if wider)
    rows = _Rows(eps, lap, gau, m, disc, d_head, db_min, eta, cells,
                 beside(a, c_head[lap[head]], m[head][gau[head]], ones[gau[head]], eps[head][ed[head]],
                        c_head[ed[head]]))
    lap, gau, disc = rows.lap, rows.gau, rows.disc
    tau_up, tau_lo = cumsum_up(rows.tau_up)[ks - 1], cumsum_up(rows.tau_lo)[ks - 1]
    dbars = np.where(tau_up > 0, (dbars - tau_up) * (1 - 2 * U), dbars)
    dbars_hi = np.where(tau_lo > 0, (dbars_hi + tau_lo) * (1 + 2 * U), dbars_hi)
    feasible = dbars >= 0
    want_lower = getattr(inputs, "want_lower", True)
    full = bracket(r, eta, cancel) if r is not None else None
    step = 0.0 if full is None else full.step
    if step == 0.0 and r is not None and (r.a_up.size or r.rr_eps.size or r.disc):
        # no lattice fits these releases (e.g. an epsilon of 1e300): nothing better than the
        # generic optimal curve above, and 0 below, is certified
        upper = inputs.optimal()[0] if isinstance(inputs, CurveInputs) else upper
        return upper, np.zeros(ks.size), _notes(inputs, upper, np.zeros(ks.size), f"no lattice fits ({full.detail})")
    if step == 0.0 and any(d is not None for d in rows.disc[:k_last]):
        # the whole plan's bracket needed no lattice (its discrete releases all composed as
        # Gaussian twins, in closed form), but a release of C > 1 cells keeps its discrete kernel
        # here: any lattice is sound for it, so the ladder's first one
        step = initial_step(eta)
    inv2_up = np.where(gau, tiny_up(inverse_square(np.where(gau, rows.m_up, 1.0)), True), 0.0)
    inv2_lo = np.where(gau, tiny_down(inverse_square(np.where(gau, rows.m_lo, 1.0))), 0.0)
    mu2_up = cumsum_up(inv2_up * (1 + 8 * U))[ks - 1]
    mu2_lo = np.cumsum(inv2_lo * (1 - 8 * U))[ks - 1] * (1 - 2 * (ks + 2.0) * U)
    db_min = float(dbars[feasible].min())
    # a query of C > 1 cells adds its cells' kernel composed C times (by squaring: kernel_ops(C)
    # more convolutions, once per distinct kernel), each within the same share of the budgets
    powered = {(float(eps[q]), bool(lap[q]), disc[q], int(cells[q])) for q in range(k_last) if cells[q] > 1}
    n_ops = k_last + ks.size + 4 + sum(kernel_ops(key[-1]) for key in powered)
    shape = _root_shape(eps, lap | ed | np.array([d is not None for d in disc], dtype=bool), gau, rows.m_up,
                        ks, dbars, cells)

    last = int(np.flatnonzero(ks == k_last)[0])
    # (as Python lists: indexing numpy arrays query by query cost ~1 ms of a 100-query curve)
    cells_of, lap_of, ed_of, eps_of, ok = (x.tolist() for x in (cells, lap, ed, eps, feasible))

    def read_all(step: float, is_upper: bool, done: float, share: float, within=None):
        """One twin's bounds at every k on lattice ``step`` (progress from ``done``, ``share`` wide).
        ``within``: where the whole plan's root must be certified to be (at most on the upper side,
        at least on the lower) for the lattice to be worth reading: one evaluation of its bound
        there, before the others left in the last batch are read (None if it fails)."""
        out = np.full(ks.size, np.inf)
        mu2, dbs = (mu2_up if is_upper else mu2_lo).tolist(), (dbars if is_upper else dbars_hi).tolist()
        a_q_of, rr_of = (x.tolist() for x in ((rows.a_up, _up2(eps)) if is_upper else
                                              (rows.a_lo, _down2(eps))))
        running = LatticePMF(step or 1.0, 0, np.ones(1), 0.0, is_upper)
        pure = 0.0   # sum of the a_i and RR eps_i so far (the exact value at delta 0)
        rest, q = False, 0
        kernels, pures = {}, {}     # (per distinct release)
        mixed = _MixedReads(out, is_upper, shape, (full.upper, last) if full is not None else None)
        before = (0.0, math.inf)    # the last root read here (not mixed) and its delta_bar
        for j, k in enumerate(ks.tolist()):
            if cancel is not None:
                cancel.check()
            batch = []
            while q < k:
                c_q, d = cells_of[q], disc[q]
                if d is not None:     # (its tails: a share of the truncation budget)
                    key = (d.kind, d.param, d.shift, c_q)   # (its fields: the dataclass's hash is slow)
                    if key not in kernels:
                        kernels[key] = _cells(d.kernel(step, is_upper, TAIL_FRACTION * db_min / n_ops),
                                              c_q, db_min / n_ops)
                        pures[key] = d.pure(is_upper)
                    batch.append(kernels[key])
                    pure += pures[key] * c_q
                    rest = True
                elif lap_of[q]:
                    a_q = a_q_of[q]
                    key = (a_q, True, c_q)
                    if key not in kernels:  # equal releases share one kernel
                        kernel = laplace_upper(a_q, step) if is_upper else laplace_lower(a_q, step)
                        kernels[key] = _cells(kernel, c_q, db_min / n_ops)
                    batch.append(kernels[key])
                    pure += a_q * c_q
                    rest = True
                elif ed_of[q] and eps_of[q] > 0:
                    key = (eps_of[q], False, c_q)
                    if key not in kernels:
                        kernel = rr_upper(eps_of[q], step) if is_upper else rr_lower(eps_of[q], step)
                        kernels[key] = _cells(kernel, c_q, db_min / n_ops)
                    batch.append(kernels[key])
                    pure += rr_of[q] * c_q
                    rest = True
                q += 1
            if batch:
                # the releases up to the next read-out are composed with each other first (small
                # pmfs), then with the running pmf once: as many convolutions (each within its
                # share of the budgets), but one pass over the long running array instead of many
                tail, fft = TAIL_FRACTION * db_min / n_ops, FFT_FRACTION * db_min / n_ops
                step_pmf = batch[0] if len(batch) == 1 else compose_all(batch, tail, fft, cancel)
                running = convolve(running, step_pmf, tail, fft)
            if ok[j]:
                db = dbs[j]
                mu = math.sqrt(max(mu2[j], 0.0))
                if db > 0.0 and rest and mu > 0:
                    mixed.add(j, running, mu, db)
                else:
                    # the loss only grows with k: at a delta_bar no larger, the root is at least
                    # the last one (its lower end certifies a floor; its upper end only a start)
                    below = before[0] if db <= before[1] else 0.0
                    out[j] = _read(running, rest, pure, mu, db, is_upper, below)
                    before = (float(out[j]), db) if math.isfinite(out[j]) else before
            if progress is not None and j % 16 == 0:
                progress(done + share * (j + 1) / ks.size)
        if within is not None and not mixed.certifies(last, within):
            return None
        mixed.flush()
        return out

    if want_lower:
        # both sides: the lattice of the total's bracket; where that is a first rung made finer for
        # the total's upper end alone (bracket.finer_for_ctd), each side is read on one of about
        # FIRST_POINTS, as before that, kept where its whole-plan end is within eta of the
        # bracket's other end (the 100-query example's curve at eta 1e-2: 3.5 times the points)
        eta = float(inputs.eta)
        coarse = step
        if step and full.rung == 0 and (points := lattice_points(r, step)) > 2 * FIRST_POINTS:
            coarse = max(aligned_step(r, step * points / FIRST_POINTS), step)
        upper = read_all(coarse, True, 0.0, 0.5, None if coarse == step else full.lower + eta)
        lower = read_all(coarse, False, 0.5, 0.5, None if coarse == step else full.upper - eta)
        upper = read_all(step, True, 0.0, 0.5) if upper is None else upper
        lower = read_all(step, False, 0.5, 0.5) if lower is None else lower
    else:
        # upper bounds only (the plot): the coarsest lattice on which the bracket met eta; if that
        # is the total's own (of 512+ points), one with a quarter of its points or fewer, down to
        # about 512 (the total's first lattice is made fine for its upper end: bracket.CTD_SHARE),
        # kept if its upper for the whole plan is within eta of the bracket's lower end, else the
        # total's. (On the bench's 20 edits of the 100-query example it was kept 16 times, the
        # curve taking 2/3 the time; the whole plan is checked first, so a miss costs the
        # composition and one evaluation.)
        coarse = full.first_fit or step
        if coarse == step and step and (points := lattice_points(r, step)) >= CHEAP_POINTS / 8:
            coarse = max(aligned_step(r, step * max(4.0, points / (CHEAP_POINTS / 8))), step)
        eta = float(inputs.eta)
        upper = read_all(coarse, True, 0.0, 1.0, None if coarse in (step, full.first_fit) else full.lower + eta)
        if upper is None:
            upper = read_all(step, True, 0.0, 1.0)
    upper = np.where(np.isfinite(upper), round_up(upper), upper)
    if full is not None:        # the whole prefix's own bracket (what the total reports) is valid too
        upper[ks == k_last] = np.minimum(upper[ks == k_last], full.upper)
    if isinstance(inputs, CurveInputs):  # never above the generic optimal curve of the same releases
        upper = np.minimum(upper, inputs.optimal()[0])
    lower = round_down(lower)
    if full is not None and want_lower:     # and its lower end
        lower[ks == k_last] = np.maximum(lower[ks == k_last], full.lower)
    lower = np.minimum(lower, upper)
    why = f"every prefix is read on the whole plan's lattice {step:.3g}" if step else "closed form"
    if full is not None and full.upper - full.lower > float(inputs.eta):
        why += f", where the whole plan's own bracket misses eta too ({full.detail})"
    return upper, lower, _notes(inputs, upper, lower, why + ("; compose() of the prefix refines its own" if step else ""))


def _notes(inputs, upper, lower, why: str) -> tuple:
    """Per point: "" where it met eta (or no lower side was asked for), else its width and why."""
    from ..curve import width_notes     # (engine.curve imports the registry, which imports this)

    if not getattr(inputs, "want_lower", True):
        return ("",) * len(upper)
    return width_notes(upper, lower, float(inputs.eta), why)


def _up2(a):
    return np.nextafter(np.nextafter(a, np.inf), np.inf)


def _down2(a):
    return np.nextafter(np.nextafter(a, 0.0), 0.0)


class _Rows:
    """The per-query columns of a curve, with the discrete rows that the whole plan's bracket
    composes as continuous twins (discrete.choose_twins, on the same releases, delta_bar and eta)
    turned into Laplace / Gaussian rows: a_up / a_lo per Laplace row (the continuous ones' a
    bracketed by two ulps), m_up / m_lo per Gaussian row (the upper twin's multiplier, the lower
    one's) and the twins' slacks tau_up / tau_lo per row. ``beside``: the head's continuous
    releases for choose_twins (composition.beside, as the whole plan's bracket has them)."""

    def __init__(self, eps, lap, gau, m, disc, d_head, delta_bar: float, eta: float, cells, beside) -> None:
        n = eps.size
        self.lap, self.gau, self.disc = lap.copy(), gau.copy(), list(disc)
        self.a_up, self.a_lo = np.where(lap, _up2(eps), 0.0), np.where(lap, _down2(eps), 0.0)
        self.m_up, self.m_lo = m.copy(), m.copy()
        self.tau_up, self.tau_lo = np.zeros(n), np.zeros(n)
        rel, mult = grouped(d_head, [1] * len(d_head))
        twin_of = {(rel[i].kind, rel[i].param, rel[i].shift): t      # (by their fields, as grouped)
                   for i, t in choose_twins(rel, mult, delta_bar, eta, beside).items()}
        for q, d in enumerate(disc):
            t = twin_of.get((d.kind, d.param, d.shift)) if d is not None and cells[q] == 1 else None
            if t is None:
                continue
            self.disc[q] = None
            if d.kind == "laplace":
                self.lap[q], self.a_lo[q], self.a_up[q] = True, t[0], t[1]
            else:
                self.gau[q], self.m_up[q], self.m_lo[q] = True, t.m_up, t.m_lo
                self.tau_up[q], self.tau_lo[q] = t.tau_up, t.tau_lo


def _cells(kernel: LatticePMF, cells: int, share: float) -> LatticePMF:
    """A query's C cells: its cell's kernel composed C times (``share``: one operation's part of
    the delta_bar budgets, of which the squaring takes kernel_ops(C) operations)."""
    if cells <= 1:
        return kernel
    return power(kernel, cells, TAIL_FRACTION * share, FFT_FRACTION * share)


def _read(running, rest: bool, pure: float, mu: float, db: float, upper: bool, below: float = 0.0):
    """The read-outs that need no Gaussian mixed in (those are _MixedReads'). ``below``: the same
    side's root of a shorter prefix at a delta_bar no smaller (0: none), which this root is at
    least: the lower read scans only the atoms above it (a certified floor), the upper read starts
    below it (``prefix_reads.upper_root_from``: any start is sound for an upper read)."""
    if db == 0.0:
        return math.inf if mu > 0 else (round_up(pure) if upper else round_down(pure))
    if not rest:
        if mu <= 0:
            return 0.0
        root = _ALONE.get((mu, db, upper))
        if root is None:
            root = _gaussian_root(mu, db, upper, 1e-13)     # (a few ulps: 10 evaluations, not 13+)
            _ALONE.put((mu, db, upper), root)
        return root
    if not upper:
        return sup_root(running.atoms(above=below), db, below)
    return min(upper_root_from(running, db, below), round_up(pure))


def _root_shape(eps, pure, gau, m, ks, dbars, cells) -> np.ndarray:
    """Where the searches of the prefixes' roots start, up to a common factor (no rounding control):
    the least of zCDP's total rho + 2 sqrt(rho log 1/delta_bar) and the pure releases' sum plus the
    Gaussians' mu^2/2 + mu sqrt(2 log 1/delta_bar) (short prefixes: synthetic-100's 3.8% off, not 5.7%)."""
    with np.errstate(divide="ignore", over="ignore"):
        inv2 = np.where(gau, 1.0 / np.where(gau, m, 1.0) ** 2, 0.0)
        rho = np.cumsum(np.where(pure, 0.5 * eps * eps * cells, 0.0) + inv2 / 2)[ks - 1]
        mu2, log_inv = np.cumsum(inv2)[ks - 1], np.log(1 / np.clip(dbars, 1e-300, 0.5))
        basic = np.cumsum(np.where(pure, eps * cells, 0.0))[ks - 1] + mu2 / 2 + np.sqrt(2 * mu2 * log_inv)
        return np.minimum(rho + 2 * np.sqrt(rho * log_inv), basic)


class _MixedReads:
    """Read-outs of prefixes with both a lattice part and Gaussians, made in batches (one pass over
    all their atoms serves them all; see readout.py), each batch holding at most about
    BATCH_ATOMS atoms. A batch starts each search at ``anchor``, a root near one prefix's (the
    whole plan's bracket's end), or else the last root read before it, scaled by ``shape`` (roots
    grow with k much as the zCDP total does): a few Halley steps fewer each."""

    def __init__(self, out: np.ndarray, upper: bool, shape: np.ndarray, anchor=None) -> None:
        self.out, self.upper, self.shape = out, upper, shape
        self.items: list = []
        self.size = 0
        self.anchor: tuple[float, int] | None = anchor     # (a root, its position in ks)

    def add(self, j: int, pmf: LatticePMF, mu: float, db: float) -> None:
        self.items.append((j, pmf, mu, db))
        self.size += pmf.p.size
        if self.size >= BATCH_ATOMS:
            self.flush()

    def _guesses(self, js) -> np.ndarray:
        if self.anchor is None or not (self.anchor[0] > 0 and math.isfinite(self.anchor[0])):
            return np.zeros(len(js))        # (mixed_roots starts above every atom)
        root, at = self.anchor
        with np.errstate(divide="ignore", invalid="ignore"):
            g = root * self.shape[list(js)] / self.shape[at]
        return np.where(np.isfinite(g) & (g > 0), g, 0.0)

    def certifies(self, j: int, x: float) -> bool:
        """Whether out[j]'s root is certified to be at most x (upper side) or at least x (lower):
        by one evaluation of its bound at x if it is still waiting (no search)."""
        waiting = [item for item in self.items if item[0] == j]
        if not waiting:
            return bool(self.out[j] <= x if self.upper else self.out[j] >= x)
        _j, pmf, mu, db = waiting[0]
        d = float(mixed_deltas([pmf.atoms()], [mu], [x], self.upper, [db])[0])
        return d <= db if self.upper else d > db

    def flush(self) -> None:
        if not self.items:
            return
        js, pmfs, mus, dbs = zip(*self.items)
        roots = mixed_roots(LatticeAtoms(pmfs), mus, dbs, self.upper, self._guesses(js))
        self.out[list(js)] = roots
        if self.anchor is None and np.isfinite(roots[-1]):
            self.anchor = (float(roots[-1]), js[-1])
        self.items, self.size = [], 0
