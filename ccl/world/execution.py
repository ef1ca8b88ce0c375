"""Run one tool call under a time limit, as a transaction on the world.

Two guarantees the verdicts rely on (the validator and the oracle both read the world as the replay of
the episode's recorded effects):

* **Atomic.** A side-effect tool runs on a private copy of the world; the copy becomes the world only
  when the call succeeds within its limit, and only then does the runtime record the effect. A tool that
  changes state and then raises (at once, or after its limit) leaves the world as it was.
* **Enforced limit.** Tools are in-process Python functions, so a call cannot be killed like a process.
  The call runs in a daemon worker thread; the runtime waits ``timeout_s`` (``Thread.join``) and then
  abandons it: the call is reported as a timeout at once, and the worker is stopped by raising
  :class:`Abandoned` inside it (CPython's ``PyThreadState_SetAsyncExc``), which ends any tool busy in
  Python code within a few bytecodes. A worker blocked in a C call (a sleep, a socket read) only sees
  the exception when that call returns; until then it stays a daemon thread (:func:`abandoned` counts
  them) that can never reach the episode's world: it holds a copy (side-effect tools) or a world it
  only reads (read-only tools never write: tests/test_transactions.py checks that over every tool).

One thread per call costs about 0.1 ms, nothing beside the model's forward passes, and keeps the
normal path deterministic: a tool that finishes in time gives exactly the result it gave before.
"""
from __future__ import annotations

import ctypes
import threading
import time
from dataclasses import dataclass
from typing import Any

from .state import World
from .toolkit import Tool, ToolError

STOP_GRACE_S = 1.0  # how long an abandoned worker gets to unwind after the stop is raised in it
_abandoned: list[threading.Thread] = []


class Abandoned(BaseException):
    """Raised inside a worker whose call passed its limit; a BaseException so a tool's
    ``except Exception`` cannot swallow it."""


@dataclass
class Ran:
    """What a call came to: exactly one of result, error (a ToolError), crash (any other exception,
    as "Type: message") and timed_out is set; ``state`` is the world state to adopt after a
    successful side-effect call (None otherwise)."""

    result: Any = None
    error: ToolError | None = None
    crash: str | None = None
    timed_out: bool = False
    state: dict | None = None


def _stop(worker: threading.Thread) -> None:
    """Raise Abandoned inside ``worker`` and give it STOP_GRACE_S to end; still alive after that (blocked
    in C), it is kept in the abandoned list."""
    if worker.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), ctypes.py_object(Abandoned))
    worker.join(STOP_GRACE_S)
    if worker.is_alive():
        _abandoned.append(worker)


def abandoned() -> int:
    """Workers abandoned at their limit that are still alive (blocked in a C call)."""
    _abandoned[:] = [t for t in _abandoned if t.is_alive()]
    return len(_abandoned)


def run_tool(spec: Tool, world: World, args: dict, timeout_s: float) -> Ran:
    """Call ``spec`` on ``world`` with ``args``; never raises, never changes ``world``."""
    workspace = World(world.state) if spec.side_effect else world  # World() deep-copies the state
    box: dict[str, Any] = {}

    def body() -> None:
        try:
            box["result"] = spec.fn(workspace, **args)
        except Abandoned:
            pass
        except ToolError as e:
            box["error"] = e
        except Exception as e:  # a bug or pathological input inside a tool: reported, not raised
            box["crash"] = f"{type(e).__name__}: {e}"[:300]

    worker = threading.Thread(target=body, name=f"tool-{spec.name}", daemon=True)
    start = time.perf_counter()
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        _stop(worker)
        return Ran(timed_out=True)
    if time.perf_counter() - start > timeout_s:  # finished, but only just past its limit
        return Ran(timed_out=True)
    if "error" in box or "crash" in box:
        return Ran(error=box.get("error"), crash=box.get("crash"))
    return Ran(result=box["result"], state=workspace.state if spec.side_effect else None)
