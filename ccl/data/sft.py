"""Episodes to chat-format SFT rows, with assistant turns in one canonical JSON form.

Both data sources (oracle and teacher) go through :func:`sft_row`, so B and C differ
only in their decisions, never in surface format: every assistant turn, as target and
in the history, is re-serialised with :func:`ccl.episode.runtime.format_action`.
"""
from __future__ import annotations

from ..episode.runtime import format_action, parse_action


def canonical_text(text: str) -> str:
    action, error, _ = parse_action(text)
    if action is None:
        raise ValueError(f"cannot canonicalise an unparseable assistant turn ({error})")
    return format_action(action)


def sft_row(task: dict, record: dict, source: str) -> dict:
    messages = [dict(m) for m in record["messages"]]
    for m in messages:
        if m["role"] == "assistant":
            m["content"] = canonical_text(m["content"])
    return {"task_id": task["id"], "template": task["template"], "family": task["family"],
            "source": source, "messages": messages,
            "n_assistant_turns": sum(m["role"] == "assistant" for m in messages)}
