"""Recovery that answers an observed failure: the part of ruler 2 that refuses a timeout or an outage
skipped by luck (issue 37; ruler 1 does not use it yet).

Ruler 1 asks only that every required gold call was answered by the world. Two shortcuts satisfy
it without recovering from anything (experiments/ruler_farming: 36 of 36 and 12 of 12 tasks):
sending a call twice in one turn, so that the copy behind the timed-out one returns; and calling
the declared backup first, so that the primary's outage is never met. A retry is an answer to a
failure the agent saw, so here it counts only in a turn after the failure was observed. The calls
are matched to gold nodes once (``ccl.judge.assignment``, which defines each case exactly), and:

- ``repeated_in_turn:<node>``: two calls given to the same gold node in one turn (a blind retry);
- ``retry_before_failure:<node>``: the task's fault plan times out a tool, and a call of the node
  returned in a turn where a call of that tool timed out that was the node's own or a decoy's (one
  that matches no gold node): the timeout was not yet observed, so the call answers nothing;
- ``fallback_unprompted:<node>``: a call given to a declared fallback node in a turn before the
  primary's tool was observed ``service_unavailable``, or when it never was.
"""
from __future__ import annotations

from ..records import EpisodeRecord, Task
from .assignment import assign
from .criteria import fallback_unprompted, repeated_in_turn, retry_before_failure

RECOVERY_CHECKS = (repeated_in_turn, retry_before_failure, fallback_unprompted)


def recovery_reasons(task: Task, record: EpisodeRecord) -> list[str]:
    """Why the episode's recovery did not answer an observed failure (empty: it did, or none was due)."""
    a = assign(task, record)
    return [r for check in RECOVERY_CHECKS for r in check(task, record, a)]
