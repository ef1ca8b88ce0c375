"""Judging: re-score stored transcripts with the validator and aggregate the metrics.

The judge stage reads a configuration's transcripts (``episodes.jsonl.gz``, written by
evaluation) and the task files, and writes one verdict row per episode and the metrics.
Changing the validator therefore reruns judging and what reads verdicts, never the
evaluation transcripts, the teacher's greedy pass or training (unless the set of accepted
teacher demonstrations changes).
"""
from __future__ import annotations

from typing import Any, Iterable, cast

from ..errors import StageError
from ..records import TRANSCRIPT_ONLY, EpisodeRow, SplitMetrics, Task, VerdictRow
from ..vocabulary import DIAGNOSTICS, MAIN_SPLITS, OUTCOMES
from .validate import validate


class JudgeError(StageError, ValueError):
    """A transcript that cannot be judged (its task is missing); the message names it."""


def verdict_row(task: Task, row: EpisodeRow) -> VerdictRow:
    """A transcript row without its record, with the verdict of the current validator."""
    # every other field (strata, and whatever a producer added) is copied unchanged
    out: dict[str, Any] = {k: v for k, v in row.items() if k not in TRANSCRIPT_ONLY}
    out["verdict"] = validate(task, row["record"])
    return cast(VerdictRow, out)


def judge_rows(tasks_by_id: dict[str, Task], rows: Iterable[EpisodeRow], where: str) -> list[VerdictRow]:
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


def summarise(rows: list[VerdictRow]) -> SplitMetrics:
    """n, both success rates and the mean of every diagnostic (nulls skipped)."""
    out: dict[str, Any] = {"n": len(rows)}
    for k in OUTCOMES + DIAGNOSTICS:
        out[k] = _mean(r["verdict"][k] for r in rows)
    return cast(SplitMetrics, out)


def metrics(rows: list[VerdictRow], splits: Iterable[str]) -> dict[str, Any]:
    """The run summary's ``splits`` and ``pooled_main`` (records.RunSummary)."""
    by_split = {s: summarise([r for r in rows if r["dataset"] == s]) for s in splits}
    pooled = [r for r in rows if r["dataset"] in MAIN_SPLITS]
    return {"splits": by_split, "pooled_main": summarise(pooled) if pooled else None}
