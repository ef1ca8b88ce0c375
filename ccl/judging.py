"""Judging: re-score stored transcripts with the validator and aggregate the metrics.

The judge stage reads a configuration's transcripts (``episodes.jsonl.gz``, written by
evaluation) and the task files, and writes one verdict row per episode and the metrics.
Changing the validator therefore reruns judging and what reads verdicts, never the
evaluation transcripts, the teacher's greedy pass or training (unless the set of accepted
teacher demonstrations changes).
"""
from __future__ import annotations

from typing import Iterable

from .validate import validate
from .vocabulary import DIAGNOSTICS, MAIN_SPLITS, OUTCOMES


class JudgeError(ValueError):
    """A transcript that cannot be judged (its task is missing); the message names it."""


def verdict_row(task: dict, row: dict) -> dict:
    """A transcript row without its record, with the verdict of the current validator."""
    out = {k: v for k, v in row.items() if k not in ("record", "new_tokens", "prompt_tokens")}
    out["verdict"] = validate(task, row["record"])
    return out


def judge_rows(tasks_by_id: dict[str, dict], rows: Iterable[dict], where: str) -> list[dict]:
    out = []
    for row in rows:
        task = tasks_by_id.get(row["task_id"])
        if task is None:
            raise JudgeError(f"{where}: episode of task {row['task_id']!r}, which is in no task file")
        out.append(verdict_row(task, row))
    return out


def _mean(values: Iterable) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def summarise(rows: list[dict]) -> dict:
    """n, both success rates and the mean of every diagnostic (nulls skipped)."""
    out: dict = {"n": len(rows)}
    for k in OUTCOMES + DIAGNOSTICS:
        out[k] = _mean(r["verdict"][k] for r in rows)
    return out


def metrics(rows: list[dict], splits: Iterable[str]) -> dict:
    by_split = {s: summarise([r for r in rows if r["dataset"] == s]) for s in splits}
    pooled = [r for r in rows if r["dataset"] in MAIN_SPLITS]
    return {"splits": by_split, "pooled_main": summarise(pooled) if pooled else None}
