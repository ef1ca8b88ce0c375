"""Teacher acceptance: which teacher episodes become demonstrations (configuration B).

An episode is accepted only when it succeeds under the strict definition and is clean
(see :func:`rejection_reasons`). Every episode is kept, accepted or not, with its reasons;
a task the teacher cannot solve is simply absent from B, never filled in. The verdicts
also say how many episodes the write-up's lenient definition would have accepted.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Iterable

from ..judge.judging import JudgeError
from ..judge.validate import validate
from .teacher import DistillConfig

REJECTION_REASONS = ("not_success", "parse_error", "hallucinated_tools", "invalid_args",
                     "unnecessary_calls", "dependency_unsafe")


def rejection_reasons(verdict: dict, success: str = "success") -> list[str]:
    """Why an episode is not a usable demonstration; empty means accepted.

    ``success`` names the verdict's success field: the strict ``success`` (used), or
    ``success_writeup`` to count what the write-up's definition would have accepted.
    """
    checks = {
        "not_success": not verdict[success],
        "parse_error": verdict["parse_errors"] > 0,
        "hallucinated_tools": verdict["hallucinated_tools"] > 0,
        "invalid_args": verdict["invalid_args"] > 0,
        "unnecessary_calls": verdict["unnecessary_calls"] > 0,
        "dependency_unsafe": not verdict["dependency_safe"],
    }
    return [r for r in REJECTION_REASONS if checks[r]]


def judged_row(task: dict, row: dict) -> dict:
    """A teacher transcript's acceptance record (no transcript: that stays in the pass file)."""
    verdict = validate(task, row["record"])
    reasons = rejection_reasons(verdict)
    return {"task_id": row["task_id"], "pass": row["pass"], "family": row["family"],
            "template": row["template"], "accepted": not reasons, "rejection_reasons": reasons,
            "accepted_writeup": not rejection_reasons(verdict, "success_writeup"), "verdict": verdict}


def judge_pass(tasks_by_id: dict[str, dict], rows: Iterable[dict], where: str) -> list[dict]:
    out = []
    for row in rows:
        if row["task_id"] not in tasks_by_id:
            raise JudgeError(f"{where}: teacher episode of task {row['task_id']!r}, not in the training pool")
        out.append(judged_row(tasks_by_id[row["task_id"]], row))
    return out


def pass2_tasks(offered: list[dict], pass1_judged: list[dict], cfg: DistillConfig) -> list[dict]:
    """The tasks pass 2 resamples: those pass 1 rejected, in pool order, capped by ``pass2_max``."""
    accepted = {r["task_id"] for r in pass1_judged if r["accepted"]}
    rejected = [t for t in offered if t["id"] not in accepted]
    return rejected if cfg.pass2_max is None else rejected[: cfg.pass2_max]


def pass_summary(judged: list[dict], transcripts: list[dict], generation: dict) -> dict:
    reasons = Counter(r for row in judged for r in row["rejection_reasons"])
    accepted = [r for r in judged if r["accepted"]]
    return {
        "decoding": generation["decoding"],
        "episodes": len(judged),
        "accepted": len(accepted),
        "accepted_writeup": sum(r["accepted_writeup"] for r in judged),
        "acceptance_rate": round(len(accepted) / len(judged), 4) if judged else None,
        "rejection_reasons": {k: reasons[k] for k in REJECTION_REASONS if reasons[k]},
        "accepted_by_family": dict(sorted(Counter(r["family"] for r in accepted).items())),
        "prompt_tokens": sum(r["prompt_tokens"] for r in transcripts),
        "gen_tokens": sum(r["new_tokens"] for r in transcripts),
        "wall_s": generation["wall_s"],
    }


def summary(cfg: DistillConfig, teacher: dict, offered: list[dict], passes: dict[str, dict],
            judged: list[dict]) -> dict:
    """The teacher-generation record: per pass, and over the tasks offered."""
    accepted = [r for r in judged if r["accepted"]]
    return {
        "teacher": teacher,
        "config": asdict(cfg),
        "tasks_offered": len(offered),
        "offered_by_family": dict(sorted(Counter(t["family"] for t in offered).items())),
        "accepted_episodes": len(accepted),
        "accepted_tasks_writeup": len({r["task_id"] for r in judged if r["accepted_writeup"]}),
        "accepted_share_of_tasks": round(len(accepted) / len(offered), 4) if offered else None,
        "accepted_by_family": dict(sorted(Counter(r["family"] for r in accepted).items())),
        "passes": passes,
        "wall_s_total": round(sum(p["wall_s"] for p in passes.values()), 2),
        "cost": "local inference; no API cost",
    }
