"""Rank agreement across a handful of units (e.g. configurations): Spearman's rho with a permutation p."""
from __future__ import annotations

import itertools

import numpy as np
from scipy import stats as sps

from ._common import FLIP_STREAM, stream

EXACT_MAX = 8  # 8! = 40,320 pairings; more configurations use random pairings
N_PAIRINGS = 20_000


def spearman_permutation(x: np.ndarray, y: np.ndarray, seed: int = 0) -> tuple[float | None, float]:
    """Spearman rho and its two-sided permutation p over pairings of ``x`` with ``y`` (ties get
    mid-ranks): every pairing up to ``EXACT_MAX`` values, else ``N_PAIRINGS`` random ones (seeded;
    the observed pairing counted, so p > 0). (None, 1.0) if either is constant."""
    # rates averaged over seeds may differ only by rounding; such values are ties
    x, y = np.round(np.asarray(x, dtype=np.float64), 12), np.round(np.asarray(y, dtype=np.float64), 12)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None, 1.0
    rx, ry = sps.rankdata(x) - (len(x) + 1) / 2, sps.rankdata(y) - (len(y) + 1) / 2  # centred ranks
    norm = np.sqrt((rx ** 2).sum() * (ry ** 2).sum())
    observed = float(rx @ ry)
    if len(x) <= EXACT_MAX:
        perms = np.array(list(itertools.permutations(range(len(x)))))
    else:
        rng = stream(seed, FLIP_STREAM)
        perms = np.argsort(rng.random((N_PAIRINGS, len(x))), axis=1)
    hits = np.abs(ry[perms] @ rx) >= abs(observed) - 1e-9 * norm
    p = float(hits.mean()) if len(x) <= EXACT_MAX else (1 + int(hits.sum())) / (1 + N_PAIRINGS)
    return observed / norm, p
