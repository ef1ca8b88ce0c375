"""The post-hoc transcript audit's checks, now part of ruler 2 (``ccl.judge.ruler2``).

Reading the pre-registered run's strict successes afterwards showed three kinds that state the
required facts without answering the user:

- ``raw_result_answer``: the final answer is a JSON object or array, in practice a tool's raw
  result handed back verbatim; every fact of the result is in it, so any fact check passes.
- ``unnamed_currency``: the answer names an ISO currency code that neither the request nor any
  tool call or result of the episode mentions ("1 EUR = 0.0108 GBP" for an INR to GBP rate).
- ``ignores_request``: a task that needs no tool whose request names identifiers (an order
  number, say) gets an answer naming none of them.

They were a sensitivity analysis of their own (``success_audited``) until ruler 2 absorbed them.
"""
from __future__ import annotations

import json
import re
from typing import Iterable

from ..records import EpisodeRecord, Task
from ..world.state import CURRENCIES
from .task_facts import ID_RE

AUDIT_REASONS = ("raw_result_answer", "unnamed_currency", "ignores_request")
_CODE_RE = re.compile(r"\b(" + "|".join(sorted(CURRENCIES)) + r")\b")


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

