"""The reward API for the learning issues, computed by the code that judges (ruler 2, issue 37).

Three grains, one judge:

- **sparse**: 1 when the episode succeeds under ruler 2, else 0 (``sparse``);
- **decomposed**: ruler 2's criteria as a vector (1 passed, 0 failed, ``vocabulary.CRITERIA`` order)
  and their weighted sum with ``ccl.judge.ruler2.WEIGHTS`` (``decomposed``): format 0.10, selection
  0.15, arguments 0.15, dependency order 0.10, recovery 0.10, outcome 0.20, answer 0.20. The oracle
  scores 1; an episode that fails any criterion scores below 1, and sparse is 1 exactly when the
  weighted sum is;
- **per decision**: the replay grader's verdict for one action at one decision point of the oracle's
  episode (``decision_reward``), a final answer there judged by ruler 2.

The dense per-turn reward is not here: it needs the expert's reading of any state, and lives with GRPO
(``ccl.learn.grpo``, from ``ccl.learn.turn_grade``) in the form the red team left unfarmed (passes from
recoverable states only, ``experiments/reward_farming``). The field report behind this project (shared
seed 003) found dense per-turn rewards hurt; GRPO's dense arm tests that here. Nothing here raises on
any text a policy can write.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..judge.ruler2 import WEIGHTS, judge
from ..records import EpisodeRecord, ReplayVerdict, Task
from ..replay.decisions import replay_prefix
from ..replay.grading import grade
from ..vocabulary import CRITERIA


@dataclass(frozen=True)
class EpisodeReward:
    sparse: float  # 1.0 or 0.0
    decomposed: float  # weighted sum of the criteria, in [0, 1]
    criteria: tuple[float, ...]  # CRITERIA order, 1.0 passed
    reasons: tuple[str, ...]  # ruler 2's reason codes (empty: success)


def episode_reward(task: Task, record: EpisodeRecord) -> EpisodeReward:
    """All three episode-level readings of one ruler-2 verdict."""
    verdict = judge(task, record)
    vector = tuple(float(verdict["criteria"][c]) for c in CRITERIA)
    weighted = sum(WEIGHTS[c] * v for c, v in zip(CRITERIA, vector))
    return EpisodeReward(float(verdict["success"]), round(weighted, 12), vector, tuple(verdict["reasons"]))


def sparse(task: Task, record: EpisodeRecord) -> float:
    return episode_reward(task, record).sparse


def decomposed(task: Task, record: EpisodeRecord) -> float:
    return episode_reward(task, record).decomposed


def ruler2_success(task: Task, record: EpisodeRecord) -> bool:
    return judge(task, record)["success"]


def decision_reward(task: Task, decision: dict, text: str) -> tuple[float, ReplayVerdict]:
    """1 when ``text``, taken at ``decision`` (a row of ``ccl.replay.decisions.decisions``), is an
    acceptable next action (the replay grader's PASS, with a final answer judged by ruler 2), else 0;
    and the grader's verdict, which says what was wrong."""
    ep, _ = replay_prefix(task, decision)
    verdict = grade(task, decision, ep, text, success=ruler2_success)["verdict"]
    return (1.0 if verdict == ReplayVerdict.PASS else 0.0), verdict
