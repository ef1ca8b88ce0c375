"""The local server (scripts/serve.py): the report site, an OpenAI-compatible chat endpoint
for the loaded model, and live episodes for the trace explorer, on 127.0.0.1 only.

Endpoints (every error is ``{"error": {"message", "type", "param", "code"}}``):

- ``GET /`` and any other path outside /v1 and /api: a file of the static site (``web/public``);
- ``GET /v1/models``, ``GET /v1/models/<id>``: the served model;
- ``POST /v1/chat/completions``: one non-streamed completion (``max_tokens`` or
  ``max_completion_tokens``, ``temperature`` (default 0: greedy), ``top_p``, ``seed``); the
  content is the model's raw text; ``usage`` counts real tokens;
- ``GET /api/health``; ``GET /api/tasks?split=eval_id``: task ids, requests, families;
- ``POST /api/episode`` ``{"task_id", "split", "model", "adapter"?, "max_tokens"?, "temperature"?,
  "top_p"?, "seed"?, "fewshot"?}``: one episode through the runtime, streamed as
  newline-delimited JSON events ``start``, ``message`` (one per message appended to the
  transcript), then ``end`` (verdict and record), or ``error`` if it broke off.

Generation runs one call at a time (the backends are not thread-safe); static files and
task lists are served meanwhile. POST bodies must be JSON (``Content-Type: application/json``,
which a cross-site form cannot send without a CORS preflight this server never grants), and
the Host header must name the loopback interface (no DNS rebinding).
"""
from __future__ import annotations

import contextlib
import copy
import json
import mimetypes
import re
import shutil
import threading
import time
import traceback
import uuid
from dataclasses import dataclass, field
from functools import lru_cache
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import parse_qs, unquote, urlsplit

from .jsonio import dumps, read_jsonl
from .models.registry import ModelStore
from .oracle import OraclePolicy
from .policy.adapters import resolve_adapter
from .policy.base import GenConfig, ModelPolicy
from .prompt import system_prompt
from .runtime import Episode, Limits, scripted_approver
from .validate import validate

HOST = "127.0.0.1"  # the only interface the server binds
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
ROLES = ("system", "user", "assistant", "tool")
MAX_TOKENS_CAP = 4096  # per completion or assistant turn
SITE_HINT = "the site is built by `dvc repro export_web` (or `python -m scripts.export_web`)"
# request options this server does not implement, with the value that means "not used"
UNSUPPORTED = {"stream": False, "n": 1, "stop": None, "tools": None, "tool_choice": None, "functions": None,
               "function_call": None, "logprobs": False, "top_logprobs": None, "logit_bias": None,
               "presence_penalty": 0, "frequency_penalty": 0}
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
class App:
    """What the server serves: the loaded model (or none), the site and the task splits."""

    model: str | None  # the served model name; None: --no-model
    backend: Any = None  # a ccl.policy backend (render + generate)
    backend_name: str | None = None
    adapter: str | None = None
    site: Path = field(kw_only=True)  # the built site (web/public), chosen by the script
    data: Path = field(kw_only=True)  # the task-split folder (data/v1/tasks)
    max_body: int = 1 << 20
    gen: GenConfig = field(default_factory=GenConfig)  # defaults for requests that leave options out
    max_tokens_cap: int = MAX_TOKENS_CAP
    quiet: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)  # one generation at a time
    started: int = field(default_factory=lambda: int(time.time()))


def load_app(store: ModelStore, model: str | None, backend: str = "torch", adapter: str | Path | None = None,
             model_path: str | Path | None = None, **kwargs: Any) -> App:
    """Load the model through the project's loader (none when ``model`` is None)."""
    from .policy.load import load_backend  # torch is imported only when a model is served

    if model is None:
        return App(None, **kwargs)
    return App(model, load_backend(store, model, backend, adapter, model_path), backend,
               None if adapter is None else str(adapter), **kwargs)


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


