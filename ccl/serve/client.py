"""An episode driven through the OpenAI-compatible server, as a client with tools would drive it.

``ServerPolicy`` is a runtime policy: each turn it sends the episode so far to ``/v1/chat/completions``
with the task's catalogue as ``tools`` (earlier calls as ``tool_calls`` under the ids the server gave,
their results as ``tool`` messages) and steps the episode with the model's text. The runtime executes
the calls in the task's simulated world, so success is judged exactly as for the episode loop.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from ..episode.prompt import task_context
from ..episode.runtime import Episode
from ..policy.base import GenConfig
from .openai_format import episode_messages


@dataclass
class Turn:
    """One request as the client saw it."""
    task_id: str
    turn: int
    latency_s: float  # request sent to response read
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    tool_calls: list[dict]  # name and parsed arguments, as returned
    ccl: dict  # the server's record: provider, attempts (fallbacks), raw text, status


@dataclass
class ServerPolicy:
    client: Any  # an openai.OpenAI pointed at the server
    model: str
    gen: GenConfig = field(default_factory=GenConfig)
    stream: bool = False
    turns: list[Turn] = field(default_factory=list)
    _ids: dict[str, dict[int, list[str]]] = field(default_factory=dict)  # task -> assistant turn -> call ids

    def act(self, ep: Episode, memory: None = None) -> str:
        """The server's reply for the episode's next turn. The server keeps the model's cache; the call
        ids this policy gave each task's turns are kept here by task id (``_ids``), as before the
        memory protocol, since a served episode is never replayed."""
        ids = self._ids.setdefault(ep.task["id"], {})
        messages = [{"role": "system", "content": task_context(ep.task)}, *episode_messages(ep.messages[1:], ids)]
        t0 = time.perf_counter()
        reply = self._stream(messages, ep) if self.stream else self._complete(messages, ep)
        latency = time.perf_counter() - t0
        message, finish, usage, ccl = reply
        calls = message.get("tool_calls") or []
        if calls:
            ids[len(ep.turns)] = [c["id"] for c in calls]
        self.turns.append(Turn(ep.task["id"], len(ep.turns), latency, usage.get("prompt_tokens", 0),
                               usage.get("completion_tokens", 0), finish,
                               [{"tool": c["function"]["name"], "args": json.loads(c["function"]["arguments"])}
                                for c in calls], ccl))
        return ccl["raw"]

    def _request(self, messages: list[dict], ep: Episode) -> dict:
        return dict(model=self.model, messages=messages, tools=ep.catalogue.openai_tools(),
                    max_tokens=self.gen.max_new_tokens, temperature=self.gen.temperature, top_p=self.gen.top_p,
                    seed=self.gen.seed)

    def _complete(self, messages: list[dict], ep: Episode) -> tuple[dict, str, dict, dict]:
        r = self.client.chat.completions.create(**self._request(messages, ep))
        choice = r.choices[0]
        message = choice.message.model_dump(exclude_none=True)
        return message, choice.finish_reason, r.usage.model_dump(), r.model_extra["ccl"]

    def _stream(self, messages: list[dict], ep: Episode) -> tuple[dict, str, dict, dict]:
        """Accumulate the deltas as a streaming client does."""
        content, calls, finish, usage, ccl = [], {}, None, {}, None
        for chunk in self.client.chat.completions.create(**self._request(messages, ep), stream=True,
                                                         stream_options={"include_usage": True}):
            if chunk.usage is not None:
                usage = chunk.usage.model_dump()
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    content.append(delta.content)
                for tc in delta.tool_calls or []:
                    call = calls.setdefault(tc.index, {"id": None, "type": "function",
                                                       "function": {"name": "", "arguments": ""}})
                    call["id"] = tc.id or call["id"]
                    if tc.function is not None:
                        call["function"]["name"] += tc.function.name or ""
                        call["function"]["arguments"] += tc.function.arguments or ""
                if choice.finish_reason is not None:
                    finish = choice.finish_reason
                    ccl = (chunk.model_extra or {}).get("ccl")
        message = {"role": "assistant", "content": "".join(content) or None}
        if calls:
            message["tool_calls"] = [calls[i] for i in sorted(calls)]
        return message, finish or "stop", usage, ccl or {}
