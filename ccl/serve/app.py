"""The server's state: what it serves (providers, the fallback chain, the site and the task data),
its limits, the latest requests' records, and the error every endpoint reports.
"""
from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..models.registry import ModelError, ModelStore
from ..policy.base import GenConfig

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
    connection_stats: Callable[[], dict] = field(default=dict)  # open/cap/refused, set by the server at start

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
    from ..policy.load import load_backend  # torch is imported only when a model is served

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
