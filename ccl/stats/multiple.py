"""Multiple-comparison adjustment."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import numpy.typing as npt


def holm(pvalues: Sequence[float] | npt.ArrayLike) -> np.ndarray:
    """Holm-Bonferroni step-down adjusted p-values, in the input order.

    pvalues: (m,) p-values in [0, 1], no NaN. The i-th smallest p is multiplied by
    (m - i + 1), a running maximum keeps the adjusted values monotone in the raw
    order, and values are capped at 1. Returns a float (m,) array.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be 1-D, got shape {p.shape}")
    if np.isnan(p).any():
        raise ValueError(f"pvalues contain NaN at positions {np.flatnonzero(np.isnan(p)).tolist()}")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("pvalues must lie in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted
