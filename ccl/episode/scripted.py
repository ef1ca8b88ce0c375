"""Scripted play: an episode driven by given assistant turns instead of a policy, and the oracle's own
turns to start from. The red team (``experiments/ruler_farming/redteam``), the reward-farming
measurement (``ccl.learn.farming``) and tests build episodes this way, so the world answers a
scripted call exactly as it would answer a learner's."""
from __future__ import annotations

import json

from ..records import EpisodeRecord, Task
from .oracle import OraclePolicy
from .runtime import Episode, parse_action


def oracle_turns(task: Task) -> list[str]:
    """The oracle's assistant turns on ``task``, in order."""
    ep, oracle = Episode(task), OraclePolicy()
    memory = oracle.memory()
    turns = []
    while not ep.done:
        turns.append(oracle.act(ep, memory))
        ep.step(turns[-1])
    return turns


def play(task: Task, turns: list[str]) -> EpisodeRecord:
    """``turns`` stepped through a fresh episode (turns after its end are ignored)."""
    ep = Episode(task)
    for text in turns:
        if ep.done:
            break
        ep.step(text)
    return ep.record()


def final_turn(answer: str, status: str) -> str:
    return json.dumps({"final": answer, "status": status}, ensure_ascii=False)


def with_answer(task: Task, turns: list[str], answer: str) -> list[str]:
    """The oracle's turns with the last (final) one answering ``answer`` under the same status."""
    action, _, _ = parse_action(turns[-1])
    return [*turns[:-1], final_turn(answer, action.status)]
