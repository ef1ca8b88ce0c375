"""Teacher demonstrations (generation): the transcripts configuration B is built from.

The teacher runs the one runtime, with the student's system prompt and catalogue
rendering, on the first ``n`` tasks of the training pool. Pass 1 decodes greedily;
pass 2 draws one seeded sample (temperature 0.7, top-p 0.95) for every task pass 1
rejected (rejection sampling). Which episodes are accepted is decided by a separate
stage (:mod:`ccl.acceptance`), so a validator change re-judges the stored transcripts
and never regenerates pass 1.

Each pass runs in fixed chunks logged by :class:`ccl.resume.ChunkLog`, so a killed run
continues from the last finished chunk and ends with byte-identical episode files.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .config import ConfigError, stage_with_models
from .evaluation import transcript_row
from .jsonio import read_jsonl, sha256_file, write_json, write_jsonl
from .models.registry import ModelsConfig, get_spec
from .policy.base import GenConfig
from .resume import ChunkLog, chunked
from .rollout import rollout


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


def load_setup(params: Path, profile: str | None, pool_path: Path, n: int | None,
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
    elif cfg.n > len(pool):
        raise ConfigError(f"n={cfg.n} exceeds the training pool ({len(pool)} tasks in {pool_path})")
    else:
        offered = pool[: cfg.n]
    spec = get_spec(models.teacher)
    teacher = {"model": spec.name, "upstream": spec.upstream, "license": spec.license,
               "backend": models.teacher_backend, "revision": spec.revision or spec.sha256}
    return TeacherSetup(cfg, models, profile, offered, sha256_file(pool_path), teacher)


def pass_decoding(cfg: DistillConfig, pass_no: int) -> GenConfig:
    """Pass 1 is greedy; pass 2 samples at the configured temperature and top-p, seeded."""
    if pass_no == 1:
        return GenConfig(max_new_tokens=cfg.max_new_tokens)
    return GenConfig(max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature, top_p=cfg.top_p, seed=cfg.seed)


def run_pass(tasks: list[dict], policy, log: ChunkLog, cfg: DistillConfig, pass_no: int,
             progress: Callable[[int], None] = lambda n: None) -> list[dict]:
    """Run every chunk not yet in ``log``; return all transcript rows in task order."""
    for index, chunk in enumerate(chunked(tasks, cfg.chunk)):
        if log.done(index):
            progress(len(chunk))
            continue
        start = time.perf_counter()
        rows = []
        for task, ep, _ in rollout(chunk, policy, batch_size=cfg.batch_size):
            rows.append({**transcript_row(task, ep), "pass": pass_no})
            progress(1)
        order = {t["id"]: i for i, t in enumerate(chunk)}
        rows.sort(key=lambda r: order[r["task_id"]])
        log.append(index, {"rows": rows, "wall_s": round(time.perf_counter() - start, 2)})
    return [r for i in sorted(log.chunks) for r in log.chunks[i]["rows"]]


def generate_pass(name: str, pass_no: int, tasks: list[dict], policy, gen, cfg: DistillConfig, teacher: dict,
                  pool_sha256: str, out: Path, progress: Callable[[int], None] = lambda n: None) -> list[dict]:
    """One pass over ``tasks``, resumable; writes ``out/<name>.jsonl.gz`` (transcripts) and
    ``out/<name>.json`` (decoding, teacher, wall clock) and returns the rows."""
    fingerprint = {"pass": name, "teacher": teacher, "gen": dataclasses.asdict(gen), "chunk": cfg.chunk,
                   "batch_size": cfg.batch_size, "pool_sha256": pool_sha256, "tasks": [t["id"] for t in tasks]}
    log = ChunkLog(out / f"{name}.partial.jsonl", fingerprint)
    if log.discarded:
        print(f"  {name}: discarded a partial log written under other settings")
    rows = run_pass(tasks, policy, log, cfg, pass_no, progress) if tasks else []
    write_jsonl(out / f"{name}.jsonl.gz", rows)
    decoding = {"temperature": gen.temperature, "top_p": gen.top_p, "seed": gen.seed,
                "max_new_tokens": gen.max_new_tokens}
    write_json(out / f"{name}.json", {"pass": pass_no, "teacher": teacher, "config": dataclasses.asdict(cfg),
                                      "decoding": decoding, "episodes": len(rows),
                                      "wall_s": round(sum(c["wall_s"] for c in log.chunks.values()), 2)})
    log.remove()
    return rows
