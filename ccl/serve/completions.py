"""Chat completions: generation on the worker thread (bounded in tokens and time), one try per
provider down the fallback chain, the OpenAI-shaped response and its stream chunks.
"""
from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import traceback
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from ..episode.prompt_head import head_end
from ..policy.base import GenConfig, GenOut
from .app import CHAIN, ApiError, App, Provider
from .openai_format import Choice, action_choice
from .requests import check_messages, check_model, check_unsupported, context_length, gen_config, tool_messages


class Stopper:
    """The stop callback of one generation: the client left, or the time bound passed. The bound
    counts from :meth:`start` (when generation begins), not from the wait for the generation thread."""

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        self.deadline = float("inf")
        self.cancelled = threading.Event()
        self.reason: str | None = None

    def start(self) -> None:
        self.deadline = time.monotonic() + self.timeout_s

    def __call__(self) -> bool:
        if self.reason is None:
            if self.cancelled.is_set():
                self.reason = "cancelled"
            elif time.monotonic() > self.deadline:
                self.reason = "timeout"
        return self.reason is not None


async def in_worker(app: App, fn: Callable[[], Any], stopper: Stopper) -> Any:
    """Run ``fn`` on the generation thread, one at a time; its time bound starts when it does. If this
    request is cancelled (its client left), the generation is told to stop and the lock is kept until
    it has."""
    if app.gen_lock is None:
        app.gen_lock = asyncio.Lock()

    def timed() -> Any:
        stopper.start()
        return fn()

    async with app.gen_lock:
        app.active.add(stopper)
        future = asyncio.get_running_loop().run_in_executor(app.executor, timed)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            stopper.cancelled.set()
            with contextlib.suppress(Exception):
                await future
            raise
        finally:
            app.active.discard(stopper)


@dataclass
class Attempt:
    provider: str
    outcome: str  # ok | malformed | context_overflow | timeout | error | rejected (by the chat template)
    detail: str = ""
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class Try:
    """One provider's try: its record, and its text and choice when it generated."""
    attempt: Attempt
    out: GenOut | None = None
    choice: Choice | None = None


def _one_try(provider: Provider, messages: list[dict], gen: GenConfig, tools: bool, calls_allowed: bool,
             stopper: Stopper, timeout_s: float) -> Try:
    """Render, count, generate and parse on the generation thread (the backend's tokenizer is not shared
    with the event loop)."""
    from jinja2 import TemplateError

    t0 = time.perf_counter()
    try:
        prompt = provider.backend.render(messages)
    except TemplateError as e:  # the client's messages, not the model: no provider will take them
        return Try(Attempt(provider.name, "rejected", f"the chat template rejected the messages: {e}"))
    limit, tok = context_length(provider.backend), getattr(provider.backend, "tok", None)
    n = len(tok(prompt, add_special_tokens=False).input_ids) if tok is not None else 0
    if limit and n + gen.max_new_tokens > limit:
        return Try(Attempt(provider.name, "context_overflow", f"the prompt has {n} tokens; with max_tokens "
                           f"{gen.max_new_tokens} it is over the model's context of {limit}"))
    # the study's prompts share a head whose KV cache the backend keeps; a plain completion's text is
    # the client's, so no cache is kept for it
    cut = head_end(prompt) if tools else None
    state = {} if cut is None else {"prefix": prompt[:cut]}
    out = provider.backend.generate([state], [prompt], gen, [gen.seed], stop=stopper)[0]
    attempt = Attempt(provider.name, "ok", "", time.perf_counter() - t0, out.prompt_tokens, out.new_tokens)
    choice = action_choice(out.text, out.new_tokens >= gen.max_new_tokens or stopper.reason == "timeout",
                           calls_allowed=calls_allowed) if tools else None
    if stopper.reason == "timeout":
        attempt.outcome, attempt.detail = "timeout", f"stopped after {timeout_s:g} s"
    elif choice is not None and choice.action is None:
        attempt.outcome, attempt.detail = "malformed", choice.error or ""
    return Try(attempt, out, choice)


async def generate_one(app: App, provider: Provider, messages: list[dict], gen: GenConfig, tools: bool,
                       calls_allowed: bool = True) -> Try:
    stopper = Stopper(app.request_timeout_s)
    try:
        return await in_worker(app, lambda: _one_try(provider, messages, gen, tools, calls_allowed, stopper,
                                                      app.request_timeout_s), stopper)
    except asyncio.CancelledError:
        raise
    except Exception as e:  # a backend fault: recorded; the chain moves on
        if not app.quiet:
            traceback.print_exc()
        return Try(Attempt(provider.name, "error", f"{type(e).__name__}: {e}"))


