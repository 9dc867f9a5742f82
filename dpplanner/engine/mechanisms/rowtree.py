"""Many single releases composed pairwise, level by level, all pairs of a level in one transform.

The releases that come once (or a few times) each are the rows of one array, tilted as in
tilted.py (each row a probability vector, its log normaliser kept). A level convolves rows 2i and
2i + 1 for every i with one batched rfft / irfft, so a plan of 10^5 distinct releases costs ~17
numpy transforms instead of 10^5 Python-level convolutions; once the rows are long, their tails
(tilted mass <= TAIL each) are cut to a common width.

Errors per row, as the optimal core's lattice.py keeps them but with the FFT's in l2:
a_hat = a (1 + rho_a) + e1_a + e2_a, |rho| <= rel, ||e1||_1 <= err, ||e2||_2 <= e2. The exact
convolution of two such rows has rel_a + rel_b + rel_a rel_b, l1 error e1_a (1 + rel_b) + e1_b
(1 + rel_a) + e1_a e1_b (plus the mass cut), and l2 error e2_a (1 + rel_b + err_b) + e2_b (1 + rel_a
+ err_a) + e2_a e2_b sqrt(width) (Young: ||x * y||_2 <= ||x||_2 ||y||_1; ||e2||_1 <= sqrt(width)
||e2||_2); the transform adds FFT_C u (log2 N + 2) (||a||_2 + ||b||_2 + ||c||_2) (lattice.py, Higham
Thm 24.2). Negative outputs are clipped to 0, towards the exact values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
from scipy import fft as sfft

from ..optimal.atoms import SUB
from ..optimal.lattice import FFT_C
from .tilted import Tilted

U = 2.0 ** -53
#: Up to this exponent (theta s times a row's width) tilt_rows multiplies a row's factor by a
#: column's, neither of which over- or underflows.
OUTER_EXP = 600.0
#: Tilted mass each row may lose from each end once its rows are longer than TRIM_FROM (above
#: the transforms' noise floor, ~1e-17 an entry, which a smaller cut would keep as mass).
TAIL = 1e-14
TRIM_FROM = 512
#: The most entries the kernels stacked as rows of one tree may take, and how many times their
#: own entries (each row is padded to the widest one's length).
TREE_ENTRIES = 1 << 22
TREE_PADDING = 2


@dataclass
class Rows:
    t: np.ndarray           # (rows, width), each row sums to ~1
    start: np.ndarray       # index of column 0, per row
    log_m: np.ndarray
    rel: np.ndarray
    e1: np.ndarray
    e2: np.ndarray
    #: Each row's l2 norm where the level that made it computed it (None: computed when needed)
    norm: Optional[np.ndarray] = None


def tilt_rows(p: np.ndarray, rel: np.ndarray, err: np.ndarray, step: float, theta: float) -> Rows:
    """Each row times e^{theta step j}, normalised (tilted.tilt, per row)."""
    width = p.shape[1]
    last = _last_nonzero(p)
    with np.errstate(under="ignore", over="ignore"):
        if abs(theta) * step * width <= OUTER_EXP:
            # e^{theta s j} e^{-theta s last}: an exp per column and per row, not per entry; each
            # argument rounded once (at most |top| U), two exps and a product: within the rel below
            w = p * np.outer(np.exp(-theta * step * last), np.exp(theta * step * np.arange(width, dtype=float)))
        else:
            expo = theta * step * (np.arange(width, dtype=float)[None, :] - last[:, None])
            w = p * np.exp(np.minimum(expo, 0.0))
    total = np.sum(w, axis=1)
    t = w / total[:, None]
    top = theta * step * last
    return Rows(t, np.zeros(p.shape[0], dtype=np.int64), top + np.log(total),
                rel + 4 * U * (np.abs(top) + 2), (err + width * SUB) / total, np.zeros(p.shape[0]))


def _last_nonzero(p: np.ndarray) -> np.ndarray:
    nz = p != 0
    return p.shape[1] - 1 - np.argmax(nz[:, ::-1], axis=1)


#: reduce_rows composes at most this many rows as one tree at a time, the narrowest first.
CHUNK_ROWS = 2048


def reduce_rows(rows: Rows, cancel=None) -> Tilted:
    """The composition of every row, as one tilted kind (multiplicity 1); ``cancel`` is checked
    before each level of the tree. More than CHUNK_ROWS rows are composed in chunks of rows of
    about equal width (each padded only to its own widest row, its arrays small enough to stay in
    the processor's cache), whose compositions are then the rows of one last tree: 10^5 distinct
    Laplace releases are 1/m for m spread over [200, 2000], one stack padded to the widest row
    was four times their own entries, and at 25 MB a level ran at memory speed."""
    n = rows.t.shape[0]
    if n <= CHUNK_ROWS:
        return _reduce(rows, cancel)
    order = np.argsort(_last_nonzero(rows.t), kind="stable")
    parts = []
    for i in range(0, n, CHUNK_ROWS):
        take = order[i:i + CHUNK_ROWS]
        t = rows.t[take]
        t = t[:, :int(np.max(_last_nonzero(t))) + 1]
        parts.append(_reduce(Rows(t, rows.start[take], rows.log_m[take], rows.rel[take], rows.e1[take],
                                  rows.e2[take]), cancel))
    width = max(k.t.size for k in parts)
    t = np.zeros((len(parts), width))
    for i, k in enumerate(parts):
        t[i, :k.t.size] = k.t
    return _reduce(Rows(t, np.array([k.start for k in parts], dtype=np.int64), np.array([k.log_m for k in parts]),
                        np.array([k.rel for k in parts]), np.array([k.err for k in parts]),
                        np.array([k.e2 for k in parts])), cancel)


def _reduce(rows: Rows, cancel) -> Tilted:
    r = rows
    skip = 0        # levels to go before trying to trim again (a trim that cut little is not repeated next)
    while r.t.shape[0] > 1:
        if cancel is not None:
            cancel.check()
        if r.t.shape[0] % 2:
            r = _append_identity(r)
        r = _level(r)
        if r.t.shape[1] > TRIM_FROM:
            if skip:
                skip -= 1
                continue
            width = r.t.shape[1]
            r = _trim(r)
            skip = 1 if r.t.shape[1] > 0.9 * width else 0
    return Tilted(r.t[0].copy(), int(r.start[0]), float(r.log_m[0]), float(r.rel[0]), float(r.e1[0]),
                  0.0, 1, e2=float(r.e2[0]))


def kernel_tree(kinds: list[Tilted], spread: int, cancel=None) -> list[Tilted]:
    """``kinds`` with those that come at most ``spread`` times composed as the rows of one tree
    (the narrowest first, while the stack holds at most TREE_ENTRIES entries and at most
    TREE_PADDING times the rows' own), the others as they are. A kind left alone costs a transform
    of the composition's whole window: 300 distinct discrete releases on a lattice of ~2^20
    points, 300 transforms of 2^21 points for each end; as rows a few hundred points wide, a tree
    of 9 levels. (A row much wider than the others would make the tree cost more than its own
    transform: it stays alone.)"""
    rows: list[Tilted] = []
    width = own = 0
    for k in sorted((k for k in kinds if k.mult <= spread), key=lambda k: k.t.size):
        stack = (len(rows) + k.mult) * max(width, k.t.size)
        if stack > TREE_ENTRIES or stack > TREE_PADDING * (own + k.mult * k.t.size):
            break
        rows += [k] * k.mult
        width, own = max(width, k.t.size), own + k.mult * k.t.size
    if len(rows) < 2:
        return kinds
    t = np.zeros((len(rows), width))
    for i, k in enumerate(rows):
        t[i, :k.t.size] = k.t
    tree = reduce_rows(Rows(t, np.array([k.start for k in rows], dtype=np.int64),
                            np.array([k.log_m for k in rows]), np.array([k.rel for k in rows]),
                            np.array([k.err for k in rows]), np.array([k.e2 for k in rows])), cancel)
    # (mass at +infinity adds up over the rows, as compose adds it up over kinds)
    tree = replace(tree, inf_mass=math.fsum(k.inf_mass for k in rows))
    taken = {id(k) for k in rows}
    return [tree] + [k for k in kinds if id(k) not in taken]


def _append_identity(r: Rows) -> Rows:
    one = np.zeros((1, r.t.shape[1]))
    one[0, 0] = 1.0
    return Rows(np.vstack([r.t, one]), np.append(r.start, 0), np.append(r.log_m, 0.0),
                np.append(r.rel, 0.0), np.append(r.e1, 0.0), np.append(r.e2, 0.0),
                None if r.norm is None else np.append(r.norm, 1.0))


def _level(r: Rows) -> Rows:
    width = r.t.shape[1]
    out_w = 2 * width - 1
    n = sfft.next_fast_len(out_w, real=True)
    f = sfft.rfft(r.t, n, axis=1, workers=1)
    c = sfft.irfft(f[0::2] * f[1::2], n, axis=1, workers=1)[:, :out_w]
    np.maximum(c, 0.0, out=c)
    a, b = slice(0, None, 2), slice(1, None, 2)
    # (the last level's output norms are this one's input norms: the same sums of the same rows)
    norm = np.sqrt(np.sum(r.t * r.t, axis=1)) if r.norm is None else r.norm
    out_norm = np.sqrt(np.sum(c * c, axis=1))
    fft_err = FFT_C * U * (math.log2(n) + 2) * (norm[a] + norm[b] + out_norm)
    rel_a, rel_b, e1_a, e1_b, e2_a, e2_b = r.rel[a], r.rel[b], r.e1[a], r.e1[b], r.e2[a], r.e2[b]
    return Rows(c, r.start[a] + r.start[b], r.log_m[a] + r.log_m[b],
                rel_a + rel_b + rel_a * rel_b,
                e1_a * (1 + rel_b) + e1_b * (1 + rel_a) + e1_a * e1_b,
                (e2_a * (1 + rel_b + e1_b) + e2_b * (1 + rel_a + e1_a) + e2_a * e2_b * math.sqrt(width)
                 + fft_err) * (1 + 1e-9), out_norm)


def _trim(r: Rows) -> Rows:
    """Each row's ends with tilted mass <= TAIL cut (charged to its l1 error), to a common width."""
    lo = np.argmax(np.cumsum(r.t, axis=1) > TAIL, axis=1)
    hi = r.t.shape[1] - np.argmax(np.cumsum(r.t[:, ::-1], axis=1) > TAIL, axis=1)
    width = int(np.max(hi - lo))
    if width >= r.t.shape[1]:
        return r
    cols = lo[:, None] + np.arange(width)[None, :]
    inside = cols < r.t.shape[1]
    kept = np.where(inside, np.take_along_axis(r.t, np.minimum(cols, r.t.shape[1] - 1), axis=1), 0.0)
    # what was cut: at most TAIL from each end (its running sum, a few ulps off, was at most TAIL)
    return Rows(kept, r.start + lo, r.log_m, r.rel, r.e1 + 2 * TAIL * (1 + 1e-6), r.e2)
