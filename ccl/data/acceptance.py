"""Teacher acceptance: which teacher episodes become demonstrations (configuration B).

An episode is accepted when it succeeds under the acceptance ruler and is clean (see
:func:`rejection_reasons`). The ruler is a recorded parameter (params ``accept_teacher.ruler``):
study 1 pre-registered ruler 1, so its acceptance uses ruler 1 and rebuilds the published B;
ruler 2 (``ccl.judge.ruler2``, strict success a learner cannot farm, issue 37) writes an output of
its own for a later study and never overwrites a published study's input. Every episode is kept,
accepted or not, with its reasons and both rulers' verdicts; a task the teacher cannot solve is
simply absent from B, never filled in. Each row says which ruler decided ``accepted`` and whether
each ruler and the write-up's lenient definition accept it; :func:`ruler_change` lists the
episodes that moving from ruler 1 to ruler 2 removes or adds.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from typing import Iterable

from ..judge.judging import JudgeError, labelled
from ..judge.ruler2 import judge
from ..judge.validate import validate
from ..vocabulary import RULER1, RULER2
from .teacher import DistillConfig

ACCEPTANCE_RULERS = (RULER1, RULER2)  # the rulers teacher acceptance can judge by (not ruler 3: issue 57)

REJECTION_REASONS = ("not_success", "parse_error", "hallucinated_tools", "invalid_args",
                     "unnecessary_calls", "dependency_unsafe")


class AcceptanceError(ValueError):
    """An acceptance ruler that is not one of the study's rulers."""


@dataclass(frozen=True)
class AcceptanceConfig:
    """params.yaml ``accept_teacher``: the ruler whose success accepts a teacher episode."""

    ruler: str  # no default: each study names its ruler (study 1: ruler1, as pre-registered)

    def __post_init__(self) -> None:
        if self.ruler not in ACCEPTANCE_RULERS:
            raise AcceptanceError(f"accept_teacher.ruler: {self.ruler!r} is not a ruler; valid: {', '.join(ACCEPTANCE_RULERS)}")


def rejection_reasons(verdict: dict, success: bool) -> list[str]:
    """Why an episode is not a usable demonstration; empty means accepted.

    ``verdict`` is ruler 1's (its diagnostics say whether the episode is clean); ``success`` is
    the success that counts: the acceptance ruler's, or another ruler's or the write-up's, to count
    what those definitions would have accepted.
    """
    checks = {
        "not_success": not success,
        "parse_error": verdict["parse_errors"] > 0,
        "hallucinated_tools": verdict["hallucinated_tools"] > 0,
        "invalid_args": verdict["invalid_args"] > 0,
        "unnecessary_calls": verdict["unnecessary_calls"] > 0,
        "dependency_unsafe": not verdict["dependency_safe"],
    }
    return [r for r in REJECTION_REASONS if checks[r]]


def judged_row(task: dict, row: dict, ruler: str) -> dict:
    """A teacher transcript's acceptance record under ``ruler`` (no transcript: that stays in the
    pass file)."""
    verdict, second = validate(task, row["record"]), judge(task, row["record"])
    success = {RULER1: verdict["success"], RULER2: second["success"]}
    reasons = rejection_reasons(verdict, success[ruler])
    return {"task_id": row["task_id"], "pass": row["pass"], "family": row["family"],
            "template": row["template"], "ruler": ruler, "accepted": not reasons, "rejection_reasons": reasons,
            "accepted_ruler1": not rejection_reasons(verdict, success[RULER1]),
            "accepted_ruler2": not rejection_reasons(verdict, success[RULER2]),
            "accepted_writeup": not rejection_reasons(verdict, verdict["success_writeup"]),
            "verdict": labelled(verdict), RULER2: second}


def judge_pass(tasks_by_id: dict[str, dict], rows: Iterable[dict], where: str, ruler: str) -> list[dict]:
    out = []
    for row in rows:
        if row["task_id"] not in tasks_by_id:
            raise JudgeError(f"{where}: teacher episode of task {row['task_id']!r}, not in the training pool")
        out.append(judged_row(tasks_by_id[row["task_id"]], row, ruler))
    return out


