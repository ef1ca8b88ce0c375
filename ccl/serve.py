"""The local server (scripts/serve.py): the report site, an OpenAI-compatible chat endpoint with tool
calls and a fallback chain, and live episodes for the trace explorer, on 127.0.0.1 only.

Endpoints (every error is ``{"error": {"message", "type", "param", "code"}}``):

- ``GET /`` and any other path outside /v1 and /api: a file of the static site (``web/public``);
- ``GET /v1/models``, ``GET /v1/models/<id>``: the served models, and ``chain`` when one is configured;
- ``POST /v1/chat/completions``: ``model`` (a served model, or ``chain``: each provider in turn until
  one answers well), ``messages``, ``tools`` and ``tool_choice`` (``auto`` or ``none``), ``max_tokens``
  or ``max_completion_tokens``, ``temperature`` (default 0: greedy), ``top_p``, ``seed``, ``stream``
  (server-sent events ending in ``[DONE]``; ``stream_options.include_usage``). With ``tools`` the
  prompt is the study's (``ccl.prompt.compose_system``: the client's system text is the context
  line, the tools are rendered as the runtime renders a catalogue) and the model's action comes back
  as ``tool_calls`` (finish_reason ``tool_calls``) or as the final answer's text (``stop``); ``tool``
  messages are fed back as one observation. The response's ``ccl`` member says which provider
  answered, why earlier ones were passed over, the model's raw text and the answer's status.
- ``GET /api/health``; ``GET /api/tasks?split=eval_id``; ``GET /api/requests?last=N``: the latest
  requests' records (provider, fallbacks, latency, tokens);
- ``POST /api/episode`` ``{"task_id", "split", "model", "adapter"?, "max_tokens"?, "temperature"?,
  "top_p"?, "seed"?, "fewshot"?}``: one episode through the runtime, streamed as newline-delimited
  JSON events ``start``, ``message`` (one per message appended), then ``end`` (verdict and record),
  or ``error`` if it broke off.

Built on aiohttp (already pinned, as DVC's HTTP client): one event loop serves every connection, so
idle or slow clients hold no thread and cannot lock others out; the listen queue is 128; a client
that disconnects cancels its request, and its generation stops at the next decoding step. Generation
runs one request at a time on one worker thread (the backends are not thread-safe), bounded in
tokens (``max_tokens``, at most ``MAX_TOKENS_CAP``) and in time (``--request-timeout``). A stream is
sent after the action is complete: whether the model calls a tool or answers is known only when its
JSON closes, so deltas arrive together, in the OpenAI chunk shape.

POST bodies must be JSON (``Content-Type: application/json``, which a cross-site form cannot send
without a CORS preflight this server never grants), and the Host header must name the loopback
interface (no DNS rebinding). No request runs a consequential tool: chat completions only return the
model's calls (the client executes them), and episodes run in a task's simulated world.
"""
from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import math
import mimetypes
import re
import threading
import time
import traceback
import uuid
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import parse_qs, unquote

from aiohttp import web

from .catalogue import ToolsError, render_tools
from .jsonio import dumps, read_jsonl
from .models.registry import ModelError, ModelStore
from .openai_format import Choice, FormatError, action_choice, study_messages
from .oracle import OraclePolicy
from .policy.adapters import resolve_adapter
from .policy.base import GenConfig, GenOut, ModelPolicy
from .prompt import compose_system, system_prompt
from .prompt_head import head_end
from .runtime import Episode, Limits, scripted_approver
from .validate import validate