def read_body(headers, rfile, max_body: int) -> bytes:
    """The request body, refused before reading when it is too large or of unknown length."""
    ctype = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if ctype != "application/json":
        raise ApiError(415, f"Content-Type must be application/json, not {ctype or 'missing'!r}")
    if "chunked" in (headers.get("Transfer-Encoding") or "").lower():
        raise ApiError(411, "chunked request bodies are not supported; send Content-Length")
    raw = headers.get("Content-Length")
    if raw is None:
        raise ApiError(411, "Content-Length header required")
    if not raw.strip().isdigit():
        raise ApiError(400, f"bad Content-Length {raw!r}")
    size = int(raw)
    if size > max_body:
        raise ApiError(413, f"request body of {size} bytes is over the {max_body}-byte limit (--max-body)")
    data = rfile.read(size)
    if len(data) < size:
        raise ApiError(400, f"body ended after {len(data)} of {size} bytes")
    return data


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
    return GenConfig(max_new_tokens=int_field(body, key, 1, cap, min(default.max_new_tokens, cap)),
                     temperature=number_field(body, "temperature", 0, 2, default.temperature),
                     top_p=number_field(body, "top_p", 0, 1, default.top_p, lo_open=True),
                     seed=int_field(body, "seed", 0, 2**63 - 1, default.seed))


def check_unsupported(body: dict) -> None:
    for name, unused in UNSUPPORTED.items():
        value = body.get(name)
        if value is None or value == unused or value == [] or value == {}:
            continue
        if name == "stream":
            raise ApiError(400, "stream: true is not supported; send stream: false (the backend returns "
                                "the whole completion at once)", param=name)
        raise ApiError(400, f"{name} is not supported by this server (got {_short(value)})", param=name)
    fmt = body.get("response_format")
    if fmt is not None and fmt != {"type": "text"}:
        raise ApiError(400, 'response_format: only {"type": "text"} is supported', param="response_format")


def check_messages(value: Any) -> list[dict]:
    """Chat messages as ``{role, content}`` with string content (other keys are dropped)."""
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
        out.append({"role": m["role"], "content": m["content"]})
    return out


def check_model(app: App, name: Any) -> str:
    """The loaded model's name, or 404 (unknown name) / 503 (no model loaded)."""
    if not isinstance(name, str) or not name:
        raise ApiError(400, f"model must be a non-empty string; got {_short(name)}", param="model")
    if app.model is None:
        raise ApiError(503, f"no model is loaded (the server runs with --no-model); cannot serve {name!r}",
                       param="model")
    if name != app.model:
        raise ApiError(404, f"model {name!r} is not served; served models: {app.model}", param="model",
                       code="model_not_found")
    return name


def check_adapter(app: App, adapter: Any) -> None:
    """A request may name the adapter only to confirm the one loaded at start-up."""
    if adapter is None:
        return
    if not isinstance(adapter, str):
        raise ApiError(400, f"adapter must be a string or null; got {_short(adapter)}", param="adapter")
    if app.adapter is None or resolve_adapter(adapter).resolve() != resolve_adapter(app.adapter).resolve():
        raise ApiError(404, f"adapter {adapter!r} is not loaded; this server runs {app.model} with adapter "
                            f"{app.adapter or 'none'} (restart with --adapter to serve another)", param="adapter")


# ---------------------------------------------------------------- chat completions
def context_length(backend: Any) -> int | None:
    config = getattr(getattr(backend, "model", None), "config", None)
    value = getattr(config, "max_position_embeddings", None)
    return value if isinstance(value, int) else None


def _render(backend: Any, messages: list[dict]) -> str:
    from jinja2 import TemplateError

    try:
        return backend.render(messages)
    except TemplateError as e:
        raise ApiError(400, f"the model's chat template rejected the messages: {e}", param="messages") from None


def chat_completion(app: App, body: dict) -> dict:
    """One non-streamed chat completion in the OpenAI response shape."""
    name = check_model(app, body.get("model"))
    messages = check_messages(body.get("messages"))
    check_unsupported(body)
    gen = gen_config(body, app.gen, app.max_tokens_cap)
    with app.lock:
        prompt = _render(app.backend, messages)
        limit = context_length(app.backend)
        tok = getattr(app.backend, "tok", None)
        if limit and tok is not None:
            n = len(tok(prompt, add_special_tokens=False).input_ids)
            if n + gen.max_new_tokens > limit:
                raise ApiError(400, f"the prompt has {n} tokens; with max_tokens {gen.max_new_tokens} it is "
                                    f"over the model's context of {limit}", param="messages",
                               code="context_length_exceeded")
        out = app.backend.generate([{}], [prompt], gen, [gen.seed])[0]  # a fresh state: no cache reuse
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion", "created": int(time.time()),
            "model": name, "system_fingerprint": None,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": out.text},
                         # an end token exactly at the cap is reported as length
                         "finish_reason": "length" if out.new_tokens >= gen.max_new_tokens else "stop",
                         "logprobs": None}],
            "usage": {"prompt_tokens": out.prompt_tokens, "completion_tokens": out.new_tokens,
                      "total_tokens": out.prompt_tokens + out.new_tokens}}


