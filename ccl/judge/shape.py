"""An episode record's shape as rulers 2 and 3 need it, and the longest answer they read (moved here
unchanged from ``ruler2``, issue 57). A reward must survive any input: a record of a shape the
runtime never writes fails on its format instead of raising."""
from __future__ import annotations

# An answer longer than this is refused unread (``overlong_answer``): the oracle's longest is under
# 200 characters and a policy's turn is capped at a few hundred tokens, and some of ruler 1's fact checks
# kept here grow with the square of the numbers an answer holds, so a reward must not read a novel.
MAX_ANSWER_CHARS = 2000


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
