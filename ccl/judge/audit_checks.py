"""The transcript audit's checks (``ccl.judge.audit`` says what they are for and why they are post hoc)."""
from __future__ import annotations

import json
import re
from typing import Iterable

from ..records import EpisodeRecord, Task, VerdictRow
from ..world.state import CURRENCIES
from .audit import AUDIT_REASONS
from .task_facts import ID_RE

_CODE_RE = re.compile(r"\b(" + "|".join(sorted(CURRENCIES)) + r")\b")


class AuditedVerdictRow(VerdictRow):
    """A verdict row with the audit's reasons (empty: nothing found)."""

    audit: list[str]


def _is_raw_result(answer: str) -> bool:
    try:
        value = json.loads(answer.strip())
    except ValueError:
        return False
    return isinstance(value, (dict, list))


def _codes(texts: Iterable[str]) -> set[str]:
    return {m.group(1) for text in texts for m in _CODE_RE.finditer(text)}


def _episode_texts(task: Task, record: EpisodeRecord) -> list[str]:
    """What the episode put before the model: the request, and every call's arguments and result."""
    texts = [task["request"]]
    for call in record["calls"]:
        texts.append(json.dumps(call.get("args"), ensure_ascii=False, sort_keys=True))
        texts.append(json.dumps(call.get("observation"), ensure_ascii=False, sort_keys=True))
    return texts


def audit_reasons(task: Task, record: EpisodeRecord) -> list[str]:
    """The audit's reasons for one episode, in ``AUDIT_REASONS`` order (an episode without a
    final answer has none: it already fails both success definitions)."""
    answer = record["final"]
    if answer is None:
        return []
    found: set[str] = set()
    if _is_raw_result(answer):
        found.add("raw_result_answer")
    if _codes([answer]) - _codes(_episode_texts(task, record)):
        found.add("unnamed_currency")
    named = {m.group(0) for m in ID_RE.finditer(task["request"])}
    if not task["gold"]["nodes"] and named and not any(i in answer for i in named):
        found.add("ignores_request")
    return [r for r in AUDIT_REASONS if r in found]


def audited(row: VerdictRow, task: Task, record: EpisodeRecord) -> AuditedVerdictRow:
    """``row`` with the audit's reasons added."""
    return AuditedVerdictRow(**row, audit=audit_reasons(task, record))  # type: ignore[typeddict-item]
