"""The teacher stages' shared setup: the distill config, the offered tasks, the teacher's record.

Kept apart from generation (``ccl.data.distill``) so that judging the teacher's transcripts
(``ccl.data.acceptance``) does not depend on the rollout engine or the model backends.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ..artifacts.jsonio import read_jsonl, sha256_file
from ..config import ConfigError, ModelsConfig, stage_with_models
from ..models.registry import ModelStore


@dataclass(frozen=True)
class DistillConfig:
    """Teacher generation; defaults are the write-up's (the teacher model is in ``models``)."""

    n: int = 1600  # tasks offered, from the start of the training pool
    batch_size: int = 24  # episodes decoded in lock-step
    chunk: int = 96  # tasks per resumable unit: a killed run redoes at most this many
    max_new_tokens: int = 256
    temperature: float = 0.7  # pass 2 only; pass 1 is greedy
    top_p: float = 0.95
    seed: int = 0  # pass-2 sampling seed
    pass2_max: int | None = None  # pass 2 resamples at most this many rejected tasks (pool order); None: all


@dataclass(frozen=True)
class TeacherSetup:
    """What both passes share: the stage config, the offered tasks and the teacher's record."""

    cfg: DistillConfig
    models: ModelsConfig
    profile: str
    offered: list[dict]
    pool_sha256: str
    teacher: dict


def load_setup(params: Path, store: ModelStore, profile: str | None, pool_path: Path, n: int | None,
               n_from: Path | None = None) -> TeacherSetup:
    """The distill config and the offered tasks: the first ``n`` of the pool (default the
    profile's ``distill.n``), or, with ``n_from``, exactly the tasks of that pass-1 file."""
    cfg, models, profile = stage_with_models(params, "distill", DistillConfig, profile)
    if n is not None:
        if n < 1:
            raise ConfigError(f"--n {n}: must be at least 1")
        cfg = dataclasses.replace(cfg, n=n)
    if not pool_path.is_file():
        raise ConfigError(f"{pool_path}: training pool missing; run the build_datasets stage first")
    pool = list(read_jsonl(pool_path))
    if n_from is not None:
        if not n_from.is_file():
            raise ConfigError(f"{n_from}: missing; run the distill stage first")
        ids = {r["task_id"] for r in read_jsonl(n_from)}
        offered = [t for t in pool if t["id"] in ids]
        cfg = dataclasses.replace(cfg, n=len(offered))  # what pass 1 ran with, whatever params say now
    elif cfg.n > len(pool):
        raise ConfigError(f"n={cfg.n} exceeds the training pool ({len(pool)} tasks in {pool_path})")
    else:
        offered = pool[: cfg.n]
    spec = store.spec(models.teacher)
    teacher = {"model": spec.name, "upstream": spec.upstream, "license": spec.license,
               "backend": models.teacher_backend, "revision": spec.revision or spec.sha256}
    return TeacherSetup(cfg, models, profile, offered, sha256_file(pool_path), teacher)
