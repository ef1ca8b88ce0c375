"""Statistics of clustered rates: many graded units (decisions) nested in each task.

Decision-point replay grades several decisions per task, and decisions of one task share
its difficulty, so they are not independent. Every function here resamples whole tasks
(a task's decisions stay together) and uses the pooled rate sum(passes) / sum(decisions),
the number the replay tables report. Inputs are per-task counts:

- ``num``: (tasks,) passes per task (may be fractional: a mean over training seeds);
- ``den``: (tasks,) decisions per task, > 0, equal for every configuration on the same tasks.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._common import TASK_STREAM, check_alpha, check_count, chunks, stream
from .bootstrap import Interval, _percentile_interval
from .paired import PairedResult, sign_flip_p


@dataclass(frozen=True)
class Correlation:
    """Pearson r across configurations with its percentile interval; ``dropped``: resamples without an r."""

    mean: float
    low: float
    high: float
    dropped: int


def _counts(num: npt.ArrayLike, den: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    n, d = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    if n.ndim != 1 or n.shape != d.shape or n.size == 0:
        raise ValueError(f"num and den must be equal-length non-empty 1-D arrays, got shapes {n.shape} and {d.shape}")
    if not (np.isfinite(n).all() and np.isfinite(d).all()):
        raise ValueError("num and den must be finite")
    if (d <= 0).any():
        raise ValueError(f"every task needs at least one decision; den <= 0 at positions {np.flatnonzero(d <= 0)[:5].tolist()}")
    if (n < 0).any() or (n > d).any():
        raise ValueError("num must lie in [0, den] for every task")
    return n, d


def _task_draws(n_tasks: int, n_resamples: int, seed: int):
    """Blocks of task indices drawn with replacement, (size, tasks) each; the task stream of ``seed``."""
    rng = stream(seed, TASK_STREAM)
    for size in chunks(n_resamples):
        yield rng.integers(0, n_tasks, size=(size, n_tasks))


def cluster_rate(num: npt.ArrayLike, den: npt.ArrayLike, n_resamples: int = 4000, alpha: float = 0.05,
                 seed: int = 0) -> Interval:
    """The pooled rate sum(num) / sum(den) with a task-cluster percentile bootstrap CI.

    Each resample draws tasks with replacement and takes the ratio of the drawn tasks'
    summed passes to their summed decisions, so a task with many decisions weighs as
    much as it does in the point estimate. Deterministic for a given ``seed``.
    """
    n, d = _counts(num, den)
    check_count(n_resamples, "n_resamples")
    check_alpha(alpha)
    out = np.concatenate([n[idx].sum(axis=1) / d[idx].sum(axis=1) for idx in _task_draws(n.size, n_resamples, seed)])
    return _percentile_interval(n.sum() / d.sum(), out, alpha)


def cluster_paired_difference(num_a: npt.ArrayLike, num_b: npt.ArrayLike, den: npt.ArrayLike,
                              n_resamples: int = 4000, n_flips: int = 5000, alpha: float = 0.05,
                              seed: int = 0) -> PairedResult:
    """Paired difference of pooled rates a - b on the same decisions.

    diff = sum(num_a - num_b) / sum(den). CI: task-cluster bootstrap of that ratio.
    p: two-sided sign-flip test on the per-task differences of pass counts; under H0
    (the two configurations are exchangeable within each task) each task's difference
    is symmetric about 0, and because ``den`` is shared the sum of count differences is
    the statistic diff up to a constant. n_nonzero: tasks whose counts differ.
    """
    a, d = _counts(num_a, den)
    b, _ = _counts(num_b, den)
    check_count(n_resamples, "n_resamples")
    check_alpha(alpha)
    diff = a - b
    stats = np.concatenate([diff[idx].sum(axis=1) / d[idx].sum(axis=1)
                            for idx in _task_draws(diff.size, n_resamples, seed)])
    ci = _percentile_interval(diff.sum() / d.sum(), stats, alpha)
    p = sign_flip_p(diff, n_flips=n_flips, seed=seed)
    return PairedResult(diff=ci.mean, low=ci.low, high=ci.high, p=p, n_tasks=int(diff.size),
                        n_nonzero=int(np.count_nonzero(diff)))


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r across columns (configurations) for each row (resample); NaN where either is constant."""
    xc, yc = x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)
    top = (xc * yc).sum(axis=1)
    bottom = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    return np.divide(top, bottom, out=np.full(top.shape, np.nan), where=bottom > 0)


def cluster_correlation(x_num: npt.ArrayLike, x_den: npt.ArrayLike, y_num: npt.ArrayLike, y_den: npt.ArrayLike,
                        n_resamples: int = 4000, alpha: float = 0.05, seed: int = 0) -> Correlation:
    """Pearson correlation across configurations of two pooled rates, with a task-cluster CI.

    x_num, y_num: (configs, tasks) per-task counts of two measures (e.g. replay passes and
    episode successes) for the same configurations on the same tasks; x_den, y_den: (tasks,)
    their per-task denominators. The point estimate correlates the configurations' pooled
    rates; each resample draws one set of tasks for every configuration and both measures
    (the tasks are shared) and correlates the resampled rates. Resamples in which a measure
    is constant across configurations have no r and are dropped from the quantiles (counted in
    ``dropped``); a point estimate without r gives NaN bounds.
    """
    xn, yn = np.asarray(x_num, dtype=np.float64), np.asarray(y_num, dtype=np.float64)
    if xn.ndim != 2 or xn.shape != yn.shape or xn.shape[0] < 3:
        raise ValueError(f"x_num and y_num must be (configs, tasks) arrays of equal shape with at least 3 "
                         f"configurations, got {xn.shape} and {yn.shape}")
    for row_x, row_y in zip(xn, yn):  # range checks, row by row
        _counts(row_x, x_den)
        _counts(row_y, y_den)
    xd, yd = np.asarray(x_den, dtype=np.float64), np.asarray(y_den, dtype=np.float64)
    check_count(n_resamples, "n_resamples")
    check_alpha(alpha)
    point = _pearson_rows((xn.sum(axis=1) / xd.sum())[None, :], (yn.sum(axis=1) / yd.sum())[None, :])[0]
    out = []
    for idx in _task_draws(xn.shape[1], n_resamples, seed):
        rx = xn[:, idx].sum(axis=2).T / xd[idx].sum(axis=1)[:, None]  # (size, configs)
        ry = yn[:, idx].sum(axis=2).T / yd[idx].sum(axis=1)[:, None]
        out.append(_pearson_rows(rx, ry))
    stats = np.concatenate(out)
    kept = stats[~np.isnan(stats)]
    dropped = int(stats.size - kept.size)
    if kept.size == 0 or np.isnan(point):
        return Correlation(float(point), float("nan"), float("nan"), dropped)
    ci = _percentile_interval(point, kept, alpha)
    return Correlation(ci.mean, ci.low, ci.high, dropped)