async def chat_completion(app: App, body: dict) -> tuple[dict, dict]:
    """(the OpenAI response, the request's record). Each provider is tried in turn; a malformed action,
    a context overflow, a timeout or an error moves to the next. The answer is the last text any
    provider generated (the first good one, when one was good)."""
    providers = check_model(app, body.get("model"))
    check_unsupported(body)
    tools = body.get("tools") not in (None, [])
    messages = tool_messages(app, body) if tools else check_messages(body.get("messages"))
    gen = gen_config(body, app.gen, app.max_tokens_cap)
    tries: list[Try] = []
    for provider in providers:
        tries.append(await generate_one(app, provider, messages, gen, tools, body.get("tool_choice") != "none"))
        if tries[-1].attempt.outcome == "ok":
            break
    attempts = [t.attempt for t in tries]
    answered = next((t for t in reversed(tries) if t.out is not None), None)
    if answered is None:  # no provider generated: the request's fault (400) unless one failed (500)
        if all(a.outcome == "context_overflow" for a in attempts):
            raise ApiError(400, attempts[-1].detail, param="messages", code="context_length_exceeded")
        failed = any(a.outcome == "error" for a in attempts)
        raise ApiError(500 if failed else 400, "; ".join(f"{a.provider}: {a.outcome} ({a.detail})" for a in attempts),
                       param=None if failed else "messages")
    out = answered.out
    cut = out.new_tokens >= gen.max_new_tokens or answered.attempt.outcome == "timeout"
    if answered.choice is not None:
        message, finish = answered.choice.message, answered.choice.finish_reason
        if message.get("tool_calls"):
            app.raw.put(tuple(c["id"] for c in message["tool_calls"]), out.text)
        status = answered.choice.action.status if answered.choice.action is not None else None
    else:
        message, finish, status = {"role": "assistant", "content": out.text}, "length" if cut else "stop", None
    rid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    prompt_tokens = sum(a.prompt_tokens for a in attempts)
    completion_tokens = sum(a.completion_tokens for a in attempts)
    record = {"id": rid, "model": body["model"], "provider": answered.attempt.provider,
              "outcome": answered.attempt.outcome, "fallbacks": len(attempts) - 1,
              "attempts": [a.__dict__ for a in attempts], "latency_s": round(sum(a.latency_s for a in attempts), 4),
              "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "finish_reason": finish,
              "tools": tools}
    response = {"id": rid, "object": "chat.completion", "created": int(time.time()), "model": body["model"],
                "system_fingerprint": None,
                "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
                # usage counts what this request cost: the tokens every provider tried prefilled and generated
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens},
                "ccl": {"provider": answered.attempt.provider, "attempts": record["attempts"], "raw": out.text,
                        "status": status}}
    return response, record


def stream_chunks(response: dict, include_usage: bool, piece: int = 24) -> Iterator[dict]:
    """A complete response as OpenAI stream chunks: the role, the content or each call (id and name,
    then its arguments in pieces), the finish reason, and the usage when asked for."""
    base = {k: response[k] for k in ("id", "created", "model", "system_fingerprint")}
    base["object"] = "chat.completion.chunk"
    choice = response["choices"][0]
    message = choice["message"]

    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    yield chunk({"role": "assistant", "content": "" if message.get("content") is not None else None})
    content = message.get("content") or ""
    for i in range(0, len(content), piece):
        yield chunk({"content": content[i:i + piece]})
    for index, call in enumerate(message.get("tool_calls") or []):
        yield chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                     "function": {"name": call["function"]["name"], "arguments": ""}}]})
        args = call["function"]["arguments"]
        for i in range(0, len(args), piece):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": args[i:i + piece]}}]})
    last = chunk({}, choice["finish_reason"])
    last["ccl"] = response["ccl"]
    yield last
    if include_usage:
        yield {**base, "choices": [], "usage": response["usage"]}


def model_card(app: App, name: str) -> dict:
    if name == CHAIN:
        return {"id": CHAIN, "object": "model", "created": app.started, "owned_by": "ccl", "chain": list(app.chain)}
    p = app.by_name[name]
    return {"id": p.name, "object": "model", "created": app.started, "owned_by": "ccl",
            "backend": p.backend_name, "adapter": p.adapter}
