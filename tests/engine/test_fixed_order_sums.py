"""The same plan gives the same bits on any machine: the lattice's direct convolution and the two
sets' read-out sum their products in an order fixed by the sizes alone (numpy's pairwise sum),
never through BLAS (np.dot, np.convolve, @), whose kernels OpenBLAS picks for the CPU at run time."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

from dpplanner.engine.optimal import lattice, two_sets
from dpplanner.engine.optimal.lattice import LatticePMF, convolve, direct_convolve


def _reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Entry k: np.sum of a[k - j] b[j] over j, the products in the order of a's window."""
    lb = b.size
    padded = np.concatenate((np.zeros(lb - 1), a, np.zeros(lb - 1)))
    return np.array([np.sum(padded[k:k + lb] * b[::-1]) for k in range(a.size + lb - 1)])


@pytest.mark.parametrize("la, lb, chunk", [(129, 129, 1 << 15), (1000, 37, 1 << 15), (301, 40, 64),
                                           (50, 3, 7), (9, 1, 1 << 15)])
def test_the_direct_convolution_sums_in_a_fixed_order(monkeypatch, la, lb, chunk):
    """Bit for bit the pairwise sums of the reference, in chunks of rows too."""
    monkeypatch.setattr(lattice, "DIRECT_CHUNK", chunk)
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


@pytest.mark.parametrize("module", [lattice, two_sets])
def test_no_blas_sums(module):
    """No call of np.dot and the like, no @, in these modules."""
    tree = ast.parse(inspect.getsource(module))
    calls = [n.func.attr for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr in BLAS]
    matmuls = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)]
    assert calls == [] and matmuls == []