def model_card(app: App) -> dict:
    return {"id": app.model, "object": "model", "created": app.started, "owned_by": "ccl",
            "backend": app.backend_name, "adapter": app.adapter}


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
    policy: Any
    lock: Any  # the generation lock, or a null context for the oracle
    fewshot: bool = False


def episode_request(app: App, body: dict) -> EpisodeRequest:
    """Check an /api/episode body: the task, and the oracle or the loaded model with its decoding."""
    task_id = str_field(body, "task_id")
    split = str_field(body, "split", "eval_id")
    fewshot = body.get("fewshot", False)
    if not isinstance(fewshot, bool):
        raise ApiError(400, f"fewshot must be true or false; got {_short(fewshot)}", param="fewshot")
    model = body.get("model") or app.model or "oracle"
    if model == "oracle":
        if body.get("adapter") is not None:
            raise ApiError(400, "the oracle takes no adapter", param="adapter")
        policy, lock = OraclePolicy(), contextlib.nullcontext()
    else:
        check_model(app, model)
        check_adapter(app, body.get("adapter"))
        policy, lock = ModelPolicy(app.backend, gen_config(body, app.gen, app.max_tokens_cap), name=model), app.lock
    return EpisodeRequest(find_task(app.data, split, task_id), split, policy, lock, fewshot)


def episode_events(req: EpisodeRequest) -> Iterator[dict]:
    """Run one episode through the runtime, yielding start, one message event per message
    appended to the transcript, and end (verdict, record, token usage)."""
    task, policy = req.task, req.policy
    system = system_prompt(task, fewshot=req.fewshot)
    ep = Episode(task, scripted_approver, Limits(), system=system)
    yield {"event": "start", "task": task_summary(task, req.split), "system": system}
    try:
        while not ep.done:
            seen = len(ep.messages)
            with req.lock:
                text = policy.act(ep)
            ep.step(text)
            for m in ep.messages[seen:]:
                yield {"event": "message", "turn": len(ep.turns) - 1, "message": m}
    finally:
        if hasattr(policy, "release"):
            policy.release(ep)  # drop the KV cache, also when the client went away
    record = ep.record()
    yield {"event": "end", "verdict": validate(task, record), "record": record,
           "usage": {"prompt_tokens": ep.prompt_tokens,
                     "completion_tokens": ep.new_tokens}}


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
    path = root.joinpath(*parts).resolve()
    if not path.is_relative_to(root):
        raise ApiError(403, f"path {url_path!r} leaves the site; refused")
    if path.is_dir():
        path = path / "index.html"
    if not path.is_file():
        raise ApiError(404, f"no file {rel!r} in the site" + ("" if parts else f" ({SITE_HINT})"))
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
              "/api/tasks": "GET", "/api/episode": "POST"}


def health(app: App) -> dict:
    return {"status": "ok", "model": app.model, "backend": app.backend_name, "adapter": app.adapter,
            "models": [app.model] if app.model else [], "episode_models": ([app.model] if app.model else []) + ["oracle"],
            "site": app.site.is_dir(), "splits": splits(app.data)}


