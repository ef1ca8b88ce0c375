"""Input checks and random streams shared by the statistics modules."""
from __future__ import annotations

import numpy as np
import numpy.typing as npt

# Independent, named streams derived from one user seed, so that e.g. the task
# draws of the hierarchical bootstrap equal those of the task bootstrap for the
# same seed, and the sign flips never reuse the bootstrap's random numbers.
SEED_STREAM, TASK_STREAM, FLIP_STREAM = 0, 1, 2

# Resamples are drawn in fixed-size blocks to bound memory (a block of
# 1,024 x 1,008 float64 is ~8 MB). Fixed, so results never depend on memory.
CHUNK = 1024


def stream(seed: int, which: int) -> np.random.Generator:
    """A local generator for one named stream of ``seed``; never global state."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return np.random.default_rng(np.random.SeedSequence(int(seed), spawn_key=(which,)))


def as_outcomes(x: npt.ArrayLike, name: str = "x") -> np.ndarray:
    """(seeds, tasks) float array; a 1-D (tasks,) array becomes (1, tasks)."""
    arr = np.asarray(x)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise ValueError(f"{name} must be numeric or bool, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{name} must have shape (seeds, tasks) or (tasks,), got {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values (shape {arr.shape})")
    return arr


def check_count(n: int, name: str) -> None:
    if isinstance(n, (bool, np.bool_)) or int(n) != n or n < 1:
        raise ValueError(f"{name} must be a positive int, got {n!r}")


def check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")


def chunks(total: int) -> list[int]:
    """Block sizes that sum to ``total``."""
    return [min(CHUNK, total - start) for start in range(0, total, CHUNK)]
