"""Batched rollouts: many episodes advance through the one runtime.

Tasks are queued shortest prompt first, and the batch is refilled as episodes finish, so
a long episode never holds a slot that shorter ones could use. Two schedules:

- token-level refill, when the policy offers a continuous decoder (the torch backend):
  every step decodes one token for every slot; a turn that ends is handed to its episode
  at once (tool results are instant), and the episode's next turn, or a new episode,
  joins the batch before the next step;
- lock-step by turn otherwise (the MLX backend, the oracle, scripted policies): each
  round, every live episode gets one assistant message from ``policy.act_batch``.

A finished episode leaves the batch and its KV cache is freed.
"""
from __future__ import annotations

import time
from typing import Callable, Iterator

from .prompt import system_prompt
from .records import Task
from .runtime import Episode, Limits, scripted_approver

Finished = tuple[Task, Episode, float]  # task, finished episode, seconds from its start to its end


def act_batch(policy, eps: list[Episode]) -> list[str]:
    if hasattr(policy, "act_batch"):
        return policy.act_batch(eps)
    return [policy.act(e) for e in eps]


def rollout(tasks: list[Task], policy, batch_size: int = 16, fewshot: bool = False,
            approver: Callable = scripted_approver, limits: Limits = Limits()) -> Iterator[Finished]:
    """Yield (task, finished episode, seconds from its start to its end) as episodes finish."""
    prompts = [(system_prompt(t, fewshot=fewshot), t) for t in tasks]  # rendered once per task
    queue = sorted(prompts, key=lambda p: len(p[0]) + len(p[1]["request"]))
    queue.reverse()  # pop() takes the shortest first

    def start() -> tuple[Episode, float]:
        system, task = queue.pop()
        return Episode(task, approver, limits, system=system), time.perf_counter()

    dec = policy.decoder(batch_size) if hasattr(policy, "decoder") else None
    if dec is None:
        yield from _lockstep(policy, queue, start, batch_size)
    else:
        yield from _continuous(policy, dec, queue, start, batch_size)


def _finish(policy, ep: Episode, start: float) -> Finished:
    if hasattr(policy, "release"):
        policy.release(ep)
    return ep.task, ep, time.perf_counter() - start


def _lockstep(policy, queue: list, start: Callable, batch_size: int) -> Iterator[Finished]:
    live: list[tuple[Episode, float]] = []
    while queue or live:
        while queue and len(live) < batch_size:
            live.append(start())
        texts = act_batch(policy, [e for e, _ in live])
        still = []
        for (ep, t0), text in zip(live, texts):
            ep.step(text)
            if ep.done:
                yield _finish(policy, ep, t0)
            else:
                still.append((ep, t0))
        live = still


def _continuous(policy, dec, queue: list, start: Callable, batch_size: int) -> Iterator[Finished]:
    live: dict[int, float] = {}  # id(episode) -> start time
    while queue or live:
        while queue and len(live) < batch_size:
            ep, t0 = start()
            live[id(ep)] = t0
            policy.submit(dec, ep)
        for ep, text in policy.advance(dec):
            ep.step(text)
            if ep.done:
                yield _finish(policy, ep, live.pop(id(ep)))
            else:
                policy.submit(dec, ep)
    if hasattr(dec, "close"):  # free the decoder's buffers; its counters stay for the efficiency record
        dec.close()
