"""Paired comparison of two configurations on the same tasks: bootstrap CI and sign-flip test.

Both configurations are first averaged over their seeds per task; the unit of
analysis is the task, so the CI and p-value exclude training-seed variance.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._common import FLIP_STREAM, as_outcomes, check_count, chunks, stream
from .bootstrap import task_bootstrap

# Sign vectors whose |sum| is within this fraction of sum(|d|) below the observed
# |sum| count as ties (as extreme as observed). It absorbs floating-point rounding
# of seed-averaged values such as 1/3 - 2/3, which would otherwise drop exact ties.
TIE_RTOL = 1e-9

# 2**20 sums of float64 is 8 MB; beyond that use the Monte-Carlo test.
MAX_EXACT_N = 20


@dataclass(frozen=True)
class PairedResult:
    """Difference a - b of mean outcome, with task-bootstrap CI and sign-flip p-value."""

    diff: float
    low: float
    high: float
    p: float
    n_tasks: int
    n_nonzero: int


def _as_diffs(d: npt.ArrayLike) -> np.ndarray:
    arr = np.asarray(d, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"d must be a non-empty 1-D array of per-task differences, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"d contains NaN or infinite values (shape {arr.shape})")
    return arr


def _as_extreme(sums: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Which signed sums are at least as far from 0 as the observed sum (ties count)."""
    observed = abs(d.sum())
    return np.abs(sums) >= observed - TIE_RTOL * np.abs(d).sum()


def sign_flip_p(d: npt.ArrayLike, n_flips: int = 5000, seed: int = 0) -> float:
    """Two-sided Monte-Carlo sign-flip permutation p-value for mean(d) == 0.

    d: (tasks,) per-task paired differences, any real values. Under H0 each d_j is
    symmetric about 0, so its sign is exchangeable. Draws ``n_flips`` random sign
    vectors s and returns (1 + #{|mean(s*d)| >= |mean(d)|}) / (1 + n_flips): the
    observed statistic is counted, so p >= 1/(1 + n_flips) > 0. Ties count as
    extreme (within ``TIE_RTOL``). Returns 1.0 if every d is 0.
    """
    arr = _as_diffs(d)
    check_count(n_flips, "n_flips")
    if not arr.any():
        return 1.0
    rng = stream(seed, FLIP_STREAM)
    nonzero = arr[arr != 0]  # zero differences add nothing to any signed sum
    n = nonzero.size
    hits = 0
    for size in chunks(n_flips):  # loop over memory blocks, not over flips
        # One random bit per sign: unpacking random bytes is ~10x faster than integers().
        bits = np.unpackbits(np.frombuffer(rng.bytes(size * n // 8 + 1), dtype=np.uint8))
        signs = bits[:size * n].reshape(size, n) * 2.0 - 1.0
        hits += int(_as_extreme(signs @ nonzero, arr).sum())
    return (1 + hits) / (1 + n_flips)


def sign_flip_exact(d: npt.ArrayLike) -> float:
    """Exact two-sided sign-flip p-value by enumerating all 2**n sign vectors.

    d: (n,) per-task differences, n <= 20. Returns the fraction of the 2**n sign
    vectors (the identity included) with |mean(s*d)| >= |mean(d)| (ties count).
    """
    arr = _as_diffs(d)
    if arr.size > MAX_EXACT_N:
        raise ValueError(f"exact enumeration needs 2**n sign vectors; n={arr.size} > {MAX_EXACT_N}, "
                         "use sign_flip_p instead")
    sums = np.zeros(1)
    for value in arr:  # doubling: all signed partial sums, 2**k after k elements
        sums = np.concatenate([sums + value, sums - value])
    return float(_as_extreme(sums, arr).mean())


def sign_flip_lattice(d: npt.ArrayLike, denominator: int) -> float:
    """Exact two-sided sign-flip p-value for differences on the lattice k / ``denominator``.

    d: (tasks,) per-task differences, each an integer multiple of 1 / denominator (seed-averaged
    0/1 outcomes are: with s_a and s_b seeds, of 1 / lcm(s_a, s_b)). The null distribution of
    the signed sum is the convolution of each task's two-point distribution {-|k|, +|k|}, exact in
    integers for any number of tasks; returns P(|sum| >= |observed sum|), ties included.
    Raises ValueError naming a difference that is off the lattice.
    """
    arr = _as_diffs(d)
    if isinstance(denominator, bool) or not isinstance(denominator, int) or denominator < 1:
        raise ValueError(f"denominator must be a positive int, got {denominator!r}")
    scaled = arr * denominator
    k = np.rint(scaled).astype(np.int64)
    off = np.flatnonzero(np.abs(scaled - k) > 1e-9)
    if off.size:
        raise ValueError(f"difference {arr[off[0]]!r} (task {off[0]}) is not a multiple of 1/{denominator}")
    observed = abs(int(k.sum()))  # the integer sum: no float rounding of arr.sum()
    k = np.abs(k[k != 0])
    if k.size == 0:
        return 1.0
    total = int(k.sum())
    dist = np.zeros(2 * total + 1)
    dist[total] = 1.0  # index = signed sum + total
    for step in k:  # each task adds +step or -step with probability 1/2
        dist = 0.5 * (np.roll(dist, step) + np.roll(dist, -step))
    sums = np.arange(-total, total + 1)
    return float(min(1.0, dist[np.abs(sums) >= observed].sum()))


def paired_difference(a: npt.ArrayLike, b: npt.ArrayLike, n_resamples: int = 4000,
                      n_flips: int = 5000, alpha: float = 0.05, seed: int = 0) -> PairedResult:
    """Paired a - b comparison on shared tasks.

    a: (seeds_a, tasks), b: (seeds_b, tasks) (or 1-D (tasks,)), float or bool, the
    same tasks in the same column order. Each is averaged over its seeds per task,
    d = a_task - b_task. Returns ``PairedResult`` with diff = mean(d), the
    task-bootstrap percentile CI of mean(d) (``n_resamples``, level 1 - alpha),
    the two-sided sign-flip p-value (``n_flips``), n_tasks and n_nonzero (tasks
    with d != 0). Raises ValueError naming both shapes if the task counts differ.
    """
    a_arr, b_arr = as_outcomes(a, "a"), as_outcomes(b, "b")
    if a_arr.shape[1] != b_arr.shape[1]:
        raise ValueError(f"a and b must cover the same tasks: a has shape {np.shape(a)}, "
                         f"b has shape {np.shape(b)} (expected (seeds, tasks) with equal tasks)")
    d = a_arr.mean(axis=0) - b_arr.mean(axis=0)
    ci = task_bootstrap(d, n_resamples=n_resamples, alpha=alpha, seed=seed)
    p = sign_flip_p(d, n_flips=n_flips, seed=seed)
    return PairedResult(diff=ci.mean, low=ci.low, high=ci.high, p=p,
                        n_tasks=int(d.size), n_nonzero=int(np.count_nonzero(d)))
