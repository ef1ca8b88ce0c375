"""One answer through the server's reading of a model turn and BFCL's checker.

The text becomes the server's OpenAI choice (``action_choice``: ``tool_calls``, or content), then what
BFCL's OpenAI handler records of such a response (``[{name: arguments JSON}]``, or the content), then
BFCL's verdict.
"""
from __future__ import annotations

from typing import Any

from ..serve.openai_format import action_choice
from . import bfcl_lib
from .bfcl_questions import Question


def bfcl_result(text: str) -> tuple[Any, str]:
    """The turn as BFCL's OpenAI handler records the server's response, and what it was: ``calls``
    (the ``[{name: arguments JSON}]`` of its tool_calls), ``final`` (an answer, no call) or
    ``unparseable`` (no action; the server returns the text as content)."""
    choice = action_choice(text, cut=False)
    calls = choice.message.get("tool_calls")
    if calls:
        return [{c["function"]["name"]: c["function"]["arguments"]} for c in calls], "calls"
    return choice.message.get("content") or "", "final" if choice.action is not None else "unparseable"


def verdict(q: Question, text: str) -> dict:
    """BFCL's verdict on one answer, with the kind of turn it was."""
    result, kind = bfcl_result(text)
    v = bfcl_lib.check(q.entry, q.category, result, q.answer)
    return {"id": q.id, "category": q.category, "valid": bool(v["valid"]), "kind": kind,
            "error_type": v.get("error_type")}