HOST = "127.0.0.1"  # the only interface the server binds
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
ROLES = ("system", "user", "assistant", "tool")
CHAIN = "chain"  # the model name that asks for the fallback chain
MAX_TOKENS_CAP = 4096  # per completion or assistant turn
MIN_TEMPERATURE = 1e-3  # below it, decoding is greedy (its limit); 1e-300 would overflow the softmax
BACKLOG = 128  # pending connections the kernel queues (the standard library's server kept 5)
SITE_HINT = "the site is built by `dvc repro export_web` (or `python -m scripts.export_web`)"
# request options this server does not implement, with the value that means "not used"
UNSUPPORTED = {"n": 1, "stop": None, "functions": None, "function_call": None, "logprobs": False,
               "top_logprobs": None, "logit_bias": None, "presence_penalty": 0, "frequency_penalty": 0,
               "parallel_tool_calls": True}
ERROR_TYPES = {400: "invalid_request_error", 403: "permission_error", 404: "not_found_error",
               405: "method_not_allowed", 411: "length_required", 413: "request_too_large",
               415: "unsupported_media_type", 503: "service_unavailable"}


class ApiError(Exception):
    """A request the server answers with an error status and an OpenAI-style JSON body."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code
        self.headers = headers or {}

    def body(self) -> dict:
        kind = ERROR_TYPES.get(self.status, "server_error" if self.status >= 500 else "invalid_request_error")
        return {"error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}


@dataclass
class Provider:
    """One served model: a backend (render + generate), with the adapter it was loaded with."""
    name: str
    backend: Any
    backend_name: str
    adapter: str | None = None


class RawTexts:
    """The model's own text of each assistant turn whose calls the server returned, by the calls' ids:
    a client echoes the calls back, and the next prompt then holds what the model wrote (as in the
    episode loop), not a re-serialisation. Bounded; an evicted turn falls back to the training form."""

    def __init__(self, size: int = 4096):
        self.size, self._texts = size, OrderedDict()

    def put(self, ids: tuple[str, ...], text: str) -> None:
        self._texts[ids] = text
        while len(self._texts) > self.size:
            self._texts.popitem(last=False)

    def get(self, ids: tuple[str, ...]) -> str | None:
        return self._texts.get(ids)


@dataclass
class App:
    """What the server serves: the providers (none: --no-model), the chain over them, the site and the
    task splits, the request bounds."""

    providers: list[Provider]
    chain: tuple[str, ...] = ()  # provider names tried in order for model "chain"; () = no chain
    site: Path = field(kw_only=True)  # the built site (web/public), chosen by the script
    data: Path = field(kw_only=True)  # the task-split folder (data/v1/tasks)
    max_body: int = 1 << 20
    gen: GenConfig = field(default_factory=GenConfig)  # defaults for requests that leave options out
    max_tokens_cap: int = MAX_TOKENS_CAP
    request_timeout_s: float = 120.0  # generation time of one request (one provider, or one episode turn)
    keepalive_s: float = 15.0  # an idle keep-alive connection is closed after this long
    quiet: bool = False
    started: int = field(default_factory=lambda: int(time.time()))
    raw: RawTexts = field(default_factory=RawTexts)
    log: deque = field(default_factory=lambda: deque(maxlen=10_000))  # request records, newest last
    active: set = field(default_factory=set)  # the Stopper of the generation running now (to stop it at exit)

    def __post_init__(self) -> None:
        self.by_name = {p.name: p for p in self.providers}
        unknown = [n for n in self.chain if n not in self.by_name]
        if unknown:
            raise ValueError(f"chain names {unknown}, which are not served ({', '.join(self.by_name) or 'none'})")
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ccl-generate")
        self.gen_lock: asyncio.Lock | None = None  # made on the server's event loop

    @property
    def model(self) -> str | None:
        """The default model (the first provider), for episodes that name none."""
        return self.providers[0].name if self.providers else None

    def names(self) -> list[str]:
        return [p.name for p in self.providers] + ([CHAIN] if self.chain else [])


def load_app(store: ModelStore, models: list[tuple[str, str, str | Path | None]], chain: bool = False,
             model_path: str | Path | None = None, **kwargs: Any) -> App:
    """Load each (model, backend, adapter) through the project's loader; ``chain``: serve them, in this
    order, as the fallback chain too. A model served twice (with and without an adapter) is named
    ``model+adapter-folder``."""
    from .policy.load import load_backend  # torch is imported only when a model is served

    providers = []
    for model, backend, adapter in models:
        name = model if adapter is None else f"{model}+{Path(adapter).name}"
        providers.append(Provider(name, load_backend(store, model, backend, adapter, model_path), backend,
                                  None if adapter is None else str(adapter)))
    names = [p.name for p in providers]
    if len(set(names)) < len(names):
        raise ModelError(f"the same model is served twice ({', '.join(names)}); serve another model or adapter as "
                         "the fallback")
    return App(providers, tuple(names) if chain else (), **kwargs)


# ---------------------------------------------------------------- request checks
def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_host(host: str | None) -> None:
    """Refuse requests addressed to another name (a DNS-rebinding page); no Host is HTTP/1.0."""
    if host is None:
        return
    name = host.strip().lower()
    name = name[: name.index("]") + 1] if name.startswith("[") and "]" in name else name.rsplit(":", 1)[0]
    if name not in LOOPBACK_NAMES:
        raise ApiError(403, f"Host {host!r} is not this server; use http://{HOST}:<port>/")


def check_body_headers(headers: Any, max_body: int) -> None:
    """Refuse a body before reading it: not JSON, or announced too large."""
    ctype = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise ApiError(415, f"Content-Type must be application/json, not {ctype or 'missing'!r}")
    raw = headers.get("Content-Length")
    if raw is None and "chunked" not in (headers.get("Transfer-Encoding") or "").lower():
        raise ApiError(411, "Content-Length header required")
    if raw is not None and raw.strip().isdigit() and int(raw) > max_body:
        raise ApiError(413, f"request body of {int(raw)} bytes is over the {max_body}-byte limit (--max-body)")


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(data: bytes) -> dict:
    """A JSON object, or a 400 naming what is wrong with the body."""
    try:
        obj = json.loads(data.decode("utf-8"), parse_constant=_no_constants)
    except UnicodeDecodeError:
        raise ApiError(400, "request body is not UTF-8") from None
    except json.JSONDecodeError as e:
        raise ApiError(400, f"malformed JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise ApiError(400, "malformed JSON: nested too deeply") from None
    except ValueError as e:
        raise ApiError(400, f"malformed JSON: {e}") from None
    if not isinstance(obj, dict):
        raise ApiError(400, f"the body must be a JSON object, not {type(obj).__name__}")
    return obj


def int_field(body: dict, name: str, lo: int, hi: int, default: int) -> int:
    value = body.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ApiError(400, f"{name} must be an integer from {lo} to {hi}; got {_short(value)}", param=name)
    return value


def number_field(body: dict, name: str, lo: float, hi: float, default: float, lo_open: bool = False) -> float:
    value = body.get(name)
    if value is None:
        return default
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value <= hi
    if not ok or value < lo or (lo_open and value == lo):
        bound = f"over {lo}" if lo_open else f"from {lo}"
        raise ApiError(400, f"{name} must be a number {bound} up to {hi}; got {_short(value)}", param=name)
    return float(value)


def str_field(body: dict, name: str, default: str | None = None) -> str:
    value = body.get(name)
    value = default if value is None else value
    if not isinstance(value, str) or not value:
        raise ApiError(400, f"{name} must be a non-empty string; got {_short(value)}", param=name)
    return value


def gen_config(body: dict, default: GenConfig, cap: int) -> GenConfig:
    """Decoding settings from OpenAI-style fields; absent ones keep the server's defaults."""
    key = "max_completion_tokens" if body.get("max_completion_tokens") is not None else "max_tokens"
    temperature = number_field(body, "temperature", 0, 2, default.temperature)
    return GenConfig(max_new_tokens=int_field(body, key, 1, cap, min(default.max_new_tokens, cap)),
                     temperature=0.0 if temperature < MIN_TEMPERATURE else temperature,
                     top_p=number_field(body, "top_p", 0, 1, default.top_p, lo_open=True),
                     seed=int_field(body, "seed", 0, 2**63 - 1, default.seed))


