"""Judging: re-score stored transcripts with both rulers and aggregate the metrics.

The judge stage reads a configuration's transcripts (``episodes.jsonl.gz``, written by
evaluation) and the task files, and writes one verdict row per episode and the metrics.
Each row carries two verdicts, each labelled with its ruler (``ccl.vocabulary.RULERS``):
``verdict``, ruler 1's (the pre-registered validator; its metrics are the published results,
``metrics``), and ``ruler2``, ruler 2's (``ccl.judge.ruler2``, post hoc; ``ruler2_metrics``).
Changing the validator therefore reruns judging and what reads verdicts, never the
evaluation transcripts, the teacher's greedy pass or training (unless the set of accepted
teacher demonstrations changes).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence, TypedDict, cast

from ..errors import StageError
from ..records import TRANSCRIPT_ONLY, EpisodeRow, LabelledVerdict, SplitMetrics, Task, Verdict, VerdictRow
from ..vocabulary import CRITERIA, DIAGNOSTICS, MAIN_SPLITS, OUTCOMES, RULER1, RULER2
from .ruler2 import Ruler2Verdict, judge
from .validate import validate


class JudgeError(StageError, ValueError):
    """A transcript that cannot be judged (its task is missing); the message names it."""


class JudgedRow(VerdictRow):
    """A verdict row with ruler 2's verdict beside ruler 1's."""

    ruler2: Ruler2Verdict


class Ruler2SplitMetrics(TypedDict):
    """Episodes, ruler 2's success rate and the pass rate of each of its criteria (CRITERIA order)."""

    n: int
    success: float | None
    criteria: dict[str, float | None]


def labelled(verdict: Verdict) -> LabelledVerdict:
    """Ruler 1's verdict with its ruler's name (the verdict itself unchanged)."""
    return cast(LabelledVerdict, {**verdict, "ruler": RULER1})


def verdict_row(task: Task, row: EpisodeRow) -> JudgedRow:
    """A transcript row without its record, with ruler 1's verdict and ruler 2's."""
    # every other field (strata, and whatever a producer added) is copied unchanged
    out: dict[str, Any] = {k: v for k, v in row.items() if k not in TRANSCRIPT_ONLY}
    out["verdict"] = labelled(validate(task, row["record"]))
    out[RULER2] = judge(task, row["record"])
    return cast(JudgedRow, out)


def judge_rows(tasks_by_id: dict[str, Task], rows: Iterable[EpisodeRow], where: str) -> list[JudgedRow]:
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


def summarise(rows: Sequence[VerdictRow]) -> SplitMetrics:
    """Ruler 1: n, both success rates and the mean of every diagnostic (nulls skipped)."""
    out: dict[str, Any] = {"n": len(rows)}
    for k in OUTCOMES + DIAGNOSTICS:
        out[k] = _mean(r["verdict"][k] for r in rows)
    return cast(SplitMetrics, out)


def _by_split(rows: Sequence[VerdictRow], splits: Iterable[str], summary: Callable[[list], Any]) -> dict[str, Any]:
    by_split = {s: summary([r for r in rows if r["dataset"] == s]) for s in splits}
    pooled = [r for r in rows if r["dataset"] in MAIN_SPLITS]
    return {"splits": by_split, "pooled_main": summary(pooled) if pooled else None}


def metrics(rows: Sequence[VerdictRow], splits: Iterable[str]) -> dict[str, Any]:
    """Ruler 1's run summary ``splits`` and ``pooled_main`` (records.RunSummary)."""
    return _by_split(rows, splits, summarise)


def summarise_ruler(rows: Sequence[dict], ruler: str) -> Ruler2SplitMetrics:
    """n, ``ruler``'s success rate and each criterion's pass rate (rulers 2 and 3 share the criteria)."""
    return {"n": len(rows), "success": _mean(r[ruler]["success"] for r in rows),
            "criteria": {c: _mean(r[ruler]["criteria"][c] for r in rows) for c in CRITERIA}}


def summarise_ruler2(rows: Sequence[JudgedRow]) -> Ruler2SplitMetrics:
    """n, ruler 2's success rate and each criterion's pass rate."""
    return summarise_ruler(rows, RULER2)


def ruler_metrics(rows: Sequence[dict], splits: Iterable[str], ruler: str) -> dict[str, Any]:
    """``ruler``'s ``splits`` and ``pooled_main``, in the shape of ``metrics``."""
    return {"ruler": ruler, **_by_split(rows, splits, lambda part: summarise_ruler(part, ruler))}


def ruler2_metrics(rows: Sequence[JudgedRow], splits: Iterable[str]) -> dict[str, Any]:
    """Ruler 2's ``splits`` and ``pooled_main``, in the shape of ``metrics``."""
    return ruler_metrics(rows, splits, RULER2)
