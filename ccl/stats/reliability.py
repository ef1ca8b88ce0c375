"""Reliability over repeated sampled trials: tau-bench's pass^k."""
from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt


def pass_hat_k(successes: npt.ArrayLike, k: int) -> float:
    """pass^k: probability that k i.i.d. trials of a task all succeed, mean over tasks.

    successes: (trials, tasks) of 0/1 or bool, n = trials >= k. Uses the unbiased
    estimator of tau-bench, mean over tasks of C(c, k) / C(n, k), where c is the
    number of successful trials of that task. Raises ValueError if k is not in 1..n
    or values are not 0/1.
    """
    arr = np.asarray(successes)
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"successes must be a non-empty (trials, tasks) array, got shape {arr.shape}")
    if not np.isin(arr, (0, 1)).all():
        raise ValueError("successes must contain only 0/1 (or bool) values")
    n = arr.shape[0]
    if isinstance(k, (bool, np.bool_)) or int(k) != k or not 1 <= k <= n:
        raise ValueError(f"k must be an int in 1..{n} (trials), got {k!r} for shape {arr.shape}")
    c = arr.astype(np.int64).sum(axis=0)
    # Exact integer binomials per possible count c = 0..n, then one lookup per task.
    table = np.array([math.comb(j, int(k)) / math.comb(n, int(k)) for j in range(n + 1)])
    return float(table[c].mean())
