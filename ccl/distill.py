"""Teacher demonstrations with rejection sampling: the data of configuration B.

The teacher runs the one runtime, with the student's system prompt and catalogue
rendering, on the first ``n`` tasks of the training pool. Pass 1 decodes greedily;
pass 2 draws one seeded sample (temperature 0.7, top-p 0.95) for every task pass 1
rejected. An episode is accepted only when the validator passes and it is clean (see
:func:`rejection_reasons`). Every episode is kept, accepted or not, with its reasons;
a task the teacher cannot solve is simply absent from B, never filled in.

Each pass runs in fixed chunks logged by :class:`ccl.resume.ChunkLog`, so a killed run
continues from the last finished chunk and ends with byte-identical episode files.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

from .evaluation import episode_row
from .resume import ChunkLog, chunked
from .rollout import rollout

REJECTION_REASONS = ("not_success", "parse_error", "hallucinated_tools", "invalid_args",
                     "unnecessary_calls", "dependency_unsafe")


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


def pass2_tasks(offered: list[dict], pass1_rows: list[dict], cfg: DistillConfig) -> list[dict]:
    """The tasks pass 2 resamples: those pass 1 rejected, in pool order, capped by ``pass2_max``."""
    accepted = {r["task_id"] for r in pass1_rows if r["accepted"]}
    rejected = [t for t in offered if t["id"] not in accepted]
    return rejected if cfg.pass2_max is None else rejected[: cfg.pass2_max]


def rejection_reasons(verdict: dict) -> list[str]:
    """Why an episode is not a usable demonstration; empty means accepted."""
    checks = {
        "not_success": not verdict["success"],
        "parse_error": verdict["parse_errors"] > 0,
        "hallucinated_tools": verdict["hallucinated_tools"] > 0,
        "invalid_args": verdict["invalid_args"] > 0,
        "unnecessary_calls": verdict["unnecessary_calls"] > 0,
        "dependency_unsafe": not verdict["dependency_safe"],
    }
    return [r for r in REJECTION_REASONS if checks[r]]


def judged_row(task: dict, ep, pass_no: int) -> dict:
    row = episode_row(task, ep)
    reasons = rejection_reasons(row["verdict"])
    return {**row, "pass": pass_no, "accepted": not reasons, "rejection_reasons": reasons}


def run_pass(tasks: list[dict], policy, log: ChunkLog, cfg: DistillConfig, pass_no: int,
             progress: Callable[[int], None] = lambda n: None) -> list[dict]:
    """Run every chunk not yet in ``log``; return all rows in task order."""
    for index, chunk in enumerate(chunked(tasks, cfg.chunk)):
        if log.done(index):
            progress(len(chunk))
            continue
        start = time.perf_counter()
        rows = []
        for task, ep, _ in rollout(chunk, policy, batch_size=cfg.batch_size):
            rows.append(judged_row(task, ep, pass_no))
            progress(1)
        order = {t["id"]: i for i, t in enumerate(chunk)}
        rows.sort(key=lambda r: order[r["task_id"]])
        log.append(index, {"rows": rows, "wall_s": round(time.perf_counter() - start, 2)})
    return [r for i in sorted(log.chunks) for r in log.chunks[i]["rows"]]


def pass_summary(rows: list[dict], wall_s: float, decoding: dict) -> dict:
    reasons = Counter(r for row in rows for r in row["rejection_reasons"])
    accepted = [r for r in rows if r["accepted"]]
    return {
        "decoding": decoding,
        "episodes": len(rows),
        "accepted": len(accepted),
        "acceptance_rate": round(len(accepted) / len(rows), 4) if rows else None,
        "rejection_reasons": {k: reasons[k] for k in REJECTION_REASONS if reasons[k]},
        "accepted_by_family": dict(sorted(Counter(r["family"] for r in accepted).items())),
        "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
        "gen_tokens": sum(r["new_tokens"] for r in rows),
        "wall_s": round(wall_s, 2),
    }


def summary(cfg: DistillConfig, teacher: dict, offered: list[dict], passes: dict[str, dict],
            rows: list[dict]) -> dict:
    """The teacher-generation record: per pass, and over the tasks offered."""
    accepted = [r for r in rows if r["accepted"]]
    return {
        "teacher": teacher,
        "config": asdict(cfg),
        "tasks_offered": len(offered),
        "offered_by_family": dict(sorted(Counter(t["family"] for t in offered).items())),
        "accepted_episodes": len(accepted),
        "accepted_share_of_tasks": round(len(accepted) / len(offered), 4) if offered else None,
        "accepted_by_family": dict(sorted(Counter(r["family"] for r in accepted).items())),
        "passes": passes,
        "wall_s_total": round(sum(p["wall_s"] for p in passes.values()), 2),
        "cost": "local inference; no API cost",
    }
