"""float64 references the model tests compare kernels with."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def grouped_reference(a: np.ndarray, w: np.ndarray, lens: Sequence[int]) -> np.ndarray:
    """Grouped GEMM: rows ``[start_g, start_g + lens[g])`` of ``a`` times ``w[g]``
    (``w`` is ``(G, K, N)``), in float64; an empty group adds no rows."""
    ref = np.zeros((a.shape[0], w.shape[2]))
    start = 0
    for g, length in enumerate(lens):
        rows = slice(start, start + length)
        ref[rows] = a[rows].astype(np.float64) @ w[g].astype(np.float64)
        start += length
    return ref
