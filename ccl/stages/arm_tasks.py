"""Stage arm_tasks: the fresh training tasks the cpu-scale learning arms draw from (issue 59).

``ccl.data.scaled.fresh_tasks``: the training pool's tasks outside C's draw (params ``scaled_c``), in the
order the balanced draw continues. The stage checks that C's rows (stage build_c) are that draw's first
``budget`` episodes, so the tasks are fresh for the C the arms start from. Writes ``out/tasks/train_pool.jsonl``
(the fresh tasks; the arms' stages read it as their training pool), ``out/tasks/val_pool.jsonl`` (the
validation pool, unchanged: GRPO's monitor reads it from the same data root), ``out/arm_tasks.json``
(sizes, families, SHA-256) and ``out/manifest.json``. No model; byte-stable.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..artifacts.inputs import read_rows, split_rows
from ..artifacts.jsonio import sha256_file, write_json, write_jsonl
from ..artifacts.manifest import write_manifest
from ..config import load_params, stage_config
from ..data.scaled import ScaledCConfig, ScaledDrawError, draw, fresh_tasks

TRAIN_POOL, VAL_POOL = "train_pool", "val_pool"


def run(params: Path, profile: str | None, data: Path, c_rows: Path, out: Path) -> dict:
    cfg, profile = stage_config(load_params(params), "scaled_c", ScaledCConfig, profile, where=str(params))
    oracle = read_rows(data / "sft" / "oracle_train.jsonl", "build_datasets", need_rows=True)
    c_ids = [r["task_id"] for r in read_rows(c_rows, "build_c", need_rows=True)]
    if c_ids != [r["task_id"] for r in draw(oracle, cfg)]:
        raise ScaledDrawError(f"{c_rows}: not the draw params scaled_c describes ({cfg}); rerun stage build_c")
    fresh = fresh_tasks(split_rows(data / "tasks", TRAIN_POOL, need_rows=True), oracle, cfg)
    files = [out / "tasks" / f"{TRAIN_POOL}.jsonl", out / "tasks" / f"{VAL_POOL}.jsonl"]
    write_jsonl(files[0], fresh)
    write_jsonl(files[1], split_rows(data / "tasks", VAL_POOL, need_rows=True))
    record = {"profile": profile, "c_budget": cfg.budget, "sampler": cfg.sampler, "seed": cfg.seed,
              "fresh_tasks": len(fresh), "first_256_by_family": dict(sorted(Counter(t["family"] for t in fresh[:256]).items())),
              "sha256": {f.name: sha256_file(f) for f in files}}
    write_json(out / "arm_tasks.json", record)
    write_manifest(out, [*files, out / "arm_tasks.json"], {"profile": profile, "stage": "arm_tasks"})
    return record
