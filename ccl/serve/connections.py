"""How many connections the server holds open, and what the rest get.

Every open connection is a file descriptor. Past the process's descriptor limit (256 by default on
macOS) ``accept()`` fails with EMFILE: asyncio logs a traceback for each failure, pauses accepting,
and every client (health probes too) waits. So the server counts its connections against a cap set
below the limit, read once at start, and answers each connection past the cap at once with a 503
(``Retry-After: 1``) and closes it. A burst of refusals is logged as one line, and an EMFILE that
still happens (descriptors opened elsewhere in the process) as one line per burst, not a traceback.

The cap leaves room for the descriptors already open at start, for one accept burst (asyncio accepts
up to ``backlog`` sockets before any of them reaches the server), for the refusals being answered
(:data:`REFUSALS`; past them a connection is reset without an answer) and for :data:`SPARE` more (site
files being sent, the log). Idle keep-alive connections count until their idle timeout closes them.
"""
from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Callable

from aiohttp import web

SPARE = 16  # descriptors kept for files the server opens while serving (site files, logs)
LOG_EVERY_S = 5.0  # at most one line per this many seconds about refusals or EMFILE
REFUSE_AFTER_S = 1.0  # a refused connection is closed after this long if the client has not closed it
REFUSALS = 16  # refused connections held open at a time (each a descriptor); the excess is reset
REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
           b"Retry-After: 1\r\nConnection: close\r\nCache-Control: no-store\r\nContent-Length: %d\r\n\r\n%s")
REFUSAL_BODY = (b'{"error": {"message": "too many open connections; retry shortly", "type": "server_error", '
                b'"param": null, "code": "connection_limit"}}')


def descriptor_limit() -> int | None:
    """The process's soft limit on open descriptors (None where the platform has no such limit)."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def open_descriptors() -> int:
    """Descriptors the process holds now (0 where the platform cannot list them)."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(folder))
        except OSError:
            continue
    return 0


def plan(limit: int | None, in_use: int, backlog: int) -> tuple[int | None, int]:
    """(connection cap, listen backlog) for a descriptor ``limit`` with ``in_use`` already open.
    No limit: no cap. A low limit shrinks the backlog (an accept burst) to an eighth of it first."""
    if limit is None:
        return None, backlog
    backlog = max(1, min(backlog, limit // 8))
    cap = limit - in_use - backlog - SPARE - REFUSALS
    if cap < 1:
        raise OSError(f"the descriptor limit ({limit}) leaves no room for connections ({in_use} open already); "
                      f"raise it (ulimit -n)")
    return cap, backlog


class LineLog:
    """One line per burst: a message is printed only if the last one was at least LOG_EVERY_S ago; the
    ones held back are counted into the next."""

    def __init__(self, say: Callable[[str], None]):
        self.say, self.last, self.held = say, -float("inf"), 0

    def __call__(self, text: str) -> None:
        now = time.monotonic()
        if now - self.last < LOG_EVERY_S:
            self.held += 1
            return
        more = f" ({self.held} more since the last line)" if self.held else ""
        self.say(text + more)
        self.last, self.held = now, 0


class Refusal(asyncio.Protocol):
    """A connection past the cap: answered at once with a 503 and half-closed; what the client still sends
    is read and dropped (closing on unread data would reset the connection before the client reads the
    answer) until it closes or REFUSE_AFTER_S passes. At most REFUSALS are held at a time; past that a
    connection is reset at once (``abort``), so refusals themselves cannot exhaust the descriptors."""

    def __init__(self, server: "CappedServer"):
        self.server = server

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        if self.server.refusing >= REFUSALS:
            transport.abort()
            return
        self.server.refusing += 1
        self.counted = True
        transport.write(REFUSAL % (len(REFUSAL_BODY), REFUSAL_BODY))
        if transport.can_write_eof():
            transport.write_eof()
        self.timer = asyncio.get_running_loop().call_later(REFUSE_AFTER_S, transport.close)

    def data_received(self, data: bytes) -> None:
        pass  # the request is not read: the answer is already sent

    def eof_received(self) -> bool:
        self.transport.close()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if getattr(self, "counted", False):
            self.server.refusing -= 1
            self.timer.cancel()


class CappedServer(web.Server):
    """aiohttp's protocol factory, counting the connections it made against ``cap`` (None: no cap).
    A connection counts from its protocol's creation until it is lost; one whose transport never arrived
    (asyncio failed to set it up after the accept) is dropped from the count after STILLBORN_S."""

    STILLBORN_S = 10.0

    def __init__(self, handler: Any, *, cap: int | None, log: Callable[[str], None], **kwargs: Any):
        super().__init__(handler, **kwargs)
        self.cap, self.log = cap, log
        self.open: dict[Any, float] = {}  # handler -> when it was made
        self.refused = 0
        self.refusing = 0  # refusals being answered now (Refusal)

    def __call__(self) -> asyncio.Protocol:
        now = time.monotonic()
        if self.cap is not None and len(self.open) >= self.cap:
            self.open = {h: t for h, t in self.open.items() if h.transport is not None or now - t < self.STILLBORN_S}
        if self.cap is not None and len(self.open) >= self.cap:
            self.refused += 1
            self.log(f"serve: {len(self.open)} connections open, the cap (below the descriptor limit): refusing new "
                     f"ones with 503 until some close ({self.refused} refused since start)")
            return Refusal(self)
        handler = super().__call__()
        self.open[handler] = now
        return handler

    def connection_lost(self, handler: Any, exc: BaseException | None = None) -> None:
        super().connection_lost(handler, exc)
        self.open.pop(handler, None)

    def stats(self) -> dict:
        return {"open": len(self.open), "cap": self.cap, "refused": self.refused}


def quiet_accept_errors(loop: asyncio.AbstractEventLoop, log: Callable[[str], None]) -> None:
    """asyncio reports each failed accept (EMFILE, ENFILE, ENOBUFS, ENOMEM) with a traceback; report them
    as one line per burst instead, and everything else as before."""

    def handler(loop: asyncio.AbstractEventLoop, context: dict) -> None:
        if str(context.get("message", "")).startswith("socket.accept() out of system resource"):
            log(f"serve: accept failed ({context.get('exception')}); new connections wait until descriptors free up")
            return
        loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
