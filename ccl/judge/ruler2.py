"""Ruler 2: strict success that a learner cannot farm, judged criterion by criterion (issue 37).

Ruler 1 (``ccl.judge.validate``) is the validator the pre-registration named, and its verdicts
stay the published results. Ruler 2 judges the same episode as a vector of named criteria
(``ccl.vocabulary.CRITERIA``); the episode succeeds when every criterion passes. Each reason code
belongs to exactly one criterion (``criterion_of``), so the decomposed reward and the sparse one
are read off the same list of reasons and can never disagree.

Nothing any episode record holds can make :func:`judge` raise.
"""
from __future__ import annotations

from typing import TypedDict

from ..records import EpisodeRecord, Task
from ..vocabulary import CRITERIA, RULER2
from .actions import action_reasons
from .audit_checks import audit_reasons
from .reading import read
from .recovery import recovery_reasons
from .structure import structure_reasons
from .validate import validate

# Weights of the decomposed reward (they sum to 1; the oracle scores 1 on every task). The answer
# and the outcome weigh most: they are what the user reads, and what the red team attacks.
WEIGHTS = {"format": 0.10, "selection": 0.15, "arguments": 0.15, "dependency_order": 0.10,
           "recovery": 0.10, "outcome": 0.20, "answer": 0.20}
assert tuple(WEIGHTS) == CRITERIA and abs(sum(WEIGHTS.values()) - 1) < 1e-12


class Ruler2Verdict(TypedDict):
    ruler: str  # always RULER2
    success: bool  # every criterion passed
    reasons: list[str]  # reason codes, each of one criterion
    criteria: dict[str, bool]  # CRITERIA order: passed or not


# reason code (the part before any ':') -> its criterion
_CRITERION_OF = {
    "no_final": "format",
    "gold_call_missing": "selection", "calls_on_no_tool_task": "selection", "unrequested_action": "selection",
    "unoffered_action": "selection", "forbidden_attempt": "selection", "permission_violation": "selection",
    "denied_retry": "selection",
    "side_effects_mismatch": "arguments", "undercutting_argument": "arguments",
    "dependency_unsafe": "dependency_order", "parallel_split": "dependency_order",
    "gold_call_unanswered": "recovery", "repeated_in_turn": "recovery", "retry_before_failure": "recovery",
    "fallback_unprompted": "recovery",
    "status_mismatch": "outcome", "outcome_not_stated": "outcome", "contradicts_outcome": "outcome",
    "claims_action": "outcome", "false_action_claim": "outcome", "echoes_request": "outcome",
    "ignores_request": "outcome",
    "missing_fact": "answer", "competing_value": "answer", "hedged_fact": "answer", "negated_fact": "answer",
    "fact_not_attributed": "answer", "wrong_currency": "answer", "unnamed_currency": "answer",
    "raw_result_answer": "answer", "result_key": "answer", "object_syntax": "answer",
    "observation_framing": "answer",
}


def criterion_of(reason: str) -> str:
    """The criterion a reason code belongs to (a code no criterion claims is a bug: KeyError)."""
    return _CRITERION_OF[reason.split(":", 1)[0]]


def _reasons(task: Task, record: EpisodeRecord) -> list[str]:
    final = record["final"]
    read_record = {**record, "final": read(final).text} if isinstance(final, str) else record
    ruler1 = validate(task, read_record)
    reasons = ruler1["reasons"] + ruler1["strict_reasons"]
    if isinstance(final, str):
        reasons += structure_reasons(final, record)
    reasons += recovery_reasons(task, record) + action_reasons(task, record) + audit_reasons(task, record)
    return list(dict.fromkeys(reasons))


def judge(task: Task, record: EpisodeRecord) -> Ruler2Verdict:
    """Ruler 2's verdict on one episode."""
    reasons = _reasons(task, record)
    failed = {criterion_of(r) for r in reasons}
    criteria = {c: c not in failed for c in CRITERIA}
    return {"ruler": RULER2, "success": not reasons, "reasons": reasons, "criteria": criteria}