def make_handler(app: App) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``app``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "ccl-serve/1"
        timeout = 120  # seconds a silent client may hold a connection

        def do_GET(self) -> None:
            self.dispatch()

        do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_GET

        def dispatch(self) -> None:
            self.sent = False
            url = urlsplit(self.path)
            try:
                check_host(self.headers.get("Host"))
                if url.path.startswith(("/v1/", "/api/")) or url.path in ("/v1", "/api"):
                    self.api(url.path, parse_qs(url.query))
                else:
                    self.allow(("GET", "HEAD"))
                    self.static(url.path)
            except ApiError as e:
                self.send_json(e.status, e.body(), e.headers, close=True)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True
            except Exception as e:  # a bug: report it, keep serving
                if not app.quiet:
                    traceback.print_exc()
                if not self.sent:
                    self.send_json(500, ApiError(500, f"internal error: {type(e).__name__}: {e}").body(), close=True)
                self.close_connection = True

        def allow(self, methods: tuple[str, ...]) -> None:
            if self.command not in methods:
                raise ApiError(405, f"{self.command} is not allowed on {urlsplit(self.path).path}; "
                                    f"use {' or '.join(methods)}", headers={"Allow": ", ".join(methods)})

        def api(self, path: str, query: dict[str, list[str]]) -> None:
            if path.startswith("/v1/models/"):
                self.allow(("GET",))
                check_model(app, unquote(path[len("/v1/models/"):]))
                return self.send_json(200, model_card(app))
            if path not in API_ROUTES:
                raise ApiError(404, f"unknown path {path}; endpoints: GET /v1/models, POST /v1/chat/completions, "
                                    "GET /api/health, GET /api/tasks?split=..., POST /api/episode")
            self.allow((API_ROUTES[path],))
            if path == "/v1/models":
                self.send_json(200, {"object": "list", "data": [model_card(app)] if app.model else []})
            elif path == "/api/health":
                self.send_json(200, health(app))
            elif path == "/api/tasks":
                self.send_json(200, task_list(app, query))
            elif path == "/v1/chat/completions":
                self.send_json(200, chat_completion(app, self.json_body()))
            else:
                self.stream(episode_events(episode_request(app, self.json_body())))

        def json_body(self) -> dict:
            return parse_json(read_body(self.headers, self.rfile, app.max_body))

        def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None,
                      close: bool = False) -> None:
            data = json.dumps(obj, ensure_ascii=False).encode()
            self.send_response(status)
            for k, v in {"Content-Type": "application/json; charset=utf-8", "Content-Length": str(len(data)),
                         "Cache-Control": "no-store", **(headers or {})}.items():
                self.send_header(k, v)
            if close:  # an error may leave an unread body on the connection
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.sent = True
            if self.command != "HEAD":
                self.wfile.write(data)

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """The base class's own errors (malformed request line, unknown method) as JSON too."""
            self.command = self.command or "GET"
            self.send_json(code, ApiError(code, message or HTTPStatus(code).phrase).body(), close=True)

        def static(self, url_path: str) -> None:
            path = static_path(app.site, url_path)
            self.send_response(200)
            self.send_header("Content-Type", content_type(path))
            self.send_header("Content-Length", str(path.stat().st_size))
            self.send_header("Cache-Control", "no-cache")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.sent = True
            if self.command != "HEAD":
                with open(path, "rb") as f:
                    shutil.copyfileobj(f, self.wfile)

        def stream(self, events: Iterator[dict]) -> None:
            """Newline-delimited JSON, one event a line, the body ended by closing the connection."""
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.end_headers()
            self.sent = self.close_connection = True
            try:
                for event in events:
                    self.wfile.write((dumps(event) + "\n").encode())
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client left; closing the generator releases the episode
            except Exception as e:
                if not app.quiet:
                    traceback.print_exc()
                error = {"message": f"episode broke off: {type(e).__name__}: {e}", "type": "server_error"}
                with contextlib.suppress(OSError):
                    self.wfile.write((dumps({"event": "error", "error": error}) + "\n").encode())
            finally:
                events.close()

        def log_message(self, format: str, *args: Any) -> None:
            if not app.quiet:
                super().log_message(format, *args)

    return Handler


def make_server(app: App, port: int) -> ThreadingHTTPServer:
    """A threaded server on 127.0.0.1:``port`` (0: a free port; read ``server_address``)."""
    server = ThreadingHTTPServer((HOST, port), make_handler(app))
    server.daemon_threads = True
    return server


def serve_in_thread(app: App, port: int = 0) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """Start a server in a daemon thread (tests, notebooks); stop it with ``server.shutdown()``."""
    server = make_server(app, port)
    thread = threading.Thread(target=server.serve_forever, name="ccl-serve", daemon=True)
    thread.start()
    return server, thread

