"""The same plan gives the same bits on any machine: the lattice's direct convolution, the two
sets' read-out, the pld bracket's batches and the split's hybrid error bound sum their products in
an order fixed by the sizes alone (sequential shifted sums, numpy's pairwise sum), never through
BLAS (np.dot, np.convolve, @), whose kernels OpenBLAS picks for the CPU at run time."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

from dpplanner.engine.mechanisms import bracket
from dpplanner.engine.optimal import hybrid_error, lattice, two_sets
from dpplanner.engine.optimal.lattice import LatticePMF, convolve, direct_convolve


def _reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Entry k: the sequential sum of b[j] a[k - j] over j ascending (shifted adds of b[j] a)."""
    out = np.zeros(a.size + b.size - 1)
    for j in range(b.size):
        out[j:j + a.size] += b[j] * a
    return out


@pytest.mark.parametrize("scatter", [1 << 13, 0])
@pytest.mark.parametrize("la, lb, chunk", [(129, 129, 1 << 15), (1000, 37, 1 << 15), (301, 40, 64),
                                           (50, 3, 7), (9, 1, 1 << 15), (40, 9, 1)])
def test_the_direct_convolution_sums_in_a_fixed_order(monkeypatch, la, lb, chunk, scatter):
    """Bit for bit the sequential sums of the reference, scattered at once or by rows in chunks."""
    monkeypatch.setattr(lattice, "DIRECT_CHUNK", chunk)
    monkeypatch.setattr(lattice, "SCATTER_PRODUCTS", scatter)
    rng = np.random.default_rng(la + lb)
    a, b = rng.random(la), rng.random(lb)
    assert np.array_equal(direct_convolve(a, b), _reference(a, b))


def test_convolve_takes_the_fixed_order_on_its_direct_path():
    """Two dense pmfs of 129 points: their direct sum (cheaper than an FFT), exactly the reference."""
    rng = np.random.default_rng(5)
    p, q = rng.random(129), rng.random(129)
    a = LatticePMF(0.01, 0, p / p.sum(), 0.0, True)
    b = LatticePMF(0.01, 0, q / q.sum(), 0.0, True)
    assert np.array_equal(convolve(a, b, 0.0, 1.0).p, _reference(a.p, b.p))


BLAS = {"dot", "convolve", "inner", "matmul", "vdot", "einsum", "tensordot", "correlate"}


@pytest.mark.parametrize("module", [lattice, two_sets, hybrid_error, bracket])
def test_no_blas_sums(module):
    """No call of np.dot and the like, no @, in these modules."""
    tree = ast.parse(inspect.getsource(module))
    calls = [n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr in BLAS]
    matmuls = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)]
    assert calls == [] and matmuls == []
