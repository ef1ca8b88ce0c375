"""Stage validate_run: one trained run plays every task of the validation pool, judged by three rulers.

The competent-student pilot (experiments/c_scale, issue 58) chose its recipe on these numbers, and the
cpu-scale profile's pipeline (scale/dvc.yaml) writes them for the run it trains, so that a fresh clone
can check that the recipe reproduces. Validation only: no evaluation split is read. Each task is played
greedily by the profile's engine and precision (params ``models``), with the turn length and batch of
params ``evaluate``, and judged by ruler 1 (the pre-registered validator), ruler 2 and ruler 3 (strict
success each). Writes ``<out>/<name>.jsonl.gz`` (per task: family, template, renamed, the three
verdicts and the transcript), ``<out>/<name>.json`` (success pooled, per family and on renamed and
unrenamed catalogues, per ruler) and ``<out>/<name>.generation.json`` (the seconds the play took and the
machine): the timing stays out of the results, so a rerun with the same transcripts rewrites the results'
bytes exactly.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..artifacts.inputs import split_rows
from ..artifacts.jsonio import write_json, write_jsonl
from ..config import ModelsConfig, stage_with_models
from ..devices import cpu_record
from ..episode.evaluate_config import EvaluateConfig
from ..episode.rollout import rollout
from ..judge.rulers import judge_by
from ..judge.validate import validate
from ..models.registry import ModelStore
from ..policy.base import GenConfig
from ..policy.load import load_policy
from ..records import EpisodeRecord, Task
from ..vocabulary import RULER1, RULER2, RULER3, precision_fields
from ..world.tasks.base import FAMILIES

VAL_POOL = "val_pool"
RULERS = (RULER1, RULER2, RULER3)


@dataclass(frozen=True)
class Plan:
    cfg: EvaluateConfig
    models: ModelsConfig
    profile: str
    name: str
    adapter: Path


def plan(params: Path, profile: str | None, name: str, adapter: Path) -> Plan:
    cfg, models, profile = stage_with_models(params, "evaluate", EvaluateConfig, profile)
    return Plan(cfg, models, profile, name, adapter)


def verdicts(task: Task, record: EpisodeRecord) -> dict[str, bool]:
    """Strict success under each ruler."""
    return {RULER1: validate(task, record)["success"], RULER2: judge_by(RULER2)(task, record)["success"],
            RULER3: judge_by(RULER3)(task, record)["success"]}


def play(tasks: list[Task], policy, batch_size: int) -> tuple[list[dict], float]:
    """Every task played once; one row per task in ``tasks`` order, and the seconds the rollout took."""
    start = time.perf_counter()
    records = {f.task["id"]: f.episode.record() for f in rollout(tasks, policy, batch_size=batch_size)}
    seconds = time.perf_counter() - start
    rows = [{"task_id": t["id"], "family": t["family"], "template": t["template"], "renamed": bool(t["rename"]),
             **verdicts(t, records[t["id"]]), "record": records[t["id"]]} for t in tasks]
    return rows, seconds


def tally(rows: list[dict]) -> dict:
    """Successes per ruler: pooled, per family and on renamed / unrenamed catalogues; and the counts."""
    out: dict = {"tasks": len(rows), "n_renamed": sum(r["renamed"] for r in rows),
                 "n_by_family": {f: sum(r["family"] == f for r in rows) for f in FAMILIES}}
    for ruler in RULERS:
        by_family = Counter(r["family"] for r in rows if r[ruler])
        out[ruler] = {"success": sum(r[ruler] for r in rows),
                      "renamed": sum(r[ruler] for r in rows if r["renamed"]),
                      "unrenamed": sum(r[ruler] for r in rows if not r["renamed"]),
                      "by_family": {f: by_family.get(f, 0) for f in FAMILIES}}
    return out


def play_val_pool(store: ModelStore, models: ModelsConfig, cfg: EvaluateConfig, adapter: Path, data: Path,
                  model_path: str | None = None) -> tuple[list[dict], float]:
    """Every task of ``data``'s validation pool played by ``adapter`` on ``models``' engine and precision,
    with ``cfg``'s turn length and batch (``play``'s rows and seconds); the competent-student pilot calls
    this too, so its cells and this stage play alike."""
    tasks = split_rows(data / "tasks", VAL_POOL, need_rows=True)
    policy = load_policy(store, models.student, models.student_generation, adapter,
                         GenConfig(max_new_tokens=cfg.max_new_tokens), model_path, models.student_precision)
    return play(tasks, policy, cfg.batch_size)


def run(p: Plan, store: ModelStore, data: Path, out: Path, model_path: str | None = None) -> dict:
    rows, seconds = play_val_pool(store, p.models, p.cfg, p.adapter, data, model_path)
    write_jsonl(out / f"{p.name}.jsonl.gz", rows)
    record = {"name": p.name, "profile": p.profile, "model": p.models.student, "backend": p.models.student_generation,
              **precision_fields(p.models.student_precision), "split": VAL_POOL,
              "max_new_tokens": p.cfg.max_new_tokens, **tally(rows)}
    write_json(out / f"{p.name}.json", record)
    timing = {"name": p.name, "seconds": round(seconds, 1), "machine": cpu_record()}
    write_json(out / f"{p.name}.generation.json", timing)
    return record | timing
