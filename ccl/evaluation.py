"""Evaluation: run a policy over task splits, judge every episode, aggregate metrics.

Episodes are appended to a ``ChunkLog`` (one entry per finished episode, keyed by task)
as they finish, so an interrupted evaluation resumes without redoing them; a log written
under another fingerprint (model, adapter, decoding, tasks) is discarded. The final
episode file is written atomically, ordered by split and task, once every episode is done.
"""
from __future__ import annotations

import resource
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable

from .resume import ChunkLog
from .rollout import rollout
from .validate import validate

MAIN_SPLITS = ("eval_id", "eval_ood", "eval_unseen", "eval_renamed")
DIAGNOSTICS = ("tool_selection", "arg_correct", "dependency_safe", "strict_schema", "hallucinated_tools",
               "unnecessary_calls", "invalid_args", "parse_errors", "turns", "parallel_ok",
               "permission_violations", "denied_retries")


@dataclass(frozen=True)
class EvaluateConfig:
    """What to evaluate and how; defaults are the paper profile's."""

    splits: tuple[str, ...] = ("eval_id", "eval_ood", "eval_unseen", "eval_renamed", "eval_catalog_0",
                               "eval_catalog_5", "eval_catalog_12")
    max_tasks_per_split: int | None = None  # None: every task in the split file
    batch_size: int = 64  # episodes decoded in lock-step
    max_new_tokens: int = 256  # per assistant turn


def episode_row(task: dict, ep) -> dict:
    """One finished episode with its task's strata, verdict, token counts and full record."""
    record = ep.record()
    return {"task_id": task["id"], "dataset": task["dataset"], "template": task["template"],
            "family": task["family"], "depth": task["depth"], "graph_seen": task.get("graph_seen"),
            "faults": bool(task["faults"]), "verdict": validate(task, record),
            "new_tokens": ep.scratch.get("tokens", 0), "prompt_tokens": ep.scratch.get("prompt_tokens", 0),
            "record": record}


def fingerprint(name: str, model: str | None, backend: str | None, adapter: dict | None, gen,
                batch_size: int, tasks: list[dict]) -> dict:
    """Everything that determines an evaluation's episodes; a partial log under another one is discarded."""
    return {"name": name, "model": model, "backend": backend, "adapter": adapter, "gen": asdict(gen),
            "batch_size": batch_size, "tasks": [t["id"] for t in tasks]}


def run_tasks(tasks: list[dict], policy, log: ChunkLog, batch_size: int, fewshot: bool,
              progress: Callable[[int], None] = lambda n: None) -> dict:
    """Evaluate the tasks not yet in ``log``; log each finished episode under its task id."""
    resumed = sum(log.done(t["id"]) for t in tasks)
    todo = [t for t in tasks if not log.done(t["id"])]
    start = time.perf_counter()
    n = 0
    for task, ep, latency in rollout(todo, policy, batch_size=batch_size, fewshot=fewshot):
        log.append(task["id"], {**episode_row(task, ep), "latency_s": round(latency, 3)})
        n += 1
        progress(1)
    return {"episodes_run": n, "episodes_resumed": resumed, "wall_s": round(time.perf_counter() - start, 2)}


def _mean(values: Iterable) -> float | None:
    vals = [float(v) for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def summarise(rows: list[dict]) -> dict:
    out = {"n": len(rows), "success": _mean(r["verdict"]["success"] for r in rows)}
    for d in DIAGNOSTICS:
        out[d] = _mean(r["verdict"][d] for r in rows)
    return out


def metrics(rows: list[dict], splits: Iterable[str]) -> dict:
    by_split = {s: summarise([r for r in rows if r["dataset"] == s]) for s in splits}
    pooled = [r for r in rows if r["dataset"] in MAIN_SPLITS]
    return {"splits": by_split, "pooled_main": summarise(pooled) if pooled else None}


def peak_memory_gb() -> float:
    """Peak resident memory of this process (Linux reports KiB), or CUDA peak if larger."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    try:
        import torch
        if torch.cuda.is_available():
            rss = max(rss, torch.cuda.max_memory_allocated() / 2**30)
    except ImportError:
        pass
    return round(rss, 2)


def efficiency(rows: list[dict], run: dict, stats) -> dict:
    turns = _mean(r["verdict"]["turns"] for r in rows) or 0.0
    gen_s = getattr(stats, "gen_seconds", 0.0)
    new = getattr(stats, "new_tokens", 0)
    n = run["episodes_run"]
    return {"peak_mem_gb": peak_memory_gb(), "wall_s": run["wall_s"], "episodes": len(rows),
            "episodes_this_run": n, "episodes_resumed": run["episodes_resumed"], "mean_turns": round(turns, 3),
            "gen_tokens": new, "prompt_tokens": getattr(stats, "prompt_tokens", 0),
            "gen_tok_per_s": round(new / gen_s, 2) if gen_s else None,
            "mean_latency_s": round(run["wall_s"] / n, 3) if n else None,
            "note": "timings cover the episodes run by this invocation" if run["episodes_resumed"] else ""}
