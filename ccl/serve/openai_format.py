"""The study's prompts and actions in the OpenAI chat-completions shape: ``tools`` in, ``tool_calls`` out.

- A task's catalogue becomes OpenAI ``tools`` (``Catalogue.openai_tools``); ``catalogue.render_tools``
  turns any such list into the catalogue listing of the system prompt, and the runtime renders its
  own catalogue through the same function, so a client that sends a task's tools gets the very
  prompt the episode loop builds.
- A request's messages become the study's messages (:func:`study_messages`): the client's system
  text is the context line after the static head (date, role), assistant ``tool_calls`` become the
  study's JSON action (the model's own text where the server generated those calls), consecutive
  ``tool`` messages become one observation.
- A model's action comes back as ``tool_calls`` or as content (:func:`action_choice`).
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Callable

from ..artifacts.jsonio import dumps
from ..data.sft_export import from_tool_format, tool_call
from ..episode.prompt import compose_system
from ..episode.prompt_head import observation_lines
from ..episode.runtime import Action, Limits, parse_action
from ..world.catalogue import render_tools


class FormatError(ValueError):
    """A request that cannot be put in the study's format; the message names the field."""

    def __init__(self, message: str, param: str = "messages"):
        super().__init__(message)
        self.param = param


# ---------------------------------------------------------------- messages in
def tool_result_line(name: str, content: str) -> str:
    """A tool message's content as an observation line: a result object the runtime wrote
    (``{"ok": ..., "tool": ...}``) is kept in canonical form; anything else is wrapped as the
    named tool's successful result."""
    try:
        obj = json.loads(content)
    except ValueError:
        obj = content
    if isinstance(obj, dict) and "ok" in obj and "tool" in obj:
        return dumps(obj)
    return dumps({"ok": True, "result": obj, "tool": name})


def _text(m: dict, i: int) -> str:
    content = m.get("content")
    if content is None:
        return ""
    if isinstance(content, list):  # content parts: only text
        parts = []
        for j, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise FormatError(f"messages[{i}].content[{j}]: only text parts are supported")
            parts.append(part["text"])
        content = "".join(parts)
    if not isinstance(content, str):
        raise FormatError(f"messages[{i}].content must be a string or a list of text parts")
    return content


def study_messages(messages: list[dict], raw_of: Callable[[tuple[str, ...]], str | None]) -> tuple[str, list[dict]]:
    """(the client's system text, the rest as the study's messages). ``raw_of``: the model's own text
    for an assistant turn the server generated, by its call ids (None: unknown; the calls are then
    written in the training data's JSON form)."""
    system, rest, names = [], [], {}
    for i, m in enumerate(messages):
        role = m.get("role")
        if role in ("system", "developer"):
            if rest:
                raise FormatError(f"messages[{i}]: a system message must come before the conversation")
            system.append(_text(m, i))
        elif role == "assistant" and m.get("tool_calls"):
            calls = m["tool_calls"]
            if not isinstance(calls, list):
                raise FormatError(f"messages[{i}].tool_calls must be a list")
            ids, checked = [], []
            for j, c in enumerate(calls):
                fn = c.get("function") if isinstance(c, dict) else None
                if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not isinstance(c.get("id"), str):
                    raise FormatError(f"messages[{i}].tool_calls[{j}] must have an id and function.name")
                arguments = fn.get("arguments") or "{}"
                try:
                    args = json.loads(arguments) if isinstance(arguments, str) else None
                except ValueError:
                    args = None
                if not isinstance(args, dict):
                    raise FormatError(f"messages[{i}].tool_calls[{j}].function.arguments must be a JSON object "
                                      "written as a string")
                ids.append(c["id"])
                names[c["id"]] = fn["name"]
                checked.append({"id": c["id"], "type": "function",
                                "function": {"name": fn["name"], "arguments": arguments}})
            raw = raw_of(tuple(ids))
            rest.append({"role": "assistant", "content": raw} if raw is not None else
                        {"role": "assistant", "content": "", "tool_calls": checked})
        elif role == "tool":
            cid = m.get("tool_call_id")
            if not isinstance(cid, str) or cid not in names:
                raise FormatError(f"messages[{i}]: tool_call_id {cid!r} answers no earlier tool call")
            rest.append({"role": "tool", "content": tool_result_line(names[cid], _text(m, i))})
        elif role in ("user", "assistant"):
            rest.append({"role": role, "content": _text(m, i)})
        else:
            raise FormatError(f"messages[{i}].role must be system, user, assistant or tool; got {role!r}")
    return "\n".join(system), from_tool_format(rest)