def check_unsupported(body: dict) -> None:
    for name, unused in UNSUPPORTED.items():
        value = body.get(name)
        if value is None or value == unused or value == [] or value == {}:
            continue
        if name == "parallel_tool_calls":
            raise ApiError(400, "parallel_tool_calls: false is not supported; the model may issue several "
                                "calls in one turn (the study's action format)", param=name)
        raise ApiError(400, f"{name} is not supported by this server (got {_short(value)})", param=name)
    fmt = body.get("response_format")
    if fmt is not None and fmt != {"type": "text"}:
        raise ApiError(400, 'response_format: only {"type": "text"} is supported', param="response_format")
    choice = body.get("tool_choice")
    if choice not in ("auto", "none", None):
        raise ApiError(400, f"tool_choice {_short(choice)} is not supported: the model chooses (auto) or is "
                            "offered no tools (none)", param="tool_choice")
    if not isinstance(body.get("stream", False), bool):
        raise ApiError(400, f"stream must be true or false; got {_short(body.get('stream'))}", param="stream")
    options = body.get("stream_options")
    if options is not None and (not isinstance(options, dict) or not body.get("stream")):
        raise ApiError(400, "stream_options needs stream: true and an object", param="stream_options")


def _check_text(text: str, where: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(400, f"{where} holds a lone UTF-16 surrogate (not text)", param="messages") from None


def check_messages(value: Any) -> list[dict]:
    """Chat messages as ``{role, content}`` with string content (a plain completion, no tools)."""
    if not isinstance(value, list) or not value:
        raise ApiError(400, "messages must be a non-empty list of {role, content} objects", param="messages")
    out = []
    for i, m in enumerate(value):
        if not isinstance(m, dict):
            raise ApiError(400, f"messages[{i}] must be an object with role and content", param="messages")
        if m.get("role") not in ROLES:
            raise ApiError(400, f"messages[{i}].role must be one of {', '.join(ROLES)}; got {_short(m.get('role'))}",
                           param="messages")
        if not isinstance(m.get("content"), str):
            raise ApiError(400, f"messages[{i}].content must be a string; got {_short(m.get('content'))}",
                           param="messages")
        _check_text(m["content"], f"messages[{i}].content")
        out.append({"role": m["role"], "content": m["content"]})
    return out


def tool_messages(app: App, body: dict) -> list[dict]:
    """The study's messages for a request with ``tools``: the composed system prompt, then the
    conversation with tool calls and results in the study's form."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        raise ApiError(400, "messages must be a non-empty list of message objects", param="messages")
    try:
        tools = render_tools(body["tools"]) if body.get("tool_choice") != "none" else ""
        context, rest = study_messages(messages, app.raw.get)
    except ToolsError as e:
        raise ApiError(400, str(e), param="tools") from None
    except FormatError as e:
        raise ApiError(400, str(e), param=e.param) from None
    study = [{"role": "system", "content": compose_system(context, tools)}, *rest]
    for i, m in enumerate(study):
        _check_text(m["content"], f"message {i}")
    return study


def check_model(app: App, name: Any) -> list[Provider]:
    """The providers a request's model names (several for the chain), or 404 naming those served."""
    if not isinstance(name, str) or not name:
        raise ApiError(400, f"model must be a non-empty string; got {_short(name)}", param="model")
    if not app.providers:
        raise ApiError(404, f"no model is loaded (the server runs with --no-model), so {name!r} cannot be "
                            "served; restart without --no-model", param="model", code="model_not_found")
    if name == CHAIN and app.chain:
        return [app.by_name[n] for n in app.chain]
    if name not in app.by_name:
        raise ApiError(404, f"model {name!r} is not served; served models: {', '.join(app.names())}",
                       param="model", code="model_not_found")
    return [app.by_name[name]]


def check_adapter(provider: Provider, adapter: Any) -> None:
    """A request may name the adapter only to confirm the one loaded at start-up."""
    if adapter is None:
        return
    if not isinstance(adapter, str):
        raise ApiError(400, f"adapter must be a string or null; got {_short(adapter)}", param="adapter")
    if provider.adapter is None or resolve_adapter(adapter).resolve() != resolve_adapter(provider.adapter).resolve():
        raise ApiError(404, f"adapter {adapter!r} is not loaded; {provider.name} runs with adapter "
                            f"{provider.adapter or 'none'} (restart with --adapter to serve another)", param="adapter")


# ---------------------------------------------------------------- generation
def context_length(backend: Any) -> int | None:
    """The model's context in tokens (transformers: ``config``; mlx-lm: ``args``), or None if unknown."""
    model = getattr(backend, "model", None)
    for holder in (getattr(model, "config", None), getattr(model, "args", None)):
        value = getattr(holder, "max_position_embeddings", None)
        if isinstance(value, int):
            return value
    return None


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


# ---------------------------------------------------------------- tasks and episodes
_SPLIT_RE = re.compile(r"^[A-Za-z0-9_]+$")


def splits(data: Path) -> list[str]:
    return sorted(p.stem for p in data.glob("*.jsonl")) if data.is_dir() else []


@lru_cache(maxsize=16)
def _read_split(path: str, mtime_ns: int) -> dict[str, dict]:
    return {t["id"]: t for t in read_jsonl(path)}


def load_split(data: Path, split: Any) -> dict[str, dict]:
    """A split's tasks by id (re-read when the file changes), or 404 naming the split."""
    path = data / f"{split}.jsonl" if isinstance(split, str) and _SPLIT_RE.match(split) else None
    if path is None or not path.is_file():
        known = ", ".join(splits(data)) or "none; run the build_datasets stage"
        raise ApiError(404, f"unknown split {_short(split)}; splits in {data}: {known}", param="split")
    return _read_split(str(path), path.stat().st_mtime_ns)


def find_task(data: Path, split: str, task_id: str) -> dict:
    tasks = load_split(data, split)
    if task_id not in tasks:
        raise ApiError(404, f"unknown task {task_id!r} in split {split} ({len(tasks)} tasks)", param="task_id")
    return copy.deepcopy(tasks[task_id])


def task_summary(task: dict, split: str) -> dict:
    return {"id": task["id"], "request": task["request"], "family": task["family"],
            "template": task["template"], "split": split, "role": task["role"]}


def task_list(app: App, query: dict[str, list[str]]) -> dict:
    split = query.get("split", ["eval_id"])[-1]
    tasks = load_split(app.data, split)
    return {"split": split, "splits": splits(app.data),
            "tasks": [{k: v for k, v in task_summary(t, split).items() if k != "split"} for t in tasks.values()]}


@dataclass
class EpisodeRequest:
    task: dict
    split: str
    policy: Any  # the oracle, or a ModelPolicy on a provider's backend
    fewshot: bool = False


def episode_request(app: App, body: dict) -> EpisodeRequest:
    """Check an /api/episode body: the task, and the oracle or a served model with its decoding."""
    task_id = str_field(body, "task_id")
    split = str_field(body, "split", "eval_id")
    fewshot = body.get("fewshot", False)
    if not isinstance(fewshot, bool):
        raise ApiError(400, f"fewshot must be true or false; got {_short(fewshot)}", param="fewshot")
    model = body.get("model") or app.model or "oracle"
    if model == "oracle":
        if body.get("adapter") is not None:
            raise ApiError(400, "the oracle takes no adapter", param="adapter")
        policy: Any = OraclePolicy()
    else:
        providers = check_model(app, model)
        if len(providers) > 1:
            raise ApiError(400, "episodes run one model; the chain serves chat completions", param="model")
        check_adapter(providers[0], body.get("adapter"))
        policy = ModelPolicy(providers[0].backend, gen_config(body, app.gen, app.max_tokens_cap), name=model)
    return EpisodeRequest(find_task(app.data, split, task_id), split, policy, fewshot)


async def episode_events(app: App, req: EpisodeRequest):
    """Run one episode through the runtime, yielding start, one message event per message appended to
    the transcript, and end (verdict, record, token usage). A model's turns run on the generation
    thread, each bounded by the request timeout."""
    task, policy = req.task, req.policy
    system = system_prompt(task, fewshot=req.fewshot)
    ep = Episode(task, scripted_approver, Limits(), system=system)
    yield {"event": "start", "task": task_summary(task, req.split), "system": system}
    try:
        while not ep.done:
            seen = len(ep.messages)
            if isinstance(policy, ModelPolicy):
                policy.stop = stopper = Stopper(app.request_timeout_s)
                text = await in_worker(app, lambda: policy.act(ep), stopper)
            else:
                text = policy.act(ep)
            ep.step(text)
            for m in ep.messages[seen:]:
                yield {"event": "message", "turn": len(ep.turns) - 1, "message": m}
    finally:
        if hasattr(policy, "release"):
            policy.release(ep)  # drop the KV cache, also when the client went away
    record = ep.record()
    yield {"event": "end", "verdict": validate(task, record), "record": record,
           "usage": {"prompt_tokens": ep.prompt_tokens, "completion_tokens": ep.new_tokens}}


def finite(obj: Any) -> Any:
    """``obj`` with non-finite numbers as strings: model text can hold NaN or Infinity, which JSON (and
    the browser's JSON.parse) does not."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def json_line(obj: Any) -> bytes:
    return (dumps(finite(obj)) + "\n").encode()


# ---------------------------------------------------------------- static site
def static_path(site: Path, url_path: str) -> Path:
    """The site file a URL path names; ``..`` and links out of the site are refused."""
    rel = unquote(url_path)
    if "\0" in rel:
        raise ApiError(400, "NUL in path")
    parts = [p for p in rel.replace("\\", "/").split("/") if p]
    if ".." in parts:
        raise ApiError(403, f"path {url_path!r} leaves the site; refused")
    if not site.is_dir():
        raise ApiError(404, f"no site at {site}: {SITE_HINT}")
    root = site.resolve()
    try:
        path = root.joinpath(*parts).resolve()
        if not path.is_relative_to(root):
            raise ApiError(403, f"path {url_path!r} leaves the site; refused")
        if path.is_dir():
            path = path / "index.html"
        found = path.is_file()
    except OSError:  # a name too long for the file system, or one it cannot hold
        found = False
    if not found:
        raise ApiError(404, f"no file {_short(rel)} in the site" + ("" if parts else f" ({SITE_HINT})"))
    return path


def content_type(path: Path) -> str:
    ctype = {".js": "text/javascript", ".mjs": "text/javascript", ".json": "application/json",
             ".ndjson": "application/x-ndjson", ".svg": "image/svg+xml", ".wasm": "application/wasm",
             ".webmanifest": "application/manifest+json"}.get(path.suffix.lower())
    ctype = ctype or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    textual = ctype.startswith("text/") or ctype in ("application/json", "application/x-ndjson", "image/svg+xml",
                                                     "application/manifest+json")
    return f"{ctype}; charset=utf-8" if textual else ctype


# ---------------------------------------------------------------- HTTP
API_ROUTES = {"/v1/models": "GET", "/v1/chat/completions": "POST", "/api/health": "GET",
              "/api/tasks": "GET", "/api/episode": "POST", "/api/requests": "GET"}


def health(app: App) -> dict:
    return {"status": "ok", "model": app.model, "models": app.names(), "chain": list(app.chain),
            "backend": app.providers[0].backend_name if app.providers else None,
            "adapter": app.providers[0].adapter if app.providers else None,
            "episode_models": [p.name for p in app.providers] + ["oracle"],
            "site": app.site.is_dir(), "splits": splits(app.data)}


def json_response(status: int, obj: Any, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=status, body=json.dumps(obj, ensure_ascii=False).encode(),
                        headers={"Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store",
                                 **(headers or {})})


def allow(request: web.BaseRequest, methods: tuple[str, ...]) -> None:
    if request.method not in methods:
        raise ApiError(405, f"{request.method} is not allowed on {request.path}; use {' or '.join(methods)}",
                       headers={"Allow": ", ".join(methods)})


async def json_body(app: App, request: web.BaseRequest) -> dict:
    """The whole body (however many reads it arrives in), refused once it passes the limit."""
    check_body_headers(request.headers, app.max_body)
    chunks, size = [], 0
    while chunk := await request.content.readany():
        size += len(chunk)
        if size > app.max_body:
            raise ApiError(413, f"request body is over the {app.max_body}-byte limit (--max-body)")
        chunks.append(chunk)
    if request.content_length is not None and size < request.content_length:
        raise ApiError(400, f"body ended after {size} of {request.content_length} bytes")
    return parse_json(b"".join(chunks))


def make_handler(app: App) -> Callable[[web.BaseRequest], Any]:
    """The one request handler: every path, every method; errors as OpenAI-style JSON."""

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        try:
            check_host(request.headers.get("Host"))
            path = request.path
            if path.startswith(("/v1/", "/api/")) or path in ("/v1", "/api"):
                return await api(request, path)
            allow(request, ("GET", "HEAD"))
            return static(request, path)
        except ApiError as e:
            return json_response(e.status, e.body(), {**e.headers, "Connection": "close"})
        except web.HTTPException as e:  # aiohttp's own refusals (a body over the limit)
            return json_response(e.status, ApiError(e.status, e.reason).body(), {"Connection": "close"})
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception as e:  # a bug: report it, keep serving
            if not app.quiet:
                traceback.print_exc()
            return json_response(500, ApiError(500, f"internal error: {type(e).__name__}: {e}").body(),
                                 {"Connection": "close"})

    async def api(request: web.BaseRequest, path: str) -> web.StreamResponse:
        if path.startswith("/v1/models/"):
            allow(request, ("GET",))
            name = unquote(path[len("/v1/models/"):])
            check_model(app, name)
            return json_response(200, model_card(app, name))
        if path not in API_ROUTES:
            raise ApiError(404, f"unknown path {path}; endpoints: GET /v1/models, POST /v1/chat/completions, "
                                "GET /api/health, GET /api/tasks?split=..., GET /api/requests, POST /api/episode")
        allow(request, (API_ROUTES[path],))
        query = parse_qs(request.query_string)
        if path == "/v1/models":
            return json_response(200, {"object": "list", "data": [model_card(app, n) for n in app.names()]})
        if path == "/api/health":
            return json_response(200, health(app))
        if path == "/api/tasks":
            return json_response(200, task_list(app, query))
        if path == "/api/requests":
            last = query.get("last", ["100"])[-1]
            if not re.fullmatch(r"[0-9]{1,6}", last):
                raise ApiError(400, f"last must be a whole number of requests; got {_short(last)}", param="last")
            n = int(last)
            return json_response(200, {"requests": list(app.log)[-n:] if n else []})
        body = await json_body(app, request)
        if path == "/v1/chat/completions":
            return await completion(request, body)
        return await stream_lines(request, episode_events(app, episode_request(app, body)))

    async def completion(request: web.BaseRequest, body: dict) -> web.StreamResponse:
        t0 = time.perf_counter()
        try:
            response, record = await chat_completion(app, body)
        except asyncio.CancelledError:  # the client left; its generation was stopped
            app.log.append({"model": body.get("model"), "provider": None, "outcome": "cancelled", "cancelled": True,
                            "fallbacks": 0, "attempts": [], "latency_s": round(time.perf_counter() - t0, 4)})
            raise
        except ApiError as e:
            app.log.append({"model": body.get("model"), "provider": None, "outcome": f"error {e.status}",
                            "error": e.message, "fallbacks": 0, "attempts": [],
                            "latency_s": round(time.perf_counter() - t0, 4)})
            raise
        app.log.append(record)
        if not body.get("stream"):
            return json_response(200, response)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream; charset=utf-8",
                                           "Cache-Control": "no-store"})
        await resp.prepare(request)
        for chunk in stream_chunks(response, include_usage):
            await resp.write(b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def stream_lines(request: web.BaseRequest, events) -> web.StreamResponse:
        """Newline-delimited JSON, one event a line."""
        resp = web.StreamResponse(headers={"Content-Type": "application/x-ndjson; charset=utf-8",
                                           "Cache-Control": "no-store"})
        try:
            async for event in events:
                if not resp.prepared:
                    await resp.prepare(request)
                await resp.write(json_line(event))
        except ApiError:
            raise
        except (asyncio.CancelledError, ConnectionResetError):
            raise
        except Exception as e:
            if not app.quiet:
                traceback.print_exc()
            if not resp.prepared:
                await resp.prepare(request)
            error = {"message": f"episode broke off: {type(e).__name__}: {e}", "type": "server_error"}
            await resp.write(json_line({"event": "error", "error": error}))
        finally:
            await events.aclose()
        await resp.write_eof()
        return resp

    def static(request: web.BaseRequest, url_path: str) -> web.StreamResponse:
        path = static_path(app.site, url_path)
        return web.FileResponse(path, headers={"Content-Type": content_type(path), "Cache-Control": "no-cache",
                                               "X-Content-Type-Options": "nosniff"})

    return handle


class Server:
    """The server on 127.0.0.1:``port`` (0: a free port), its event loop on one thread.
    ``listen()`` binds (an OSError if the port is taken) and sets ``server_address``."""

    def __init__(self, app: App, port: int):
        self.app, self.port = app, port  # stop with shutdown(), then server_close()
        self.loop = asyncio.new_event_loop()
        self.server_address: tuple[str, int] | None = None
        self.socket = None
        self._runner: web.ServerRunner | None = None

    async def _start(self) -> None:
        low = web.Server(make_handler(self.app), handler_cancellation=True, access_log=None,
                         keepalive_timeout=self.app.keepalive_s, max_line_size=8190, max_field_size=8190)
        self._runner = web.ServerRunner(low, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, HOST, self.port, backlog=BACKLOG)
        await site.start()
        self.socket = site._server.sockets[0]  # the listening socket (its address is the bound one)
        self.server_address = self.socket.getsockname()[:2]

    def listen(self) -> "Server":
        self.loop.run_until_complete(self._start())
        return self

    def serve_forever(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def shutdown(self) -> None:
        """Stop serving, from any thread or after ``serve_forever`` returned (Ctrl-C): a running
        generation is told to stop, the connections close, and the loop stops."""
        for stopper in list(self.app.active):
            stopper.cancelled.set()
        if self.loop.is_closed():
            return
        if self.loop.is_running():
            asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(timeout=30)
            self.loop.call_soon_threadsafe(self.loop.stop)
        else:
            self.loop.run_until_complete(self._stop())

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def server_close(self) -> None:
        """Release the generation thread (after :meth:`shutdown`) and close a stopped loop."""
        self.app.executor.shutdown(wait=True, cancel_futures=True)
        if not self.loop.is_running() and not self.loop.is_closed():
            self.loop.close()


def make_server(app: App, port: int) -> Server:
    return Server(app, port).listen()


def serve_in_thread(app: App, port: int = 0) -> tuple[Server, threading.Thread]:
    """Start a server on a daemon thread (tests, notebooks); stop it with ``server.shutdown()``."""
    server = make_server(app, port)
    thread = threading.Thread(target=server.serve_forever, name="ccl-serve", daemon=True)
    thread.start()
    return server, thread