def pass2_tasks(offered: list[dict], pass1_judged: list[dict], cfg: DistillConfig) -> list[dict]:
    """The tasks pass 2 resamples: those pass 1 rejected, in pool order, capped by ``pass2_max``.

    Rejected by ruler 1: pass 2 is part of the teacher's generation, which ran before ruler 2
    existed; choosing by ruler 2 would ask for teacher episodes that were never generated."""
    accepted = {r["task_id"] for r in pass1_judged if r["accepted_ruler1"]}
    rejected = [t for t in offered if t["id"] not in accepted]
    return rejected if cfg.pass2_max is None else rejected[: cfg.pass2_max]


def pass_summary(judged: list[dict], transcripts: list[dict], generation: dict) -> dict:
    reasons = Counter(r for row in judged for r in row["rejection_reasons"])
    accepted = [r for r in judged if r["accepted"]]
    return {
        "decoding": generation["decoding"],
        "episodes": len(judged),
        "accepted": len(accepted),
        "accepted_ruler1": sum(r["accepted_ruler1"] for r in judged),
        "accepted_ruler2": sum(r["accepted_ruler2"] for r in judged),
        "accepted_writeup": sum(r["accepted_writeup"] for r in judged),
        "acceptance_rate": round(len(accepted) / len(judged), 4) if judged else None,
        "rejection_reasons": {k: reasons[k] for k in REJECTION_REASONS if reasons[k]},
        "accepted_by_family": dict(sorted(Counter(r["family"] for r in accepted).items())),
        "prompt_tokens": sum(r["prompt_tokens"] for r in transcripts),
        "gen_tokens": sum(r["new_tokens"] for r in transcripts),
        "wall_s": generation["wall_s"],
    }


def summary(cfg: DistillConfig, teacher: dict, offered: list[dict], passes: dict[str, dict],
            judged: list[dict], ruler: str) -> dict:
    """The teacher-generation record: per pass, and over the tasks offered, accepted by ``ruler``."""
    accepted = [r for r in judged if r["accepted"]]
    return {
        "ruler": ruler,
        "teacher": teacher,
        "config": asdict(cfg),
        "tasks_offered": len(offered),
        "offered_by_family": dict(sorted(Counter(t["family"] for t in offered).items())),
        "accepted_episodes": len(accepted),
        "accepted_tasks_writeup": len({r["task_id"] for r in judged if r["accepted_writeup"]}),
        "accepted_share_of_tasks": round(len(accepted) / len(offered), 4) if offered else None,
        "accepted_by_family": dict(sorted(Counter(r["family"] for r in accepted).items())),
        "passes": passes,
        "ruler_change": ruler_change(judged),
        "wall_s_total": round(sum(p["wall_s"] for p in passes.values()), 2),
        "cost": "local inference; no API cost",
    }


def _listed(rows: list[dict]) -> list[dict]:
    return [{"task_id": r["task_id"], "pass": r["pass"], "template": r["template"],
             "ruler2_reasons": r[RULER2]["reasons"]} for r in rows]


def ruler_change(judged: list[dict]) -> dict:
    """What accepting by ruler 2 instead of ruler 1 changes, whichever ruler this acceptance uses:
    both counts, and the episodes (with their templates) that ruler 1 accepts and ruler 2 rejects,
    and the reverse."""
    removed = [r for r in judged if r["accepted_ruler1"] and not r["accepted_ruler2"]]
    added = [r for r in judged if r["accepted_ruler2"] and not r["accepted_ruler1"]]
    return {"accepted_ruler1": sum(r["accepted_ruler1"] for r in judged),
            "accepted_ruler2": sum(r["accepted_ruler2"] for r in judged),
            "removed": _listed(removed), "added": _listed(added),
            "removed_by_template": dict(sorted(Counter(r["template"] for r in removed).items())),
            "added_by_template": dict(sorted(Counter(r["template"] for r in added).items()))}
