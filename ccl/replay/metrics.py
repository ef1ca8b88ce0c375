"""Replay metrics of graded decision rows (one per decision, from :func:`ccl.replay.grading.grade_rows`).

Apart from grading so that the analysis of stored verdicts depends on the records' vocabulary
only, not on the runtime and validator that produced them.
"""
from __future__ import annotations

from typing import Any, Iterable

from ..records import DecisionKind, ReplayVerdict

K, V = DecisionKind, ReplayVerdict
RECOVERY = (K.RECOVERY_TIMEOUT, K.RECOVERY_UNAVAILABLE, K.RECOVERY_NOT_FOUND)


def _rate(hits: Iterable[bool]) -> float | None:
    xs = list(hits)
    return sum(xs) / len(xs) if xs else None


def summarise(rows: list[dict]) -> dict[str, Any]:
    """Replay metrics of graded rows (one per decision): see docs/architecture.md."""
    ok = [r["verdict"] == V.PASS for r in rows]
    calls = [r for r in rows if r["status"] is None]
    finals = [r for r in rows if r["status"] is not None]
    right_tool = [r for r in calls if r["verdict"] in (V.PASS, V.WRONG_ARGS)]
    stopped = [r for r in rows if r["stopped"]]
    routing: dict[str, list[bool]] = {}
    for r in calls:
        for t in r["ready_tools"]:
            routing.setdefault(t, []).append(t in r["tools"])
    return {
        "decisions": len(rows), "tasks": len({r["task_id"] for r in rows}),
        "pass": _rate(ok),
        "pass_strict": _rate(r["verdict"] == V.PASS and r["strict"] for r in rows),
        "format_valid": _rate(r["verdict"] != V.MALFORMED for r in rows),
        "arg_quality": _rate(r["verdict"] == V.PASS for r in right_tool),
        "recovery": _rate(r["verdict"] == V.PASS for r in rows if r["kind"] in RECOVERY),
        "stop_precision": _rate(r["status"] is not None for r in stopped),
        "stop_recall": _rate(r["stopped"] for r in finals),
        "verdicts": {v.value: sum(r["verdict"] == v for r in rows) for v in V},
        "by_kind": {k.value: _rate(r["verdict"] == V.PASS for r in rows if r["kind"] == k)
                    for k in K if any(r["kind"] == k for r in rows)},
        "by_depth": {str(d): _rate(r["verdict"] == V.PASS for r in rows if r["depth"] == d)
                     for d in sorted({r["depth"] for r in rows})},
        "routing": {t: sum(v) / len(v) for t, v in sorted(routing.items())},
    }
