"""Stage evaluate_fresh: one run's adapter (or the oracle) plays every task of a study's fresh splits, judged by
rulers 1, 2 and 3 (study 3, docs/preregistration-3.md).

The play and the verdicts are the validation stage's (``validate_run.play``): each task greedily, on the
profile's engine and precision (params ``models``), with the turn length and batch of params ``evaluate``,
whose ``splits`` and ``max_tasks_per_split`` say which tasks. Writes, in ``<out>/<name>/``:
``episodes.jsonl.gz`` (per task in split order: split, family, template, renamed, the three verdicts and the
transcript), ``results.json`` (successes per ruler, per split and pooled, per family and on renamed
catalogues) and ``generation.json`` (the seconds the play took and the machine), so that a rerun with the
same transcripts rewrites the first two byte for byte.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..artifacts.inputs import split_rows
from ..artifacts.jsonio import write_json, write_jsonl
from ..config import ModelsConfig, stage_with_models
from ..devices import cpu_record
from ..episode.evaluate_config import EvaluateConfig, task_cap
from ..errors import InputError
from ..models.registry import ModelStore
from ..policy.base import GenConfig
from ..policy.load import load_policy
from ..vocabulary import ORACLE, precision_fields
from .validate_run import play, tally

EPISODES, RESULTS, GENERATION = "episodes.jsonl.gz", "results.json", "generation.json"


@dataclass(frozen=True)
class Plan:
    cfg: EvaluateConfig
    models: ModelsConfig
    profile: str
    name: str
    adapter: Path | None  # None for the oracle


def plan(params: Path, profile: str | None, name: str, adapter: Path | None) -> Plan:
    if (adapter is None) != (name == ORACLE):
        raise InputError(f"evaluate_fresh {name}: a trained run needs --adapter and the oracle takes none")
    cfg, models, profile = stage_with_models(params, "evaluate", EvaluateConfig, profile)
    return Plan(cfg, models, profile, name, adapter)


def fresh_tasks(cfg: EvaluateConfig, tasks_dir: Path) -> list[dict]:
    """Every evaluated task, split by split in ``cfg.splits`` order, each split's first ``task_cap`` tasks."""
    tasks = []
    for split in cfg.splits:
        rows = split_rows(tasks_dir, split, need_rows=True)
        tasks += rows[: task_cap(cfg, split)]
    return tasks


def run(p: Plan, store: ModelStore, data: Path, out: Path, model_path: str | None = None) -> dict:
    tasks = fresh_tasks(p.cfg, data / "tasks")
    gen = GenConfig(max_new_tokens=p.cfg.max_new_tokens)
    if p.adapter is None:
        policy, model, backend, precision = load_policy(store, ORACLE), None, ORACLE, {}
    else:
        policy = load_policy(store, p.models.student, p.models.student_generation, p.adapter, gen, model_path,
                             p.models.student_precision)
        model, backend = p.models.student, p.models.student_generation
        precision = precision_fields(p.models.student_precision)
    rows, seconds = play(tasks, policy, p.cfg.batch_size)
    split_of = {t["id"]: t["dataset"] for t in tasks}
    rows = [{"split": split_of[r["task_id"]], **r} for r in rows]
    folder = out / p.name
    write_jsonl(folder / EPISODES, rows)
    per_split = {s: tally([r for r in rows if r["split"] == s]) for s in p.cfg.splits}
    record = {"name": p.name, "profile": p.profile, "model": model, "backend": backend, **precision,
              "adapter": None if p.adapter is None else str(p.adapter), "splits": list(p.cfg.splits),
              "max_new_tokens": p.cfg.max_new_tokens, "pooled": tally(rows), "by_split": per_split}
    write_json(folder / RESULTS, record)
    timing = {"name": p.name, "seconds": round(seconds, 1), "tasks": len(rows), "machine": cpu_record()}
    write_json(folder / GENERATION, timing)
    return record | timing
