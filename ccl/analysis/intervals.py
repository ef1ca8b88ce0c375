"""One table cell: a rate with its bootstrap interval (task-level, hierarchical over seeds, or a
ratio's), pooled over splits where a table asks for it.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..stats import Interval, hierarchical_bootstrap, task_bootstrap
from ..stats._common import SEED_STREAM, TASK_STREAM, chunks, stream
from .runs import STRATA, AnalyzeConfig, ConfigData, Matrix, cell_seed


def _pct(x: float) -> float:
    return round(float(x) * 100.0, 4)


def _cell(ci: Interval | None, n: int, scale: float = 100.0) -> dict | None:
    """A JSON cell {mean, low, high, n}; ``scale`` 100 for percentages, 1 for raw means."""
    if ci is None:
        return None
    return {"mean": round(ci.mean * scale, 4), "low": round(ci.low * scale, 4),
            "high": round(ci.high * scale, 4), "n": int(n)}


# ---------------------------------------------------------------- intervals

def _ratio_bootstrap(values: np.ndarray, n_resamples: int, alpha: float, seed: int) -> Interval:
    """Percentile CI of the mean over non-null cells of ``values`` (seeds, tasks), NaN = null.

    The same two-level scheme and random streams as ``ccl.stats.hierarchical_bootstrap``
    (seeds drawn with replacement, then tasks, the task draws shared by the drawn seeds),
    but each resample's statistic is sum(non-null drawn values) / count(non-null drawn
    cells). Without nulls it equals ``hierarchical_bootstrap`` up to rounding. Resamples
    that draw only null cells are dropped from the quantiles.
    """
    mask = ~np.isnan(values)
    num, den = np.where(mask, values, 0.0), mask.astype(np.float64)
    n_seeds, n_tasks = values.shape
    seed_rng, task_rng = stream(seed, SEED_STREAM), stream(seed, TASK_STREAM)
    out = np.empty(n_resamples)
    start = 0
    for size in chunks(n_resamples):
        rows = seed_rng.integers(0, n_seeds, size=(size, n_seeds))
        cols = task_rng.integers(0, n_tasks, size=(size, n_tasks))
        flat = cols + n_tasks * np.arange(size)[:, None]
        top = num[rows].sum(axis=1).ravel()[flat].sum(axis=1)
        bottom = den[rows].sum(axis=1).ravel()[flat].sum(axis=1)
        out[start:start + size] = np.divide(top, bottom, out=np.full(size, np.nan), where=bottom > 0)
        start += size
    low, high = np.nanquantile(out, [alpha / 2, 1 - alpha / 2])
    return Interval(float(num.sum() / den.sum()), float(low), float(high))


def interval(values: np.ndarray, cfg: AnalyzeConfig, seed: int) -> tuple[Interval | None, int]:
    """CI of the mean of ``values`` (seeds, tasks), NaN = null, and the number of tasks it covers.

    Several rows: hierarchical bootstrap (seeds, then tasks); one row: task bootstrap.
    Tasks null in every row are left out; other nulls use ``_ratio_bootstrap``
    (mean over non-null cells). Returns (None, 0) if nothing is left.
    """
    keep = ~np.isnan(values).all(axis=0)
    values = values[:, keep]
    if values.shape[1] == 0:
        return None, 0
    if np.isnan(values).any():
        ci = _ratio_bootstrap(values, cfg.n_resamples, cfg.alpha, seed)
    elif values.shape[0] > 1:
        ci = hierarchical_bootstrap(values, cfg.n_resamples, cfg.alpha, seed)
    else:
        ci = task_bootstrap(values, cfg.n_resamples, cfg.alpha, seed)
    return ci, int(values.shape[1])


def _ci_method(data: ConfigData) -> str:
    """How a config's CIs are computed: trained configs (runs named _s<k>) hierarchically."""
    return "hierarchical" if data.trained else "task"


# ---------------------------------------------------------------- pooling

def pooled(data: ConfigData, splits: Sequence[str]) -> Matrix | None:
    """The columns of ``splits`` (those the config has) side by side; task ids become ``split/task_id``."""
    mats = [(s, data.splits[s]) for s in splits if s in data.splits]
    if not mats:
        return None
    ids = tuple(f"{s}/{t}" for s, m in mats for t in m.task_ids)
    keys = [k for k in mats[0][1].values if all(k in m.values for _, m in mats)]
    values = {k: np.concatenate([m.values[k] for _, m in mats], axis=1) for k in keys}
    strata = {k: tuple(v for _, m in mats for v in m.strata[k]) for k in STRATA}
    return Matrix(ids, values, strata)


def _success_cell(data: ConfigData, split: str, mat: Matrix | None, cfg: AnalyzeConfig) -> dict | None:
    """Success % [CI] of one split (or pooled); the seed depends only on config and split."""
    if mat is None:
        return None
    ci, n = interval(mat.success, cfg, cell_seed(cfg.seed, "success", data.name, split))
    return _cell(ci, n)


# ---------------------------------------------------------------- tables

Progress = Callable[[int], None]


def _noop(n: int) -> None:
    pass
