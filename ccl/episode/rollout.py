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
from typing import Any, Callable, Iterator, NamedTuple

from ..records import Task
from .prompt import system_prompt
from .runtime import Episode, Limits, fresh_memory, scripted_approver


class Finished(NamedTuple):
    """A finished episode, the policy's memory of it (token counts for a model) and the seconds
    from its start to its end."""

    task: Task
    episode: Episode
    memory: Any
    seconds: float


class _Live(NamedTuple):
    episode: Episode
    memory: Any
    start: float


def act_batch(policy, eps: list[Episode], memories: list[Any]) -> list[str]:
    """One turn for each episode, with the policy's memory of it."""
    if hasattr(policy, "act_batch"):
        return policy.act_batch(eps, memories)
    return [policy.act(e, m) for e, m in zip(eps, memories)]


def rollout(tasks: list[Task], policy, batch_size: int = 16, fewshot: bool = False,
            approver: Callable = scripted_approver, limits: Limits = Limits()) -> Iterator[Finished]:
    """Yield each episode as it finishes (see :class:`Finished`)."""
    prompts = [(system_prompt(t, fewshot=fewshot), t) for t in tasks]  # rendered once per task
    queue = sorted(prompts, key=lambda p: len(p[0]) + len(p[1]["request"]))
    queue.reverse()  # pop() takes the shortest first

    def start() -> _Live:
        system, task = queue.pop()
        return _Live(Episode(task, approver, limits, system=system), fresh_memory(policy), time.perf_counter())

    dec = policy.decoder(batch_size) if hasattr(policy, "decoder") else None
    if dec is None:
        yield from _lockstep(policy, queue, start, batch_size)
    else:
        yield from _continuous(policy, dec, queue, start, batch_size)


def _finish(policy, live: _Live) -> Finished:
    if hasattr(policy, "release"):
        policy.release(live.memory)
    return Finished(live.episode.task, live.episode, live.memory, time.perf_counter() - live.start)


def _lockstep(policy, queue: list, start: Callable[[], _Live], batch_size: int) -> Iterator[Finished]:
    live: list[_Live] = []
    while queue or live:
        while queue and len(live) < batch_size:
            live.append(start())
        texts = act_batch(policy, [lv.episode for lv in live], [lv.memory for lv in live])
        still = []
        for lv, text in zip(live, texts):
            lv.episode.step(text)
            if lv.episode.done:
                yield _finish(policy, lv)
            else:
                still.append(lv)
        live = still


def _continuous(policy, dec, queue: list, start: Callable[[], _Live], batch_size: int) -> Iterator[Finished]:
    live: dict[int, _Live] = {}  # id(episode) -> its live entry
    while queue or live:
        while queue and len(live) < batch_size:
            lv = start()
            live[id(lv.episode)] = lv
            policy.submit(dec, lv.episode, lv.memory)
        for ep, memory, text in policy.advance(dec):
            ep.step(text)
            if ep.done:
                yield _finish(policy, live.pop(id(ep)))
            else:
                policy.submit(dec, ep, memory)
    if hasattr(dec, "close"):  # free the decoder's buffers; its counters stay for the efficiency record
        dec.close()