def request_messages(tools: list[dict] | None, messages: list[dict],
                     raw_of: Callable[[tuple[str, ...]], str | None] = lambda ids: None,
                     fewshot: bool = False) -> list[dict]:
    """An OpenAI request's ``tools`` and ``messages`` as the study's messages: the composed system
    prompt (static head, A+'s examples with ``fewshot``, the client's system text as the context line,
    the tools' catalogue listing; ``tools`` None: no listing), then the conversation in the study's
    form. The server and the external benchmarks (ccl.external) both build prompts here. Raises
    ToolsError or FormatError naming the field."""
    listing = render_tools(tools) if tools is not None else ""
    context, rest = study_messages(messages, raw_of)
    return [{"role": "system", "content": compose_system(context, listing, fewshot)}, *rest]


def episode_messages(messages: list[dict], ids: dict[int, list[str]]) -> list[dict]:
    """An episode's messages after its system prompt as an OpenAI client sends them: assistant turns
    with calls as ``tool_calls`` under the ids the server gave (``ids``: assistant turn index -> ids),
    each result as a ``tool`` message (the inverse of :func:`study_messages`)."""
    out: list[dict] = []
    pending: list[str] = []
    turn = -1
    for m in messages:
        if m["role"] == "assistant":
            turn += 1
            action, _, _ = parse_action(m["content"])
            if turn in ids and action is not None and action.calls is not None:
                pending = ids[turn]
                out.append({"role": "assistant", "content": None,
                            "tool_calls": [tool_call(cid, c) for cid, c in zip(pending, action.calls)]})
                continue
            pending = []
            out.append({"role": "assistant", "content": m["content"]})
        elif m["role"] == "user" and pending:
            lines = observation_lines(m["content"]) or []
            if len(lines) != len(pending):
                raise FormatError("an observation does not answer its turn's calls one to one")
            out.extend({"role": "tool", "tool_call_id": cid, "content": line} for cid, line in zip(pending, lines))
            pending = []
        elif m["role"] != "system":
            out.append({"role": m["role"], "content": m["content"]})
    return out


# ---------------------------------------------------------------- the action out
@dataclass(frozen=True)
class Choice:
    message: dict  # the OpenAI assistant message
    finish_reason: str  # tool_calls | stop | length
    action: Action | None  # None: the text did not parse as an action
    error: str | None  # the parser's message when it did not


def action_choice(text: str, cut: bool, limits: Limits = Limits(), calls_allowed: bool = True) -> Choice:
    """The model's text as an OpenAI choice: calls as ``tool_calls`` (fresh ids, arguments as JSON text),
    a final answer as content, unparseable text as content too (with the parser's error). ``cut``: the
    generation stopped at a limit (finish_reason ``length``). Without ``calls_allowed`` (tool_choice
    none) calls are returned as the model's text."""
    action, error, _ = parse_action(text, limits)
    if action is not None and action.calls is not None and not calls_allowed:
        return Choice({"role": "assistant", "content": text}, "length" if cut else "stop", action, None)
    if action is not None and action.calls is not None:
        calls = [tool_call(f"call_{uuid.uuid4().hex[:24]}", c) for c in action.calls]
        return Choice({"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls", action, None)
    content = action.final if action is not None else text
    return Choice({"role": "assistant", "content": content}, "length" if cut else "stop", action, error)
