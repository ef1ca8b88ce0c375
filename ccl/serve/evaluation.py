"""The cost and latency of serving: episodes of an evaluation split driven through the OpenAI-compatible
server by a tool-using client, for the trained student alone, the teacher alone and the fallback chain
(student first, the teacher when the student's action is malformed, the context overflows, the time
bound passes or generation fails). Compute time is the cost: the server's generation seconds per
request, summed over the providers it tried.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..artifacts.jsonio import write_json, write_jsonl
from ..episode.runtime import run_episode
from ..judge.validate import validate
from ..policy.base import GenConfig
from ..stats.binomial import wilson
from .app import CHAIN, App
from .client import ServerPolicy
from .http import serve_in_thread

SETUPS = ("student", "teacher", "chain")


@dataclass(frozen=True)
class ServeEvalConfig:
    """params.yaml ``serve_eval`` (per profile)."""
    split: str = "eval_id"
    max_tasks: int = 96  # the first tasks of the split, as evaluation takes them
    max_new_tokens: int = 256  # per assistant turn, as in evaluation
    request_timeout_s: float = 120.0  # generation time per provider and request


def _rate(k: int, n: int) -> dict:
    return {"k": k, "n": n, "rate": k / n if n else None, "ci": list(wilson(k, n)) if n else None}


def summarise(episodes: list[dict], requests: list[dict]) -> dict:
    """One setup's row: success (strict and the write-up's), fallback rate, latency and tokens."""
    latency = np.array([r["server_s"] for r in requests]) if requests else np.zeros(0)
    fell = [r for r in requests if r["fallbacks"] > 0]
    return {
        "episodes": len(episodes),
        "success": _rate(sum(e["success"] for e in episodes), len(episodes)),
        "success_writeup": _rate(sum(e["success_writeup"] for e in episodes), len(episodes)),
        "requests": len(requests),
        "fallback_rate": len(fell) / len(requests) if requests else None,
        "fallback_reasons": dict(sorted(Counter(a for r in fell for a in r["passed_over"]).items())),
        "answered_by": dict(sorted(Counter(r["provider"] for r in requests).items())),
        "mean_latency_s": float(latency.mean()) if requests else None,
        "p50_latency_s": float(np.percentile(latency, 50)) if requests else None,
        "p95_latency_s": float(np.percentile(latency, 95)) if requests else None,
        "mean_client_latency_s": float(np.mean([r["client_s"] for r in requests])) if requests else None,
        "prompt_tokens_per_request": float(np.mean([r["prompt_tokens"] for r in requests])) if requests else None,
        "completion_tokens_per_request": float(np.mean([r["completion_tokens"] for r in requests])) if requests else None,
        "compute_s_per_episode": float(latency.sum() / len(episodes)) if episodes else None,
    }


def measure(app: App, tasks: list[dict], cfg: ServeEvalConfig, progress: Callable[[str, int], None] = lambda s, n: None
            ) -> tuple[dict, list[dict], list[dict]]:
    """(summary by setup, episode rows, request rows), every episode through the server on loopback."""
    from openai import OpenAI

    if len(app.providers) != 2 or app.chain != (app.providers[0].name, app.providers[1].name):
        raise ValueError("serve_eval needs two providers (student, teacher) and the chain over them")
    models = {"student": app.providers[0].name, "teacher": app.providers[1].name, "chain": CHAIN}
    gen = GenConfig(max_new_tokens=cfg.max_new_tokens)
    server, _ = serve_in_thread(app, 0)
    client = OpenAI(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="local", max_retries=0,
                    timeout=cfg.request_timeout_s * 3)
    episodes, requests, summary = [], [], {}
    try:
        for setup in SETUPS:
            policy = ServerPolicy(client, models[setup], gen)
            mine_e, mine_r = [], []
            for task in tasks:
                first = len(policy.turns)
                ep = run_episode(task, policy)
                verdict = validate(task, ep.record())
                mine_e.append({"setup": setup, "task_id": task["id"], "family": task["family"],
                               "success": verdict["success"], "success_writeup": verdict["success_writeup"],
                               "turns": len(ep.turns), "end_reason": str(ep.end_reason)})
                for t in policy.turns[first:]:
                    attempts = t.ccl["attempts"]
                    mine_r.append({"setup": setup, "task_id": t.task_id, "turn": t.turn,
                                   "provider": t.ccl["provider"], "fallbacks": len(attempts) - 1,
                                   "passed_over": [a["outcome"] for a in attempts[:-1]],
                                   "outcome": attempts[-1]["outcome"],
                                   "server_s": round(sum(a["latency_s"] for a in attempts), 4),
                                   "client_s": round(t.latency_s, 4), "prompt_tokens": t.prompt_tokens,
                                   "completion_tokens": t.completion_tokens, "finish_reason": t.finish_reason})
                progress(setup, len(mine_e))
            summary[setup] = {"model": models[setup], **summarise(mine_e, mine_r)}
            episodes += mine_e
            requests += mine_r
    finally:
        server.shutdown()
        server.server_close()
    return summary, episodes, requests


def write(out: Path, summary: dict, episodes: list[dict], requests: list[dict], meta: dict) -> None:
    write_jsonl(out / "episodes.jsonl.gz", episodes)
    write_jsonl(out / "requests.jsonl.gz", requests)
    write_json(out / "summary.json", {**meta, "order": [s for s in SETUPS if s in summary], "setups": summary})
