"""Stage dagger_rollout: one DAgger iteration's data (issue 40; ``ccl.learn.dagger``).

The policy of the previous iteration (C's run for the first) plays a fresh slice of the training pool
with the expert watching; every visited state gets the expert's label. Writes, in the iteration's
folder: ``episodes.jsonl.gz`` (the transcripts, as evaluation writes them, plus ruler-2 success),
``visits.jsonl.gz`` (one record per visited state), ``rows.jsonl.gz`` (this iteration's training rows),
``train.jsonl.gz`` (the aggregate the iteration's run trains on: the previous aggregate, C's rows for
the first, then these rows), ``stats.json`` and ``manifest.json`` (SHA-256 of each), all
byte-stable; the timings go to ``timings`` (a results file, outside the data folder and its manifest).
Never reads an evaluation split.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ..artifacts.inputs import read_rows, split_rows
from ..artifacts.shapes import ChatRow
from ..artifacts.jsonio import write_json, write_jsonl
from ..artifacts.manifest import write_manifest
from ..config import ConfigError, ModelsConfig, load_params, stage_config
from ..data.teacher import DistillConfig
from ..learn.dagger import DaggerConfig, run_iteration
from ..models.registry import ModelStore
from ..policy.base import GenConfig
from ..policy.load import load_policy
from ..records import Task
from ..resources import peak_memory_gb
from ..vocabulary import precision_fields

TRAIN_POOL = "train_pool"  # the only split DAgger reads
FILES = ("episodes.jsonl.gz", "visits.jsonl.gz", "rows.jsonl.gz", "train.jsonl.gz", "stats.json")


@dataclass(frozen=True)
class Plan:
    cfg: DaggerConfig
    models: ModelsConfig
    profile: str
    iteration: int
    tasks: list[Task]


def plan(params: Path, profile: str | None, iteration: int, data: Path) -> Plan:
    values = load_params(params)
    cfg, profile = stage_config(values, "dagger", DaggerConfig, profile, where=str(params))
    models, _ = stage_config(values, "models", ModelsConfig, profile, where=str(params))
    offered, _ = stage_config(values, "distill", DistillConfig, profile, where=str(params))
    if cfg.task_offset < offered.n:  # C's tasks are drawn from the first distill.n tasks of the pool
        raise ConfigError(f"{params}: dagger.task_offset {cfg.task_offset} is inside the {offered.n} training tasks C's "
                          f"data may come from (distill.n); DAgger's tasks must be fresh: set it to {offered.n} or more")
    try:
        cfg.beta(iteration)
        tasks = cfg.tasks(split_rows(data / "tasks", TRAIN_POOL, need_rows=True), iteration)
    except ValueError as e:
        raise ConfigError(f"{params}: {e}") from None
    return Plan(cfg, models, profile, iteration, tasks)


def run(p: Plan, store: ModelStore, adapter: Path, base: Path, out: Path, timings: Path,
        model_path: str | None = None) -> dict:
    """Roll out, label and write the iteration's folder ``out``; returns its statistics."""
    base_rows = read_rows(base, "build_sft (C's rows) or the previous dagger_rollout", ChatRow, need_rows=True)
    gen = GenConfig(max_new_tokens=p.cfg.max_new_tokens)
    student = load_policy(store, p.models.student, p.models.student_generation, adapter, gen, model_path,
                          p.models.student_precision)
    start = time.perf_counter()
    it = run_iteration(p.tasks, student, p.cfg, p.iteration)
    seconds = time.perf_counter() - start
    write_jsonl(out / "episodes.jsonl.gz", it.transcripts)
    write_jsonl(out / "visits.jsonl.gz", it.visits)
    write_jsonl(out / "rows.jsonl.gz", it.rows)
    write_jsonl(out / "train.jsonl.gz", base_rows + it.rows)
    stats = {**it.stats, "profile": p.profile, "student": p.models.student, **precision_fields(p.models.student_precision),
             "adapter": str(adapter),
             "base": str(base), "base_rows": len(base_rows), "train_rows": len(base_rows) + len(it.rows)}
    write_json(out / "stats.json", stats)
    write_manifest(out, [out / f for f in FILES], {"stage": "dagger_rollout", "iteration": p.iteration})
    write_json(timings, {"iteration": p.iteration, "backend": p.models.student_generation,
                                         "wall_s": round(seconds, 2), "peak_mem_gb": peak_memory_gb(),
                                         "gen_tokens": getattr(getattr(student, "stats", None), "new_tokens", 0)})
    return stats
