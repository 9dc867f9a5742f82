"""One rung of the pld bracket: both ends on one lattice step, each release kind composed at once
in the Fourier domain (tilted.py), the Gaussians mixed in exactly at read-out (readout.py).

Upper end: every kind's connect-the-dots twin (a_up, mu_up), read at delta_bar. Lower end: where
the releases include Gaussians that carry a fair share of the loss (HYBRID_SHARE of its variance),
the CTD twins of the lower parameters, read at delta_bar_hi less the second-order hybrid charge
(hybrid.py); otherwise the lower twins (first order in the step, kernels.py). Discrete kinds give
their own twins (discrete.py) either way.

Read-outs charge the composition's rounding for every x >= x_min (tilted.py); x_min is set below
the root from the plan alone (a first guess, then the upper end found), and lowered (at most
_RETRIES times) when the root found is below it; where that certifies no end, the tilt is set again
once at the first read-out. So a rung's result is a function of the plan and the step only.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .. import offload
from ..memo import Memo
from ..optimal.atoms import sup_root
from .bracket import exact_key
from .gaussian import log_delta_bound
from .hybrid import gap_bound, log_hybrid_error
from .readout import mixed_root
from .rowtree import Rows, kernel_tree, reduce_rows, tilt_rows
from .rung_side import Side, side_of, side_offset
from .saddle import saddle_tilt
from .tilted import Tilted, WindowTooWide, compose, tilt

U = 2.0 ** -53
#: The hybrid lower bound is used when the Gaussians carry at least this share of the variance.
HYBRID_SHARE = 0.05
_RETRIES = 6
#: Kinds that come at most this many times are spelled out as rows of the pairwise tree.
SPREAD = 4
#: Up to this many such Laplace and RR rows (with their repeats) are rows of the discrete kinds'
#: tree themselves; more make a tree of their own first (one row of that one).
FEW_ROWS = 16
#: x_min is first this many 1/theta below the expected root: the charges grow as e^{theta (x - x_min)}.
REACH = 3.0
#: With discrete kinds, one composition serves both ends where its Lipschitz charge is at most
#: this share of delta (rung).
LIPSCHITZ_SHARE = 2.0 ** -10


def hybrid_applies(r) -> bool:
    """Whether the lower end is the hybrid one (a function of the releases only)."""
    if not (r.mu_lo > 0 and math.isfinite(r.mu_lo)):
        return False
    var = float(np.sum(r.a_lo ** 2 * r.lo_mult) + np.sum(r.rr_eps ** 2 * r.rr_mult))
    var += sum(d.variance() * m for d, m in zip(r.disc, r.disc_mult))
    return r.mu_lo ** 2 >= HYBRID_SHARE * (var + r.mu_lo ** 2)


def _composed(side: Side, step: float, theta: float, upper: bool, cancel=None):
    """(composition, log of sum_j n_j R_j for the hybrid charge or None): the kinds that come at
    most SPREAD times are rows of a pairwise tree (the Laplace and RR kinds one, which is a row of
    the discrete ones' tree), the others powers of their transforms.
    ``cancel`` (a caller's cancellation or time limit) is checked between transforms."""
    rows = tilt_rows(side.p, side.rel, side.err, step, theta) if side.p.shape[0] else None
    kinds = []
    if rows is not None:
        few = side.mult <= SPREAD
        alone = ~few
        if int(np.sum(side.mult[few])) > FEW_ROWS:
            rep = np.repeat(np.flatnonzero(few), side.mult[few])
            # (every row once, as for distinct releases: the rows as they are, not a copy)
            kinds.append(reduce_rows(rows if few.all() and rep.size == side.mult.size else
                                     Rows(rows.t[rep], rows.start[rep], rows.log_m[rep], rows.rel[rep],
                                          rows.e1[rep], rows.e2[rep]), cancel))
        else:
            alone[:] = True
        for i in np.flatnonzero(alone).tolist():
            kinds.append(Tilted(rows.t[i], 0, float(rows.log_m[i]), float(rows.rel[i]), float(rows.e1[i]),
                                0.0, int(side.mult[i]), e2=float(rows.e2[i])))
    # (the Laplace and RR rows' tree, or a few of its rows, join the discrete kinds' tree: where every
    # kind comes at most SPREAD times, the composition is that one tree, with no transform of its own)
    kinds = kernel_tree(kinds + [tilt(k, theta, n) for k, n in side.kernels], SPREAD, cancel)
    comp = compose(kinds, step, theta, side_offset(side, upper), cancel=cancel)
    return comp, _log_ratio(side, rows, step, theta)


def _log_ratio(side: Side, rows, step: float, theta: float):
    """log of sum_j n_j R_j for the hybrid charge (None without it); ``rows``: the side's tilted
    Laplace and RR rows (None without them)."""
    log_ratio = None
    if side.gaps is not None and (rows is not None or side.ctd_kernels):
        total = 0.0
        if rows is not None:
            # R_j = e^{theta s} gaps_j / E_C[e^{theta Y_j}], that expectation bounded below
            low = rows.log_m - (rows.rel + 1e-12) * (np.abs(rows.log_m) + 1)
            with np.errstate(divide="ignore", over="ignore"):
                terms = side.mult * np.exp(np.minimum(theta * step + np.log(side.gaps(theta)) - low, 700.0))
            total = math.fsum(terms.tolist())
        # a discrete kind's CTD twin: its gaps are at most gap_bound(s/2, s) times the mass of each
        # cell's atoms, whose e^{theta g_c} sum is at most E_C[e^{theta Y}] (CTD keeps each cell's
        # mass, its top end only adds): R_j <= e^{theta s} gap_bound(s/2, s)
        total += side.ctd_kernels * math.exp(min(theta * step, 700.0)) * float(gap_bound(step / 2, step))
        total *= 1 + 1e-12
        log_ratio = math.log(total) if total > 0 else None
    return log_ratio


def _weight(mu: float, x: float):
    """psi_x at each loss l: the hinge (1 - e^{x - l})^+, or mixed with the Gaussian, the upper
    bound of delta_G(x - l) (a looser bound, e^{-theta (x - l)} M_G(theta), was cheaper, but its
    l2 norm over the losses far below x moved upper ends by ~4e-6)."""
    if mu > 0:
        return lambda loc: np.exp(log_delta_bound(mu, x - loc, True))
    return lambda loc: np.maximum(-np.expm1(np.minimum(x - loc, 0.0)), 0.0)


def _c_psi(mu: float, theta: float) -> float:
    if mu > 0:      # e^{theta y} delta_G(y) <= M_G(theta) = e^{theta (theta + 1) mu^2 / 2}
        return math.exp(min(theta * (theta + 1) * mu * mu / 2 * (1 + 1e-12), 700.0))
    if theta <= 0:
        return 1.0  # sup of e^{-theta v} (1 - e^-v) over v >= 0
    return math.exp(theta * math.log(theta) - (1 + theta) * math.log1p(theta)) * (1 + 1e-12)


def _read(atoms, mu: float, delta_bar: float, upper: bool, guess: float) -> float:
    if mu > 0:
        return mixed_root(atoms, mu, delta_bar, upper, guess)
    return sup_root(atoms, delta_bar)


#: The last upper ends read alone (upper_end) with their compositions and tilts, keyed by what was
#: composed: an allocation's forward check asks ``rung`` for the bracket of the releases whose
#: upper end its search read last (its saddle point, ~0.7 ms, is not searched again), and rung's
#: lower end shifted in epsilon reads that same composition.
_UPPERS = Memo(2)


def upper_end(r, step: float, x_guess: float, cancel=None, lower_ahead: bool = False) -> float:
    """``rung``'s upper end alone (the same number). ``lower_ahead``: where rung's lower end is
    a composition of its own (lower_end), it is composed meanwhile by the runner of
    engine/offload.py if one takes it now (the engine process's helper, idle), and kept for rung."""
    key = exact_key(r, step, x_guess)
    up_side = side_of(r, step, True, True)
    tilted = _tilt(r, up_side, step, x_guess)
    lower = offload.start(lower_end, (r, step, *tilted), cancel) if lower_ahead and _lower_apart(r) else None
    comp, _, up, theta, x_guess = _upper_tilted(r, replace(up_side, gaps=None), step, *tilted, cancel)
    # (the first tilt kept too: rung starts from it as it would without this memo, so its lower
    # end does not depend on whether the upper end was read first)
    _UPPERS.put(key, (comp, up, theta, x_guess, *tilted))
    if lower is not None:
        try:
            _LOWERS.put(exact_key(r, step, *tilted), lower())
        except WindowTooWide:   # (the rung composes it itself and says so, as with no look-ahead:
            pass                # the upper end read here never depends on whether a helper took it)
    return up


#: Lower ends composed ahead (upper_end), keyed by their arguments.
_LOWERS = Memo(2)


def _lower_end(r, step: float, theta: float, x_guess: float, cancel=None) -> float:
    """lower_end, or its value composed ahead."""
    known = _LOWERS.get(exact_key(r, step, theta, x_guess))
    return known if known is not None else lower_end(r, step, theta, x_guess, cancel)


def _lipschitz(r) -> tuple[list, float]:
    """(each discrete kind's Lipschitz move or None, the charge of one composition serving both
    ends: see rung)."""
    moves = [d.lipschitz() for d in r.disc]
    return moves, (0.5 * _laplace_moves(r) + (r.mu_up - r.mu_lo) / math.sqrt(2 * math.pi)
                   + math.fsum(m * k for m, k in zip(moves, r.disc_mult) if m is not None)) * (1 + 1e-9)


def _one_composition(r, moves: list, lipschitz: float) -> bool:
    """Whether rung reads both ends from one composition (see rung)."""
    return hybrid_applies(r) and all(m is not None for m in moves) and \
        (not r.disc or lipschitz <= LIPSCHITZ_SHARE * r.delta_bar_hi)


def _lower_apart(r) -> bool:
    """Whether rung may compose its lower end on its own (lower_end)."""
    return not _one_composition(r, *_lipschitz(r))


def _tilt(r, up_side: Side, step: float, x_guess: float) -> tuple[float, float]:
    """The tilt of both ends on lattice ``step``, and where the root is now expected."""
    theta, estimate = saddle_tilt(r, up_side.kernels, x_guess)
    if math.isfinite(estimate) and 0.0 < estimate < x_guess:
        x_guess = estimate
    return theta, x_guess


def rung(r, step: float, x_guess: float, cancel=None, upper=None, enough: float = 0.0) -> tuple[float, float]:
    """(upper, lower) on lattice ``step``; x_guess: where the root is expected; ``upper``: its
    upper end if known already (``upper_end`` of the same arguments), not composed again;
    ``enough``: a width that would do (the bracket's eta).

    With the hybrid bound and no discrete kinds but those whose upper kernels are CTDs of nearby
    releases (DiscreteRelease.lipschitz), one composition serves both ends: the exact releases'
    delta is at least that of the upper parameters' less a Lipschitz charge (a single Laplace
    release's delta moves by at most half the change of its a, a Gaussian's by at most
    1/sqrt(2 pi) times that of its mu, a discrete one's by its lipschitz(); one release at a time,
    conditioning on the rest), and those releases are what the upper end's twins stand for.
    Where that charge on delta is too large (continuous twins of discrete releases, whose a and mu
    move by ~1e-5) but the Gaussians and the discrete kinds' own charge allow it, the one
    composition gives a lower end shifted down in epsilon instead (_shifted_lower), kept where its
    width is ``enough``. (Only with discrete kinds: a plan of continuous noise would then stop on
    a coarser lattice than its curve's first-order lower twins need to meet eta.)
    Otherwise the lower end is its own composition, independent of the upper one: it may be
    computed in the helper process (engine/offload.py), with the same numbers."""
    known = _UPPERS.get(exact_key(r, step, x_guess))
    moves, lipschitz = _lipschitz(r)
    # (with discrete kinds only where that charge is a small share of delta: else the lower end
    # read from their own lower twins is tighter)
    one = _one_composition(r, moves, lipschitz)
    own = math.fsum(m * k for m, k in zip(moves, r.disc_mult) if m is not None) * (1 + 1e-9)
    shifted = not one and bool(r.disc) and r.mu_up > 0 and math.isfinite(r.mu_up) and \
        all(m is not None for m in moves) and own <= LIPSCHITZ_SHARE * r.delta_bar_hi
    # (the upper end's kinds are not laid out where it is known and only the lower end is composed:
    # an allocation's forward check, after its search read that upper end)
    up_side = side_of(r, step, True, True) if known is None or one or shifted or upper is None else None
    theta, x_guess = known[4:] if known is not None else _tilt(r, up_side, step, x_guess)
    if one:
        # (one composition: upper_end's where it was just read, with its upper end)
        comp, log_ratio, up, theta, x_guess = _upper_composed(r, up_side, step, theta, x_guess, known, cancel)
        top = up if math.isfinite(up) else x_guess
        lo = _lower(r, step, comp, log_ratio, theta, top, r.mu_up, lipschitz)[0]
        return up, lo
    if shifted:
        comp, log_ratio, up, theta, x_guess = _upper_composed(r, up_side, step, theta, x_guess, known, cancel)
        lo = _shifted_lower(r, step, comp, log_ratio, theta, up, own, enough)
        if lo is not None and up - lo <= enough:
            return up, lo
        return up, max(lo or 0.0, _lower_end(r, step, theta, x_guess, cancel))
    if upper is not None:
        return upper, _lower_end(r, step, theta, x_guess, cancel)
    up_only = replace(up_side, gaps=None)       # (no hybrid charge to sum on this end)
    here = (lambda cancel: _upper_tilted(r, up_only, step, theta, x_guess, cancel)[2], ())
    return offload.both(here, (lower_end, (r, step, theta, x_guess)), cancel)


def _upper_composed(r, up_side: Side, step: float, theta: float, x_guess: float, known, cancel):
    """_upper_tilted's five of the upper end's side; ``known``: upper_end's (composition, upper end,
    theta, x_guess, first theta, first x_guess) of the same inputs or None (then composed here:
    the same bits)."""
    if known is None:
        return _upper_tilted(r, up_side, step, theta, x_guess, cancel)
    comp, up, theta, x_guess = known[:4]
    rows = tilt_rows(up_side.p, up_side.rel, up_side.err, step, theta) if up_side.p.shape[0] else None
    return comp, _log_ratio(up_side, rows, step, theta), up, theta, x_guess


def _upper_tilted(r, side: Side, step: float, theta: float, x_guess: float, cancel):
    """(composition, log_ratio, upper end, theta, x_guess) at tilt theta; where no end is certified
    (the first read-out far below x_guess, a cheap bound: at a tilt set there the rounding charged
    below the read-out grows as e^{theta (x_guess - x)}), composed once more at that read-out's
    tilt. Either end is certified; the smaller is kept (a function of the plan alone)."""
    comp, log_ratio = _composed(side, step, theta, True, cancel)
    up, first = _upper(r, comp, theta, x_guess)
    lost = not math.isfinite(up) and 0.0 < first < x_guess
    theta2, x2 = _tilt(r, side, step, first) if lost else (theta, x_guess)
    if theta2 < theta:
        comp2, log_ratio2 = _composed(side, step, theta2, True, cancel)
        up2 = _upper(r, comp2, theta2, x2)[0]
        if up2 < up:
            return comp2, log_ratio2, up2, theta2, x2
    return comp, log_ratio, up, theta, x_guess


def _laplace_moves(r) -> float:
    """sum of n (a_up - a_lo) over the Laplace kinds (each difference exact where the two columns
    pair up, the rest within the caller's margin; otherwise, e.g. discrete twins merged differently
    in each column, the difference of the sums with a margin for their roundings)."""
    if r.a_up.shape == r.a_lo.shape and np.array_equal(r.up_mult, r.lo_mult):
        return math.fsum(((r.a_up - r.a_lo) * r.up_mult).tolist())
    up, lo = (r.a_up * r.up_mult).tolist(), (r.a_lo * r.lo_mult).tolist()
    return max(math.fsum(up) - math.fsum(lo), 0.0) + 4 * U * (math.fsum(up) + math.fsum(lo))


def _shifted_lower(r, step: float, comp, log_ratio, theta: float, top: float, charge: float,
                   enough: float):
    """A lower end read from the upper parameters' composition ``comp`` (top: its upper end) with
    the hybrid bound, shifted down in epsilon to the lower parameters.

    With P the noise alone and Q the noise shifted by each release's a (Laplace, scale 1) or by mu
    (the Gaussian, sd 1), the lower parameters' Q_lo has Q_lo(S) <= e^c Q_up(S) + Q_lo(B) for every
    set S: the Laplace density ratio is at most e^{a_up - a_lo} everywhere, the Gaussian's at most
    e^{dmu (z + dmu / 2)} outside B = {y < mu_lo - z}, Q_lo(B) = Phi(-z) <= e^{-z^2/2} / 2. So
    delta_lo(x) = sup_S P(S) - e^x Q_lo(S) >= delta_up(x + c) - e^x Phi(-z): the exact releases'
    epsilon is at least the upper parameters' less c, whose delta the hybrid bound bounds below
    (less ``charge``, the discrete kinds' Lipschitz moves). z is chosen so that e^x Phi(-z) is
    ~1e-6 of delta_bar_hi at every x <= top + 1; a root read above that is taken there (the bound
    falls with x). None, not read, where the shift and the hybrid charge would leave a width above
    ``enough`` (estimated: delta falls as e^{-theta x} near the root, and so does the charge)."""
    if not (r.delta_bar_hi < 1.0 and math.isfinite(top) and theta > 0):
        return None
    x_max = top + 1.0
    z = math.sqrt(2.0 * (max(x_max, 0.0) + 14.0 - math.log(r.delta_bar_hi)))
    tail = 0.5 * math.exp(min(x_max - z * z / 2, 700.0)) * (1 + 1e-9)
    dmu = (r.mu_up - r.mu_lo) * (1 + 4 * U)       # (mu_up >= mu_lo, close: the difference is exact)
    shift = (_laplace_moves(r) + dmu * (z + dmu / 2)) * (1 + 1e-9)
    share = math.exp(min(_log_hybrid(step, comp, log_ratio, theta, r.mu_up) - theta * top, 700.0)) / r.delta_bar_hi
    if not (share < 1.0 and shift - math.log1p(-share) / theta <= enough):
        return None
    root = min(_lower(r, step, comp, log_ratio, theta, top, r.mu_up, charge + tail)[0], x_max)
    return max(0.0, math.nextafter(root - shift, -math.inf)) if root > 0 else 0.0


def lower_end(r, step: float, theta: float, x_guess: float, cancel=None) -> float:
    """The lower end as its own composition: the CTD twins of the lower parameters with the hybrid
    bound, or the lower twins (x_guess: an upper estimate of the root)."""
    hybrid = hybrid_applies(r)
    side = side_of(r, step, False, hybrid)
    comp, log_ratio = _composed(side, step, theta, False, cancel)
    lo, first = _lower(r, step, comp, log_ratio if hybrid else None, theta, x_guess, r.mu_lo, 0.0)
    # (none certified: tilted again at the first read-out, as in _upper_tilted; the larger is kept)
    if lo == 0.0 and 0.0 < first < x_guess:
        theta2 = saddle_tilt(r, side.kernels, first)[0]
        if theta2 < theta:
            comp, log_ratio = _composed(side, step, theta2, False, cancel)
            lo = _lower(r, step, comp, log_ratio if hybrid else None, theta2, x_guess, r.mu_lo, 0.0)[0]
    return lo


def _upper(r, comp, theta: float, x_guess: float) -> tuple[float, float]:
    """(the certified upper end, the first read-out: where the root seems to be)."""
    reach = REACH / theta if theta > 0 else math.inf
    x_min = max(0.0, x_guess - reach) if math.isfinite(x_guess) else 0.0
    root = first = math.inf
    for i in range(_RETRIES):
        atoms = comp.atoms(True, x_min, _c_psi(r.mu_up, theta), _weight(r.mu_up, x_min))
        root = _read(atoms, r.mu_up, r.delta_bar, True, x_guess)
        first = root if i == 0 else first
        # below x_min the charge was too small, but the read-out is non-increasing: x_min is certified
        if root >= x_min or x_min == 0.0:
            return max(root, x_min), first
        x_min = max(0.0, root - reach)
    return max(root, x_min), first


def _log_hybrid(step: float, comp, log_ratio, theta: float, mu: float) -> float:
    """log of the hybrid bound's charge times e^{theta x} (-inf without it: log_ratio None)."""
    if log_ratio is None:
        return -math.inf
    log_m_all = comp.log_m + theta * comp.offset + theta * (theta + 1) * mu ** 2 / 2
    return log_hybrid_error(step, theta, mu, log_m_all, log_ratio)


def _lower(r, step: float, comp, log_ratio, theta: float, top: float, mu: float,
           charge: float) -> tuple[float, float]:
    """The lower end, read from ``comp`` mixed with a Gaussian ``mu``, less the hybrid bound
    (``log_ratio``: its sum over the releases, None without it) and ``charge``; ``top``: the upper
    end (the root is below it). With it, the first read-out (where the root seems to be)."""
    if not (r.delta_bar_hi < 1.0 and math.isfinite(top)):
        return 0.0, math.nan
    log_err = _log_hybrid(step, comp, log_ratio, theta, mu)
    # how far below the upper end the root may be: the hybrid charge relative to delta there (its
    # e^{-theta x} grows below it), or, without it, as far as the rounding's charge allows
    if math.isfinite(log_err) and theta > 0:
        shift = math.exp(min(log_err - theta * top - math.log(r.delta_bar_hi), 50.0)) / theta
        gap = max(4.0 * shift, 1e-9 * max(top, 1.0))
    else:
        gap = REACH / theta if theta > 0 else top
    x_min = max(0.0, top - gap)
    first = math.nan
    for i in range(_RETRIES):
        atoms = comp.atoms(False, x_min, _c_psi(mu, theta), _weight(mu, x_min))
        hybrid = math.exp(min(log_err - theta * x_min, 700.0)) if math.isfinite(log_err) else 0.0
        atoms = replace(atoms, err=atoms.err + hybrid + charge)
        root = _read(atoms, mu, r.delta_bar_hi, False, top)
        first = root if i == 0 else first
        if root >= x_min:        # certified: the charge holds at every x >= x_min
            return root, first
        if x_min == 0.0:
            return 0.0, first
        # the root read is below x_min (the lower twins' own distance from the upper end, e.g. a
        # discrete release's atoms pooled off the lattice, exceeds the gap): charge from one gap
        # below that root next, from a gap four times wider at each retry after (lowering x_min
        # only raises the charge, so the next root is at most this one; from four gaps below at
        # once, the eps_i = 100 plan's bracket of the test was 0.0112 wide instead of 0.00146)
        x_min = max(0.0, min(top, root) - gap)
        gap *= 4.0
    return 0.0, first
