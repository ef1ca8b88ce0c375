"""Stage val_replay: one configuration answers the validation replay set once (issue 40).

The set is the oracle's decisions on every validation-pool task (``ccl.learn.errors.golden``; never an
evaluation split), rebuilt here from the task file, which makes it deterministic. Writes
``<name>/actions.jsonl.gz`` (per decision: its half, coordinate and the model's text; no timing) and
``generation.json`` (timings). Grading is done by the stages that read it (err_data, err_compare), so a
validator change never regenerates these actions.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ..artifacts.inputs import split_rows
from ..artifacts.jsonio import write_json, write_jsonl
from ..config import ModelsConfig, stage_with_models
from ..learn.errors import ErrorRoundConfig, golden
from ..models.registry import ModelStore
from ..policy.base import GenConfig
from ..policy.load import load_policy
from ..replay.decisions import answer_decisions
from ..resources import peak_memory_gb
from ..vocabulary import precision_fields

VAL_POOL = "val_pool"


@dataclass(frozen=True)
class Plan:
    cfg: ErrorRoundConfig
    models: ModelsConfig
    profile: str
    name: str
    adapter: Path


def plan(params: Path, profile: str | None, name: str, adapter: Path) -> Plan:
    cfg, models, profile = stage_with_models(params, "err", ErrorRoundConfig, profile)
    return Plan(cfg, models, profile, name, adapter)


def run(p: Plan, store: ModelStore, data: Path, out: Path, model_path: str | None = None) -> dict:
    tasks = split_rows(data / "tasks", VAL_POOL, need_rows=True)
    tasks = tasks[: p.cfg.max_val_tasks] if p.cfg.max_val_tasks else tasks
    gold = golden(tasks)
    policy = load_policy(store, p.models.student, p.models.student_generation, p.adapter,
                         GenConfig(max_new_tokens=p.cfg.max_new_tokens), model_path, p.models.student_precision)
    start = time.perf_counter()
    answers = answer_decisions({t["id"]: t for t in tasks}, gold, policy, p.cfg.batch_size)
    seconds = time.perf_counter() - start
    rows = [{**a, "half": d["half"], "coordinate": d["coordinate"]} for a, d in zip(answers, gold)]
    folder = out / p.name
    write_jsonl(folder / "actions.jsonl.gz", rows)
    record = {"name": p.name, "profile": p.profile, "model": p.models.student, "backend": p.models.student_generation,
              **precision_fields(p.models.student_precision),
              "adapter": str(p.adapter), "split": VAL_POOL, "decisions": len(rows), "tasks": len(tasks),
              "wall_s": round(seconds, 2), "peak_mem_gb": peak_memory_gb()}
    write_json(folder / "generation.json", record)
    return record
