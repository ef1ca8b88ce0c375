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
from .codes import ANSWER_CRITERION, KEPT_FROM_RULER1
from .codes import WEIGHTS as WEIGHTS  # the decomposed reward's weights, read as ruler2.WEIGHTS
from .criteria import STRUCTURAL_CRITERION, structural_reasons
from .reading import read
from .shape import MAX_ANSWER_CHARS, malformed
from .statements import answer_reasons
from .structure import structure_reasons
from .validate import validate


class Ruler2Verdict(TypedDict):
    ruler: str  # always RULER2
    success: bool  # every criterion passed
    reasons: list[str]  # reason codes, each of one criterion
    criteria: dict[str, bool]  # CRITERIA order: passed or not


_CRITERION_OF = {**STRUCTURAL_CRITERION, **ANSWER_CRITERION}
assert set(_CRITERION_OF.values()) == set(CRITERIA)


def criterion_of(reason: str) -> str:
    """The criterion a reason code belongs to (a code no criterion claims is a bug: KeyError)."""
    return _CRITERION_OF[reason.split(":", 1)[0]]


def _ruler1_kept(task: Task, record: EpisodeRecord) -> list[str]:
    final = record["final"]
    if not isinstance(final, str):
        return []
    plain = canonical(read(final).text, task["request"])
    ruler1 = validate(task, {**record, "final": plain})
    return [r for r in ruler1["reasons"] + ruler1["strict_reasons"] if r.split(":", 1)[0] in KEPT_FROM_RULER1]




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
