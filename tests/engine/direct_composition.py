"""The exact composition of lattice kernels by direct convolution: the engine tests' reference for
the tilted Fourier-domain composition (slow and simple, independent of the engine's code)."""

from __future__ import annotations

import numpy as np


def direct(kernels_mult) -> np.ndarray:
    """The pmf of the sum of the kernels' losses (each (kernel, n) to its multiplicity n)."""
    out = np.ones(1)
    for k, n in kernels_mult:
        for _ in range(n):
            out = np.convolve(out, k.p)
    return out
