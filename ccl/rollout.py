"""Lock-step batched rollouts: many episodes advance turn by turn through the one runtime.

Tasks are queued shortest prompt first (less padding), and the batch is refilled as
episodes finish (continuous batching), so a long episode never holds a slot that
shorter ones could use. Each turn, every live episode gets one assistant message from
``policy.act_batch``; a finished episode leaves the batch and its KV cache is freed.
"""
from __future__ import annotations

import time
from typing import Callable, Iterator

from .prompt import system_prompt
from .records import Task
from .runtime import Episode, Limits, scripted_approver


def act_batch(policy, eps: list[Episode]) -> list[str]:
    if hasattr(policy, "act_batch"):
        return policy.act_batch(eps)
    return [policy.act(e) for e in eps]


def rollout(tasks: list[Task], policy, batch_size: int = 16, fewshot: bool = False,
            approver: Callable = scripted_approver, limits: Limits = Limits()) -> Iterator[tuple[Task, Episode, float]]:
    """Yield (task, finished episode, seconds from its start to its end) as episodes finish."""
    prompts = [(system_prompt(t, fewshot=fewshot), t) for t in tasks]  # rendered once per task
    queue = sorted(prompts, key=lambda p: len(p[0]) + len(p[1]["request"]))
    queue.reverse()  # pop() takes the shortest first
    live: list[tuple[Episode, float]] = []
    while queue or live:
        while queue and len(live) < batch_size:
            system, task = queue.pop()
            live.append((Episode(task, approver, limits, system=system), time.perf_counter()))
        texts = act_batch(policy, [e for e, _ in live])
        still = []
        for (ep, start), text in zip(live, texts):
            ep.step(text)
            if ep.done:
                if hasattr(policy, "release"):
                    policy.release(ep)
                yield ep.task, ep, time.perf_counter() - start
            else:
                still.append((ep, start))
        live = still
