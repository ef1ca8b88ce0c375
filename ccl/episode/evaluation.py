"""Evaluation (generation): run a policy over task splits and keep every transcript.

Judging is a separate stage (:mod:`ccl.judge.judging`), so a change to the validator re-scores
the stored transcripts and never regenerates them. A transcript row holds the task's
strata, token counts and the full episode record; no verdict and no timing, so the same
decoding gives the same bytes on every machine (timings go to the generation record).

Episodes are appended to a ``ChunkLog`` (one entry per finished episode, keyed by task)
as they finish, so an interrupted evaluation resumes without redoing them; a log written
under another fingerprint (model, adapter, decoding, tasks) is discarded. The final
episode file is written atomically, ordered by split and task, once every episode is done.
"""
from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any, Callable

from ..artifacts.resume import ChunkLog
from ..resources import peak_memory_gb
from .rollout import rollout
from .runtime import token_counts

# Version of what a resume log holds: 2 = transcript rows without verdicts (a log written in
# another format is discarded, never mixed in).
LOG_FORMAT = 2


def strata(task: dict) -> dict:
    """The task attributes results are broken down by."""
    return {"template": task["template"], "family": task["family"], "depth": task["depth"],
            "graph_seen": task.get("graph_seen"), "faults": bool(task["faults"])}


def transcript_row(task: dict, ep, memory: Any) -> dict:
    """One finished episode: task id, split, strata, token counts and the full record (no verdict).
    The counts are the model policy's (``memory``, its memory of the episode, required so that no
    caller can drop them by accident); a policy without a model (the oracle's memory, a scripted
    policy's None) generates none."""
    new_tokens, prompt_tokens = token_counts(memory)
    return {"task_id": task["id"], "dataset": task["dataset"], **strata(task),
            "new_tokens": new_tokens, "prompt_tokens": prompt_tokens, "record": ep.record()}


def fingerprint(name: str, model: str | None, backend: str | None, adapter: dict | None, gen,
                batch_size: int, tasks: list[dict]) -> dict:
    """Everything that determines an evaluation's episodes; a partial log under another one is discarded."""
    return {"format": LOG_FORMAT, "name": name, "model": model, "backend": backend, "adapter": adapter,
            "gen": asdict(gen), "batch_size": batch_size, "tasks": [t["id"] for t in tasks]}


def run_tasks(tasks: list[dict], policy, log: ChunkLog, batch_size: int, fewshot: bool,
              progress: Callable[[int], None] = lambda n: None) -> dict:
    """Evaluate the tasks not yet in ``log``; log each finished episode under its task id."""
    resumed = sum(log.done(t["id"]) for t in tasks)
    todo = [t for t in tasks if not log.done(t["id"])]
    start = time.perf_counter()
    n = 0
    for task, ep, memory, latency in rollout(todo, policy, batch_size=batch_size, fewshot=fewshot):
        log.append(task["id"], {"row": transcript_row(task, ep, memory), "latency_s": round(latency, 3)})
        n += 1
        progress(1)
    return {"episodes_run": n, "episodes_resumed": resumed, "wall_s": round(time.perf_counter() - start, 2)}


def efficiency(rows: list[dict], run: dict, stats) -> dict:
    turns = sum(len(r["record"]["turns"]) for r in rows) / len(rows) if rows else 0.0
    gen_s = getattr(stats, "gen_seconds", 0.0)
    new = getattr(stats, "new_tokens", 0)
    n = run["episodes_run"]
    return {"peak_mem_gb": peak_memory_gb(), "wall_s": run["wall_s"], "episodes": len(rows),
            "episodes_this_run": n, "episodes_resumed": run["episodes_resumed"], "mean_turns": round(turns, 3),
            "gen_tokens": new, "prompt_tokens": getattr(stats, "prompt_tokens", 0),
            "gen_tok_per_s": round(new / gen_s, 2) if gen_s else None,
            "engine": engine.summary() if (engine := getattr(stats, "engine", None)) else None,
            "mean_latency_s": round(run["wall_s"] / n, 3) if n else None,
            "note": "timings cover the episodes run by this invocation" if run["episodes_resumed"] else ""}
