"""C at a chosen scale: a seeded draw of the training pool's oracle episodes (issue 58).

The first study's C is the oracle on a draw of the tasks offered to the teacher (``variants``); the
scaled C needs no teacher and may hold up to the whole pool. Two samplers: ``uniform`` (a shuffle of
the pool, cut at the budget) and ``balanced`` (the same shuffle dealt round-robin over the eight
families, so each family has an equal share while its pool lasts: the pool holds 125 approval episodes
against 750 chain ones, and a uniform draw of 128 held 4 approval episodes). Draws are nested: a smaller
budget's episodes are the first ones of a larger budget's, in the same order.
"""
from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import Literal

from ..errors import StageError
from ..world.tasks.base import FAMILIES

SAMPLERS = ("uniform", "balanced")


@dataclass(frozen=True)
class ScaledCConfig:
    """The scaled C's draw; the defaults are the cpu-scale profile's (experiments/c_scale)."""

    budget: int = 1000  # oracle episodes
    sampler: Literal[SAMPLERS] = "balanced"
    seed: int = 0

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler {self.sampler!r} is not one of {', '.join(SAMPLERS)}")
        if self.budget < 1:
            raise ValueError(f"budget {self.budget}: expected at least one episode")


class ScaledDrawError(StageError, ValueError):
    """A pool that cannot give the draw asked for; the message says what is short."""


def draw(rows: list[dict], cfg: ScaledCConfig) -> list[dict]:
    """``cfg.budget`` of ``rows`` (oracle SFT rows of the training pool, in pool order)."""
    if cfg.budget > len(rows):
        raise ScaledDrawError(f"budget {cfg.budget}: the pool has only {len(rows)} oracle episodes")
    order = rows[:]
    random.Random(cfg.seed).shuffle(order)
    return order[: cfg.budget] if cfg.sampler == "uniform" else deal(order, cfg.budget)


def deal(order: list[dict], budget: int) -> list[dict]:
    """Round-robin over ``FAMILIES``, each family's episodes in ``order``'s order; a family whose
    episodes run out drops out of the rotation."""
    if budget > len(order):
        raise ScaledDrawError(f"budget {budget}: only {len(order)} episodes to deal")
    queues = {f: deque(r for r in order if r["family"] == f) for f in FAMILIES}
    unknown = {r["family"] for r in order} - set(queues)
    if unknown:
        raise ScaledDrawError(f"oracle rows of unknown families {sorted(unknown)}; known: {', '.join(FAMILIES)}")
    out: list[dict] = []
    while len(out) < budget:
        for family in FAMILIES:
            if queues[family] and len(out) < budget:
                out.append(queues[family].popleft())
    return out


def fresh_tasks(tasks: list[dict], oracle_rows: list[dict], cfg: ScaledCConfig) -> list[dict]:
    """The training pool's tasks outside C's draw (``cfg``), in the order the same draw continues past
    ``cfg.budget`` (issue 59: the learning arms take their tasks from the front, so none learns from a task
    C trained on, and C+'s extra oracle episodes are the first of them). ``oracle_rows``: the pool's oracle
    episodes, one per task, in pool order."""
    whole = draw(oracle_rows, ScaledCConfig(len(oracle_rows), cfg.sampler, cfg.seed))
    by_id = {t["id"]: t for t in tasks}
    unknown = [r["task_id"] for r in whole if r["task_id"] not in by_id]
    if unknown or len(by_id) != len(whole):
        raise ScaledDrawError(f"the oracle episodes and the training tasks differ: {len(whole)} episodes for "
                              f"{len(by_id)} tasks, {len(unknown)} episodes of unknown tasks (e.g. {unknown[:1]})")
    return [by_id[r["task_id"]] for r in whole[cfg.budget:]]
