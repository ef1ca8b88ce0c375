"""Ruler 2: strict success that a learner cannot farm, judged criterion by criterion (issue 37).

Ruler 1 (``ccl.judge.validate``) is the validator the pre-registration named, and its verdicts
stay the published results. Ruler 2 judges the same episode as a vector of named criteria
(``ccl.vocabulary.CRITERIA``); the episode succeeds when every criterion passes. Each reason code
belongs to exactly one criterion (``criterion_of``), so the decomposed reward and the sparse one
are read off the same list of reasons and can never disagree. Its parts:

- the calls, effects and status: ``ccl.judge.criteria`` over one assignment of calls to gold nodes
  (``ccl.judge.assignment``);
- the answer: every statement accounted for (``ccl.judge.statements``), no tool-result structure
  (``ccl.judge.structure``), the audit's checks (``ccl.judge.audit_checks``), and, of ruler 1's fact
  checks, the ones that are not word lists (every required fact present, each parallel value beside
  its own entity, the right currency, not an echo of the request), run on the answer's plain form
  (``ccl.judge.reading`` then ``ccl.judge.canonical``).

Nothing any episode record holds can make :func:`judge` raise.
"""
from __future__ import annotations

from typing import TypedDict

from ..records import EpisodeRecord, Task
from ..vocabulary import CRITERIA, RULER2
from .audit_checks import audit_reasons
from .canonical import canonical
from .criteria import STRUCTURAL_CRITERION, structural_reasons
from .reading import read
from .statements import answer_reasons
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


# Ruler 1's answer checks that ruler 2 keeps (they are not word lists); the others (outcome phrases,
# claims, hedges, negations, competing values) are replaced by ccl.judge.statements, whose rule
# (account for every word) refuses what their lists missed and passes what they refused.
KEPT_FROM_RULER1 = {"missing_fact": "answer", "fact_not_attributed": "answer", "wrong_currency": "answer",
                    "echoes_request": "outcome"}
# answer reason code (the part before any ':') -> its criterion
_ANSWER_CRITERION = {
    **KEPT_FROM_RULER1,
    "raw_result_answer": "answer", "unnamed_currency": "answer", "ignores_request": "outcome",
    "result_key": "answer", "object_syntax": "answer", "observation_framing": "answer", "result_dump": "answer",
    "unsourced_value": "answer", "alternative_values": "answer", "unexplained_word": "answer",
    "question_in_answer": "answer", "foreign_script": "answer", "disguised_letters": "answer",
    "competing_value": "answer", "misattributed_value": "answer", "empty_statement": "answer",
    "overlong_answer": "answer", "malformed_record": "format",
    "outcome_not_stated": "outcome", "outcome_inconsistent": "outcome", "false_action_claim": "outcome",
    "denied_action_done": "outcome",
}
_CRITERION_OF = {**STRUCTURAL_CRITERION, **_ANSWER_CRITERION}
assert set(_CRITERION_OF.values()) == set(CRITERIA)


def criterion_of(reason: str) -> str:
    """The criterion a reason code belongs to (a code no criterion claims is a bug: KeyError)."""
    return _CRITERION_OF[reason.split(":", 1)[0]]


def malformed(record: object) -> str | None:
    """What makes a record unjudgeable (a shape the runtime never writes), or None. Ruler 2 fails such a
    record on its format instead of raising: a reward must survive any input."""
    if not isinstance(record, dict):
        return "not_an_object"
    for key, kind in (("final", (str, type(None))), ("calls", list), ("turns", list), ("effects", list)):
        if not isinstance(record.get(key), kind):
            return f"bad_{key}"
    for call in record["calls"]:
        if not isinstance(call, dict) or not isinstance(call.get("turn"), int) or not isinstance(call.get("outcome"), str):
            return "bad_call"
        if call.get("canonical") is not None and not isinstance(call.get("canonical"), str):
            return "bad_call"
    return None


def _ruler1_kept(task: Task, record: EpisodeRecord) -> list[str]:
    final = record["final"]
    if not isinstance(final, str):
        return []
    plain = canonical(read(final).text, task["request"])
    ruler1 = validate(task, {**record, "final": plain})
    return [r for r in ruler1["reasons"] + ruler1["strict_reasons"] if r.split(":", 1)[0] in KEPT_FROM_RULER1]


# An answer longer than this is refused unread (``overlong_answer``): the oracle's longest is under
# 200 characters and a policy's turn is capped at a few hundred tokens, and some of ruler 1's fact checks
# kept here grow with the square of the numbers an answer holds, so a reward must not read a novel.
MAX_ANSWER_CHARS = 2000


def reasons(task: Task, record: EpisodeRecord) -> list[str]:
    """Every ruler-2 reason against the episode, structural first (empty: success)."""
    problem = malformed(record)
    if problem:
        return [f"malformed_record:{problem}"]
    if isinstance(record["final"], str) and len(record["final"]) > MAX_ANSWER_CHARS:
        return structural_reasons(task, record) + ["overlong_answer"]
    out = structural_reasons(task, record) + _ruler1_kept(task, record)
    if isinstance(record["final"], str):
        out += structure_reasons(record["final"], record)
    out += audit_reasons(task, record) + answer_reasons(task, record)
    return list(dict.fromkeys(out))


def judge(task: Task, record: EpisodeRecord) -> Ruler2Verdict:
    """Ruler 2's verdict on one episode."""
    found = reasons(task, record)
    failed = {criterion_of(r) for r in found}
    criteria = {c: c not in failed for c in CRITERIA}
    return {"ruler": RULER2, "success": not found, "reasons": found, "criteria": criteria}
