"""The reward API for the learning issues, computed by the code that judges: ruler 3 by default (issue 57),
ruler 2 where a published run used it (``ruler=RULER2``; ``ccl.judge.rulers``).

Three grains, one judge:

- **sparse**: 1 when the episode succeeds under the ruler, else 0 (``sparse``);
- **decomposed**: the ruler's criteria as a vector (1 passed, 0 failed, ``vocabulary.CRITERIA`` order)
  and their weighted sum with ``ccl.judge.codes.WEIGHTS`` (``decomposed``): format 0.10, selection
  0.15, arguments 0.15, dependency order 0.10, recovery 0.10, outcome 0.20, answer 0.20. The oracle
  scores 1; an episode that fails any criterion scores below 1, and sparse is 1 exactly when the
  weighted sum is;
- **per decision**: the replay grader's verdict for one action at one decision point of the oracle's
  episode (``decision_reward``), a final answer there judged by ruler 3.

The dense per-turn reward is not here: it needs the expert's reading of any state, and lives with GRPO
(``ccl.learn.grpo``, from ``ccl.learn.turn_grade``) in the form the red team left unfarmed (passes from
recoverable states only, ``experiments/reward_farming``). The field report behind this project (shared
seed 003) found dense per-turn rewards hurt; GRPO's dense arm tests that here. Nothing here raises on
any text a policy can write.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..judge.codes import WEIGHTS
from ..judge.rulers import judge_by
from ..records import EpisodeRecord, ReplayVerdict, Task
from ..replay.decisions import replay_prefix
from ..replay.grading import grade
from ..vocabulary import CRITERIA, RULER2, RULER3


@dataclass(frozen=True)
class EpisodeReward:
    sparse: float  # 1.0 or 0.0
    decomposed: float  # weighted sum of the criteria, in [0, 1]
    criteria: tuple[float, ...]  # CRITERIA order, 1.0 passed
    reasons: tuple[str, ...]  # the ruler's reason codes (empty: success)


def episode_reward(task: Task, record: EpisodeRecord, ruler: str = RULER3) -> EpisodeReward:
    """All three episode-level readings of one verdict of ``ruler``."""
    verdict = judge_by(ruler)(task, record)
    vector = tuple(float(verdict["criteria"][c]) for c in CRITERIA)
    weighted = sum(WEIGHTS[c] * v for c, v in zip(CRITERIA, vector))
    return EpisodeReward(float(verdict["success"]), round(weighted, 12), vector, tuple(verdict["reasons"]))


def sparse(task: Task, record: EpisodeRecord, ruler: str = RULER3) -> float:
    return episode_reward(task, record, ruler).sparse


def decomposed(task: Task, record: EpisodeRecord, ruler: str = RULER3) -> float:
    return episode_reward(task, record, ruler).decomposed


def ruler2_success(task: Task, record: EpisodeRecord) -> bool:
    """Ruler 2's success: what the published error-driven round graded by (``ccl.learn.errors``)."""
    return judge_by(RULER2)(task, record)["success"]


def ruler3_success(task: Task, record: EpisodeRecord) -> bool:
    return judge_by(RULER3)(task, record)["success"]


def decision_reward(task: Task, decision: dict, text: str) -> tuple[float, ReplayVerdict]:
    """1 when ``text``, taken at ``decision`` (a row of ``ccl.replay.decisions.decisions``), is an
    acceptable next action (the replay grader's PASS, with a final answer judged by ruler 3), else 0;
    and the grader's verdict, which says what was wrong."""
    ep, _ = replay_prefix(task, decision)
    verdict = grade(task, decision, ep, text, success=ruler3_success)["verdict"]
    return (1.0 if verdict == ReplayVerdict.PASS else 0.0), verdict
