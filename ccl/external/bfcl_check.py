"""One answer through the server's reading of a model turn and BFCL's checker.

The text becomes the server's OpenAI choice (``action_choice``: ``tool_calls``, or content), then what
BFCL's OpenAI handler records of such a response (``[{name: arguments JSON}]``, or the content), then
BFCL's verdict.

Two ways a turn can hold a right call that the study's reading does not pass on are flagged beside the
verdict, so the table can say how often they happened: the study's action is one JSON value, so calls in
further JSON values after it (one ``<tool_call>`` block per call, as Qwen's chat format writes them)
are not read (``unread_json``); and arguments written as a JSON string rather than an object
(``arguments_not_object``) reach BFCL as that string, which BFCL does not decode.
"""
from __future__ import annotations

import json
from typing import Any

from ..serve.openai_format import Choice, action_choice
from . import bfcl_lib
from .bfcl_questions import Question


def bfcl_result(text: str) -> tuple[Any, str]:
    """The turn as BFCL's OpenAI handler records the server's response, and what it was: ``calls``
    (the ``[{name: arguments JSON}]`` of its tool_calls), ``final`` (an answer, no call) or
    ``unparseable`` (no action; the server returns the text as content)."""
    return _record(action_choice(text, cut=False))


def _record(choice: Choice) -> tuple[Any, str]:
    calls = choice.message.get("tool_calls")
    if calls:
        return [{c["function"]["name"]: c["function"]["arguments"]} for c in calls], "calls"
    return choice.message.get("content") or "", "final" if choice.action is not None else "unparseable"


def _call_like(value: Any) -> bool:
    """An object naming a tool or holding calls, or a list holding such an object (a data literal such as
    ``["a", "b"]`` in a code answer is not one)."""
    if isinstance(value, list):
        return any(_call_like(v) for v in value)
    return isinstance(value, dict) and bool({"calls", "tool", "name", "function"} & set(value))


def json_values(text: str) -> list[Any]:
    """The JSON values the text holds one after another, each read from the first bracket after the
    previous one ends (a turn is at most the generation cap, so trying each bracket stays cheap)."""
    decoder, found, i = json.JSONDecoder(), [], 0
    while (j := min((k for k in (text.find("{", i), text.find("[", i)) if k != -1), default=-1)) != -1:
        try:
            value, i = decoder.raw_decode(text, j)
            found.append(value)
        except ValueError:
            i = j + 1
    return found


def flags(text: str, choice: Choice | None = None) -> dict[str, bool]:
    """Whether the turn holds call-like JSON after its first value, and whether a call's arguments are
    not an object (``choice``: the server's reading of ``text``, when the caller has it)."""
    values = [v for v in json_values(text) if _call_like(v)]
    choice = choice or action_choice(text, cut=False)
    calls = choice.action.calls if choice.action is not None and choice.action.calls else []
    return {"unread_json": len(values) > 1, "arguments_not_object": any(not isinstance(c["args"], dict) for c in calls)}


def verdict(q: Question, text: str) -> dict:
    """BFCL's verdict on one answer, with the kind of turn it was and the flags above."""
    choice = action_choice(text, cut=False)  # read once: the record for BFCL and the flags both use it
    result, kind = _record(choice)
    v = bfcl_lib.check(q.entry, q.category, result, q.answer)
    return {"id": q.id, "category": q.category, "valid": bool(v["valid"]), "kind": kind,
            "error_type": v.get("error_type"), **flags(text, choice)}
