"""Checks on what a client sends: host, headers and body, the fields of a completion or episode
request, messages, tools, the model and its adapter. Each problem is an ``ApiError`` naming the field.
"""
from __future__ import annotations

import json
from typing import Any

from ..policy.adapters import resolve_adapter
from ..policy.base import GenConfig
from ..world.catalogue import ToolsError
from .app import CHAIN, HOST, LOOPBACK_NAMES, MIN_TEMPERATURE, ROLES, UNSUPPORTED, ApiError, App, Provider
from .openai_format import FormatError, request_messages


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
        study = request_messages(body["tools"] if body.get("tool_choice") != "none" else None, messages,
                                 app.raw.get)
    except ToolsError as e:
        raise ApiError(400, str(e), param="tools") from None
    except FormatError as e:
        raise ApiError(400, str(e), param=e.param) from None
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
    if isinstance(getattr(backend, "context", None), int):  # a backend that holds no transformers model
        return backend.context
    model = getattr(backend, "model", None)
    for holder in (getattr(model, "config", None), getattr(model, "args", None)):
        value = getattr(holder, "max_position_embeddings", None)
        if isinstance(value, int):
            return value
    return None
