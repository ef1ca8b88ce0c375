"""The local server (scripts/serve.py): the report site, an OpenAI-compatible chat endpoint with tool
calls and a fallback chain, and live episodes for the trace explorer, on 127.0.0.1 only.

Endpoints (every error is ``{"error": {"message", "type", "param", "code"}}``):

- ``GET /`` and any other path outside /v1 and /api: a file of the static site (``web/public``);
- ``GET /v1/models``, ``GET /v1/models/<id>``: the served models, and ``chain`` when one is configured;
- ``POST /v1/chat/completions``: ``model`` (a served model, or ``chain``: each provider in turn until
  one answers well), ``messages``, ``tools`` and ``tool_choice`` (``auto`` or ``none``), ``max_tokens``
  or ``max_completion_tokens``, ``temperature`` (default 0: greedy), ``top_p``, ``seed``, ``stream``
  (server-sent events ending in ``[DONE]``; ``stream_options.include_usage``). With ``tools`` the
  prompt is the study's (``ccl.episode.prompt.compose_system``: the client's system text is the context
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
that disconnects cancels its request, and its generation stops at the next decoding step; open
connections are capped below the descriptor limit (ccl/serve/connections.py). Generation
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
import mimetypes
import re
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qs, unquote

from aiohttp import web

from ..artifacts.jsonio import json_text
from .app import BACKLOG, HOST, SITE_HINT, ApiError, App
from .completions import chat_completion, model_card, stream_chunks
from .connections import CappedServer, LineLog, descriptor_limit, open_descriptors, plan, quiet_accept_errors
from .episodes import episode_events, episode_request, json_line, splits, task_list
from .requests import _short, check_body_headers, check_host, check_model, parse_json


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
            "site": app.site.is_dir(), "splits": splits(app.data), "connections": app.connection_stats()}


def json_response(status: int, obj: Any, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=status, body=json_text(obj, ensure_ascii=False).encode(),
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
                return await _api(app, request, path)
            allow(request, ("GET", "HEAD"))
            return _static(app, request, path)
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

    return handle


async def _api(app: App, request: web.BaseRequest, path: str) -> web.StreamResponse:
    """The /v1 and /api endpoints."""
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
        return await _completion(app, request, body)
    return await _stream_lines(app, request, episode_events(app, episode_request(app, body)))


async def _completion(app: App, request: web.BaseRequest, body: dict) -> web.StreamResponse:
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
        await resp.write(b"data: " + json_text(chunk, ensure_ascii=False).encode() + b"\n\n")
    await resp.write(b"data: [DONE]\n\n")
    await resp.write_eof()
    return resp


async def _stream_lines(app: App, request: web.BaseRequest, events) -> web.StreamResponse:
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


def _static(app: App, request: web.BaseRequest, url_path: str) -> web.StreamResponse:
    path = static_path(app.site, url_path)
    return web.FileResponse(path, headers={"Content-Type": content_type(path), "Cache-Control": "no-cache",
                                           "X-Content-Type-Options": "nosniff"})


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
        log = LineLog(lambda line: print(line, file=sys.stderr, flush=True))
        cap, backlog = plan(descriptor_limit(), open_descriptors(), BACKLOG)  # read once, at start
        quiet_accept_errors(self.loop, log)
        low = CappedServer(make_handler(self.app), cap=cap, log=log, handler_cancellation=True, access_log=None,
                           keepalive_timeout=self.app.keepalive_s, max_line_size=8190, max_field_size=8190)
        self.app.connection_stats = low.stats
        self._runner = web.ServerRunner(low, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, HOST, self.port, backlog=backlog)
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
