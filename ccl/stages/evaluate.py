"""Stage evaluate: run one configuration over the profile's evaluation splits, keeping transcripts.

A configuration is a baseline of ``ccl.vocabulary.BASELINES`` (the student alone or with the
worked examples, the teacher, the oracle) or a trained run, which needs its adapter.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..artifacts.inputs import split_rows
from ..artifacts.jsonio import sha256_file, write_json, write_jsonl
from ..artifacts.resume import ChunkLog
from ..config import ConfigError, ModelsConfig, stage_with_models
from ..episode.evaluate_config import EvaluateConfig, task_cap
from ..episode.evaluation import efficiency, fingerprint, run_tasks
from ..models.registry import ModelStore
from ..policy.adapters import resolve_adapter
from ..policy.base import GenConfig
from ..policy.load import load_policy
from ..vocabulary import BASELINES, DEFAULT_PRECISION, ORACLE, STUDENT_FEWSHOT, TEACHER, precision_fields


@dataclass(frozen=True)
class Plan:
    name: str
    cfg: EvaluateConfig
    profile: str
    model: str | None  # None for the oracle
    backend: str | None
    adapter: Path | None
    tasks: list[dict]
    precision: str = DEFAULT_PRECISION  # the student's (models.student_precision); others float32

    @property
    def label(self) -> str:
        return "oracle" if self.model is None else f"{self.model} on {self.backend}"


def who_plays(name: str, models: ModelsConfig, adapter: Path | None) -> tuple[str | None, str | None]:
    """The model and backend of a configuration: the teacher, the oracle (none) or the student."""
    if name not in BASELINES and adapter is None:
        raise ConfigError(f"--name {name}: not a baseline ({', '.join(BASELINES)}); pass --adapter for a trained run")
    if name == ORACLE:
        return None, None
    if name == TEACHER:
        return models.teacher, models.teacher_backend
    return models.student, models.student_generation


def plan(params: Path, profile: str | None, name: str, adapter: Path | None, data: Path) -> Plan:
    """The configuration's model and the first ``max_tasks_per_split`` tasks of each split of ``data/tasks``."""
    cfg, models, profile = stage_with_models(params, "evaluate", EvaluateConfig, profile)
    model, backend = who_plays(name, models, adapter)
    precision = models.student_precision if name not in (TEACHER, ORACLE) else DEFAULT_PRECISION
    tasks = []
    for split in cfg.splits:
        tasks += split_rows(data / "tasks", split, need_rows=True)[: task_cap(cfg, split)]
    return Plan(name, cfg, profile, model, backend, adapter, tasks, precision)


def adapter_hashes(adapter: Path | None) -> dict[str, str] | None:
    """SHA-256 of every file of the adapter, so a partial log never outlives a retrained adapter."""
    if adapter is None:
        return None
    folder = resolve_adapter(adapter)
    return {p.name: sha256_file(p) for p in sorted(folder.iterdir()) if p.is_file()} if folder.is_dir() else {}


def run(p: Plan, store: ModelStore, out: Path, model_path: str | None = None,
        progress: Callable[[int], None] = lambda n: None, say: Callable[[str], None] = print) -> Path:
    """Write ``out/<name>/episodes.jsonl.gz`` (transcripts, no verdicts) and ``generation.json``
    (model, backend, adapter, splits, efficiency, latencies); resumes from ``episodes.partial.jsonl``."""
    gen = GenConfig(max_new_tokens=p.cfg.max_new_tokens)
    policy = load_policy(store, ORACLE if p.model is None else p.model, p.backend, p.adapter, gen, model_path,
                         p.precision)
    folder = out / p.name
    log = ChunkLog(folder / "episodes.partial.jsonl",
                   fingerprint(p.name, p.model, p.backend, adapter_hashes(p.adapter), gen, p.cfg.batch_size, p.tasks)
                   | precision_fields(p.precision))
    if log.discarded:
        say(f"evaluate {p.name}: discarded a partial log written for other settings")
    progress(sum(log.done(t["id"]) for t in p.tasks))
    run = run_tasks(p.tasks, policy, log, p.cfg.batch_size, fewshot=p.name == STUDENT_FEWSHOT, progress=progress)
    done = [log.chunks[t["id"]] for t in p.tasks]
    rows = [d["row"] for d in done]
    write_jsonl(folder / "episodes.jsonl.gz", rows)
    record = {"name": p.name, "profile": p.profile, "model": p.model, "backend": p.backend,
              **precision_fields(p.precision), "adapter": str(p.adapter) if p.adapter else None,
              "splits": list(p.cfg.splits),
              "efficiency": efficiency(rows, run, getattr(policy, "stats", None)),
              "latency_s": {t["id"]: d["latency_s"] for t, d in zip(p.tasks, done)}}
    write_json(folder / "generation.json", record)
    log.remove()
    return folder / "episodes.jsonl.gz"
