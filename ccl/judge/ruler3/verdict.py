"""Ruler 3's verdict on one episode (issue 57): ruler 2's criteria made stricter where learners and
the red team found them farmable, standing alone.

One assignment of calls to gold nodes is made per episode (``ccl.judge.assignment.assign``) and read
by every structural check: ruler 2's table (``ccl.judge.criteria.STRUCTURAL_CHECKS``) and ruler 3's
call rules (``calls``: repeats of answered calls, unoffered tool names, vacuous calls). The answer is
judged by ruler 2's accounting of every word with ruler 3's few additions (``ccl.judge.statements``
with ``lexicon.VOCABULARY``; ``structure``,
``audit_checks``), by ruler 1's fact checks that are not word lists, run from ``ccl.judge.fact_checks``
(ruler 1's validator is never imported: ``tests/test_ruler3.py``), by the claims read against the
world's effects (``claims``) and by ruler 3's answer rules (``answer``). An answer is first read with
look-alike dashes before a number taken as minus signs (``answer.prepare``).

Every check of ruler 2 is kept (its claim words and the kept ruler-1 currency check among them), so
nothing ruler 2 refuses passes ruler 3 except through ``lexicon.VOCABULARY``; ruler 3's claim and currency
rules add to them. The episode succeeds when no reason is found; each reason belongs to one criterion
(``ccl.vocabulary.CRITERIA``), so the decomposed reward (``ccl.judge.codes.WEIGHTS``) and the sparse
one read the same list. Nothing any episode record holds can make :func:`judge` raise.
"""
from __future__ import annotations

from typing import Callable, TypedDict

from ...records import EpisodeRecord, Task
from ...vocabulary import CRITERIA, RULER3
from ..answers import fact_present
from ..assignment import Assignment, assign
from ..audit_checks import audit_reasons
from ..canonical import canonical
from ..codes import ANSWER_CRITERION
from ..criteria import STRUCTURAL_CHECKS, STRUCTURAL_CRITERION
from ..fact_checks import echoes, fact_reasons
from ..reading import read
from ..shape import MAX_ANSWER_CHARS, malformed
from ..statements import answer_reasons
from ..structure import structure_reasons
from .answer import answer_rule_reasons, prepare
from .calls import repeated_answered, unoffered_tool, unread_call, vacuous_call
from .claims import claim_reasons
from .lexicon import VOCABULARY

CallCheck = Callable[[Task, EpisodeRecord, Assignment], list[str]]
CALL_CHECKS: tuple[tuple[CallCheck, str], ...] = (
    (unoffered_tool, "selection"), (unread_call, "selection"), (vacuous_call, "arguments"),
    (repeated_answered, "recovery"),
)
RULER3_CRITERION = {"wrong_target": "outcome", "action_not_stated": "outcome", "second_value": "answer",
                    "restated_result": "answer"}
_CRITERION_OF = {**STRUCTURAL_CRITERION, **{c.__name__: k for c, k in CALL_CHECKS}, **ANSWER_CRITERION,
                 **RULER3_CRITERION}
assert set(_CRITERION_OF.values()) == set(CRITERIA)


class Ruler3Verdict(TypedDict):
    ruler: str  # always RULER3
    success: bool  # every criterion passed
    reasons: list[str]  # reason codes, each of one criterion
    criteria: dict[str, bool]  # CRITERIA order: passed or not


def criterion_of(reason: str) -> str:
    """The criterion a reason code belongs to (a code no criterion claims is a bug: KeyError)."""
    return _CRITERION_OF[reason.split(":", 1)[0]]


def _fact_checks(task: Task, final: str) -> list[str]:
    """Ruler 1's checks that are not word lists, on the answer's plain form."""
    plain = canonical(read(final).text, task["request"])
    out = [] if all(fact_present(f, plain) for f in task["required_facts"]) else ["missing_fact"]
    out += [r for r in fact_reasons(task, plain) if r in ("fact_not_attributed", "wrong_currency")]
    return out + (["echoes_request"] if echoes(plain, task["request"]) else [])


def _answer(task: Task, record: EpisodeRecord) -> list[str]:
    final = record["final"]
    if not isinstance(final, str):
        return []
    return (_fact_checks(task, final) + structure_reasons(final, record) + audit_reasons(task, record)
            + answer_reasons(task, record, VOCABULARY) + claim_reasons(task, record) + answer_rule_reasons(task, record))


def _malformed_parts(record: EpisodeRecord) -> str | None:
    """What ``shape.malformed`` does not check and ruler 3 reads: turns whose ``calls`` index the record's
    calls, effects that name a tool with argument objects. (Ruler 2 shares ``shape.malformed`` and keeps
    its bytes; ruler 3 alone never raises on these.)"""
    n = len(record["calls"])
    for turn in record["turns"]:
        if not isinstance(turn, dict) or not isinstance(turn.get("calls"), list) or not all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < n for i in turn["calls"]):
            return "bad_turn"
    for effect in record["effects"]:
        if not isinstance(effect, dict) or not isinstance(effect.get("tool"), str) or not isinstance(effect.get("args"), dict):
            return "bad_effect"
    return None


def reasons(task: Task, record: EpisodeRecord) -> list[str]:
    """Every ruler-3 reason against the episode, structural first (empty: success)."""
    problem = malformed(record) or _malformed_parts(record)
    if problem:
        return [f"malformed_record:{problem}"]
    a = assign(task, record)
    structural = [r for check, _ in STRUCTURAL_CHECKS + CALL_CHECKS for r in check(task, record, a)]
    if isinstance(record["final"], str) and len(record["final"]) > MAX_ANSWER_CHARS:
        return structural + ["overlong_answer"]  # measured on the answer as written, before it is prepared
    if isinstance(record["final"], str):
        record = {**record, "final": prepare(record["final"], record)}
    return list(dict.fromkeys(structural + _answer(task, record)))


def judge(task: Task, record: EpisodeRecord) -> Ruler3Verdict:
    """Ruler 3's verdict on one episode."""
    found = reasons(task, record)
    failed = {criterion_of(r) for r in found}
    return {"ruler": RULER3, "success": not found, "reasons": found,
            "criteria": {c: c not in failed for c in CRITERIA}}
