"""Live episodes for the trace explorer: the task splits the server offers, one episode through
the runtime streamed as events, and strict JSON lines for them.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..artifacts.jsonio import dumps, read_jsonl
from ..episode.oracle import OraclePolicy
from ..episode.prompt import system_prompt
from ..episode.runtime import Episode, Limits, fresh_memory, scripted_approver, token_counts
from ..judge.validate import validate
from ..policy.base import ModelPolicy
from .app import ApiError, App
from .completions import Stopper, in_worker
from .requests import _short, check_adapter, check_model, gen_config, str_field

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
    ep, memory = Episode(task, scripted_approver, Limits(), system=system), fresh_memory(policy)
    yield {"event": "start", "task": task_summary(task, req.split), "system": system}
    try:
        while not ep.done:
            seen = len(ep.messages)
            if isinstance(policy, ModelPolicy):
                policy.stop = stopper = Stopper(app.request_timeout_s)
                text = await in_worker(app, lambda: policy.act(ep, memory), stopper)
            else:
                text = policy.act(ep, memory)
            ep.step(text)
            for m in ep.messages[seen:]:
                yield {"event": "message", "turn": len(ep.turns) - 1, "message": m}
    finally:
        if hasattr(policy, "release"):
            policy.release(memory)  # drop the KV cache, also when the client went away
    record = ep.record()
    new_tokens, prompt_tokens = token_counts(memory)
    yield {"event": "end", "verdict": validate(task, record), "record": record,
           "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": new_tokens}}


def json_line(obj: Any) -> bytes:
    """One event of an episode stream: strict JSON (model text's NaN / Infinity become strings, as in
    every record: ccl.artifacts.jsonio.json_text), so the browser's JSON.parse reads every line."""
    return (dumps(obj) + "\n").encode()
