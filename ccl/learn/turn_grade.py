"""The grade of one assistant turn taken from any state (issue 41): the dense reward's per-turn signal
and the test that makes a student's action a DPO pair's rejected side.

Decision-point replay grades an action only at the oracle's own decision points. A learner's episode
leaves that path after its first mistake, and from there only the expert (``ccl.learn.expert``) can
say what a turn was worth, by following it: the expert's *distance to go* from a state is the number
of turns it takes to end the episode from there, and the state is *recoverable* when that ending is a
success under the ruler. A turn passes when

- it ends the episode and the ruler passes the episode, or
- the state after it is recoverable and strictly closer to the end than the state before it, and one
  of its calls is matched to a gold step by the assignment of calls to gold steps.

The second clause is what keeps the grade from paying for nothing: a turn that leaves a recoverable
state no closer to done (a harmless repeat, a read the task never needed, one member of a parallel
group called alone) fails, so a policy cannot collect passing turns by stalling until the budget runs
out. The expert's own turn always passes from a recoverable state (the world is deterministic, so
following it takes one turn off the distance), and so does any other turn that buys the same progress
(for example independent calls in another order). The match is needed because progress can be bought
from the world's hidden state: the fault plan times out a tool's first call whatever its arguments, so
a decoy call with a wrong argument would take the timeout and shorten the expert's path (found by the
red team, ``experiments/reward_farming``).

From a state that is already unrecoverable nothing written can end well, and the expert, which does not
know its earlier calls were wrong, would carry on with the task (a second refund after a wrong one). There
only a final answer with the honest status passes (any wording): the status the expert would stop with
when that is not ``done``, else the status the observations force, else ``failed``. So the signal teaches
the honest stop and never pays for acting on in a lost episode.

The ruler is a parameter (``ccl.judge.rulers``): ruler 3 by default (issue 57), ruler 2 for the runs
published before it. Under ruler 3 a turn that carries a repeat of an answered call
(``ccl.judge.ruler3.calls.repeat_calls``) earns nothing, even beside a needed call: the ride-along kind
the red team found ruler 2's grade paying for (``why``: ``repeat``).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from ..episode.runtime import Episode, parse_action
from ..judge.assignment import assign
from ..judge.ruler3.calls import repeat_calls
from ..judge.rulers import judge_by
from ..records import Status, Task
from ..vocabulary import RULER3
from .expert import follow, next_action, progress


@dataclass(frozen=True)
class ToGo:
    """What following the expert from a state achieves."""

    turns: int  # assistant turns the expert takes to end the episode
    success: bool  # the ending passes the ruler


@dataclass(frozen=True)
class TurnGrade:
    passed: bool
    why: str  # succeeded | progress | no_progress | lost | ended_failed | honest_stop | not_honest_stop | repeat
    to_go_before: int
    to_go_after: int  # 0 when the turn ended the episode
    recoverable: bool  # the state before the turn


def to_go(task: Task, ep: Episode, ruler: str = RULER3) -> ToGo:
    """Follow the expert from ``ep``'s state (a copy) and count its turns."""
    end = follow(task, ep)
    return ToGo(turns=len(end.turns) - len(ep.turns), success=judge_by(ruler)(task, end.record())["success"])


def honest_status(task: Task, ep: Episode) -> Status:
    """The status an honest final answer has at an unrecoverable state (see the module's docstring)."""
    action = next_action(task, ep)
    if action.status is not None and action.status != Status.DONE:
        return action.status
    return progress(task, ep).status or Status.FAILED


def grade_turn(task: Task, ep: Episode, text: str, ruler: str = RULER3) -> TurnGrade:
    """Grade ``text`` as the next assistant turn of ``ep`` (which is left untouched) under ``ruler``."""
    if ep.done:
        raise ValueError(f"{task['id']}: the episode has ended; there is no next turn to grade")
    judge = judge_by(ruler)
    before = to_go(task, ep, ruler)
    if not before.success:
        action, _, _ = parse_action(text)
        ok = action is not None and action.status is not None and action.status == honest_status(task, ep)
        return TurnGrade(ok, "honest_stop" if ok else "not_honest_stop", before.turns, before.turns, False)
    sim = copy.deepcopy(ep)
    sim.step(text)
    if ruler == RULER3 and _repeats(task, sim, len(ep.turns)):
        return TurnGrade(False, "repeat", before.turns, before.turns, True)
    if sim.done:
        ok = judge(task, sim.record())["success"]
        return TurnGrade(ok, "succeeded" if ok else "ended_failed", before.turns, 0, True)
    after = to_go(task, sim, ruler)
    if not after.success:
        return TurnGrade(False, "lost", before.turns, after.turns, True)
    ok = after.turns < before.turns and _calls_gold(task, sim, len(ep.turns))
    return TurnGrade(ok, "progress" if ok else "no_progress", before.turns, after.turns, True)


def _repeats(task: Task, ep: Episode, turn: int) -> bool:
    """Whether turn ``turn`` holds a call repeating one the world had already answered (ruler 3's rule)."""
    record = ep.record()
    return any(record["calls"][i]["turn"] == turn for i in repeat_calls(record, assign(task, record)))


def _calls_gold(task: Task, ep: Episode, turn: int) -> bool:
    """Whether the assignment gives one of turn ``turn``'s calls to a gold step."""
    record = ep.record()
    return any(record["calls"][i]["turn"] == turn for node in assign(task, record).nodes for i in node.attempts)
