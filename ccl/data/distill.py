"""Teacher demonstrations (generation): the transcripts configuration B is built from.

The teacher runs the one runtime, with the student's system prompt and catalogue
rendering, on the first ``n`` tasks of the training pool. Pass 1 decodes greedily;
pass 2 draws one seeded sample (temperature 0.7, top-p 0.95) for every task pass 1
rejected (rejection sampling). Which episodes are accepted is decided by a separate
stage (:mod:`ccl.data.acceptance`), so a validator change re-judges the stored transcripts
and never regenerates pass 1.

Each pass runs in fixed chunks logged by :class:`ccl.artifacts.resume.ChunkLog`, so a killed run
continues from the last finished chunk and ends with byte-identical episode files.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Callable

from ..artifacts.jsonio import write_json, write_jsonl
from ..artifacts.resume import ChunkLog, chunked
from ..episode.evaluation import LOG_FORMAT, transcript_row
from ..episode.rollout import rollout
from ..policy.base import GenConfig
from .teacher import DistillConfig


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
        for task, ep, memory, _ in rollout(chunk, policy, batch_size=cfg.batch_size):
            rows.append({**transcript_row(task, ep, memory), "pass": pass_no})
            progress(1)
        order = {t["id"]: i for i, t in enumerate(chunk)}
        rows.sort(key=lambda r: order[r["task_id"]])
        log.append(index, {"rows": rows, "wall_s": round(time.perf_counter() - start, 2)})
    return [r for i in sorted(log.chunks) for r in log.chunks[i]["rows"]]


def generate_pass(name: str, pass_no: int, tasks: list[dict], policy, gen, cfg: DistillConfig, teacher: dict,
                  pool_sha256: str, out: Path, progress: Callable[[int], None] = lambda n: None) -> list[dict]:
    """One pass over ``tasks``, resumable; writes ``out/<name>.jsonl.gz`` (transcripts) and
    ``out/<name>.json`` (decoding, teacher, wall clock) and returns the rows."""
    fingerprint = {"format": LOG_FORMAT, "pass": name, "teacher": teacher, "gen": dataclasses.asdict(gen), "chunk": cfg.chunk,
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
