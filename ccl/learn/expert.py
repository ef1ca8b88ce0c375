"""The expert that acts from any reachable state (issue 40): the oracle's policy, generalised.

``OraclePolicy`` remembers only the calls it issued itself, so it can drive an episode from the
start but cannot take over one a learner derailed. Here the state is read off the episode itself:
ruler 2's matching (``ccl.judge.assignment.assign``) gives each call the learner made to at most one
gold node, and each node's calls say where the task stands:

- a node is *done* when one of its calls returned ``ok`` (that call's result fills later references);
- *down* when one of its calls met ``service_unavailable`` (its declared fallback takes over);
- *to retry* when its calls only timed out;
- any other outcome of a node's own call ends the task, as it ends the oracle's (``not_found`` and the
  rest: failed; declined: blocked; refused: refused), and so does any call the user declined (blocked).
  A primary that is down stands answered by its fallback's result, so references to it resolve.

The next action is then the oracle's rule on that state: every gold call whose prerequisites hold, a
parallel group always issued whole
in one turn (ruler 2 asks for a turn that holds every member, so a member the learner called alone is
called again beside the others), a retry after a timeout, the fallback after an outage, and the final
answer with the honest status when nothing is left: the oracle's answer template when the status is
the expected one, else a plain statement that the request could not be completed. It never makes a
forbidden call or a call outside the gold graph.

From the oracle's own states this is the oracle's action, byte for byte (tests/test_expert.py).

Whether following the expert still ends in ruler-2 success is a fact about the state, found by
following it: :func:`label` plays the expert to the end on a copy of the episode and judges the result
with ruler 2. A state from which that fails is *unrecoverable*, and the label carries ruler 2's
reasons (often a permanent one: a forbidden or unrequested call, a wrong side effect, a blind retry),
or ``budget`` when the episode ran out of turns or calls first.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..episode.oracle import final_action, gold_call
from ..episode.runtime import Action, Episode, format_action
from ..judge.assignment import assign, is_attempt
from ..judge.ruler2 import judge
from ..records import CallOutcome, DecisionKind, EndReason, GoldNode, Status, Task
from ..replay.decisions import kind_of
from ..world.tools import TOOLS

# Outcomes of a gold node's own call that end the task, and the honest status then.
_NODE_TERMINAL = {CallOutcome.NOT_FOUND: Status.FAILED, CallOutcome.APPROVAL_DENIED: Status.BLOCKED,
                  CallOutcome.DENIED_RETRY: Status.BLOCKED, CallOutcome.PERMISSION_DENIED: Status.REFUSED}
# Outcomes of a gold node's call that leave the task going: a retry after a timeout, the fallback after an outage.
_CONTINUE = (CallOutcome.OK, CallOutcome.TIMEOUT, CallOutcome.SERVICE_UNAVAILABLE)
# Outcomes that end the task whichever call met them: the user declined the tool (a later call of it
# would be a declined retry).
_ANY_TERMINAL = {CallOutcome.APPROVAL_DENIED: Status.BLOCKED, CallOutcome.DENIED_RETRY: Status.BLOCKED}
# Ruler 2's reason when the episode hit a limit before the expert could finish (format: no_final:<end>).
_LIMIT_ENDS = (EndReason.TURN_LIMIT, EndReason.CALL_LIMIT, EndReason.PARSE_ERRORS)


@dataclass
class Progress:
    """Where an episode stands with its task's gold graph (non-forbidden nodes, by id)."""

    # node -> result of its first call that returned ok (a primary that is down: its fallback's), so a
    # prerequisite is met exactly when its id is a key
    done: dict[str, Any] = field(default_factory=dict)
    down: set[str] = field(default_factory=set)  # nodes whose call met service_unavailable
    cocalled: set[str] = field(default_factory=set)  # parallel groups with a turn holding every member
    status: Status | None = None  # a status the observations force (the task has ended), else None


@dataclass(frozen=True)
class Label:
    """The expert's next turn from one state, and what following it achieves."""

    text: str  # the next assistant turn, canonical (format_action)
    kind: DecisionKind  # the decision's kind, as decision-point replay names it
    recoverable: bool  # following the expert from here ends in ruler-2 success
    reasons: tuple[str, ...]  # ruler 2's reasons against the expert's continuation (empty if recoverable)


def progress(task: Task, ep: Episode) -> Progress:
    """Read the gold graph's progress off the episode's calls (ruler 2's matching)."""
    record = ep.record()
    a = assign(task, record)
    calls = record["calls"]
    out = Progress()
    for state in a.nodes:
        outcomes = [calls[i]["outcome"] for i in state.attempts]
        if CallOutcome.OK in outcomes:  # a later failure of a repeat does not undo a step that returned
            out.done[state.id] = calls[state.attempts[outcomes.index(CallOutcome.OK)]]["result"]
            continue
        if CallOutcome.SERVICE_UNAVAILABLE in outcomes:
            out.down.add(state.id)
        # as the oracle: an outcome that is neither a retry (timeout) nor an outage ends the task
        ends = [_NODE_TERMINAL.get(o, Status.FAILED) for o in outcomes if o not in _CONTINUE]
        if ends and out.status is None:
            out.status = ends[0]
    for n in _live(task):  # a primary that is down stands answered by its fallback's result (ruler 2's stand-in)
        if n["fallback_for"] in out.down and n["id"] in out.done:
            out.done.setdefault(n["fallback_for"], out.done[n["id"]])
    for c in calls:
        if c["outcome"] in _ANY_TERMINAL and out.status is None and is_attempt(c):
            out.status = _ANY_TERMINAL[c["outcome"]]
    out.cocalled = _cocalled_groups(task, a.nodes, calls)
    return out


def _cocalled_groups(task: Task, states, calls: list[dict]) -> set[str]:
    turns = {s.id: {calls[i]["turn"] for i in s.attempts} for s in states}
    groups: dict[str, list[str]] = {}
    for n in _live(task):
        if n["group"]:
            groups.setdefault(n["group"], []).append(n["id"])
    return {g for g, members in groups.items() if set.intersection(*(turns.get(m, set()) for m in members))}


def _live(task: Task) -> list[GoldNode]:
    return [n for n in task["gold"]["nodes"] if not n["forbidden"]]


def _ready(task: Task, p: Progress) -> list[GoldNode]:
    """The gold calls to issue now, in gold order: the oracle's readiness rule, plus every parallel group
    no turn has held whole yet (ruler 2 asks for one turn holding every member, so a member the learner
    called alone is called again beside the others; never one with a side effect, which would repeat it)."""
    live = _live(task)
    ready = {n["id"] for n in live if n["id"] not in p.done and n["id"] not in p.down
             and (not n["fallback_for"] or n["fallback_for"] in p.down)
             and all(d in p.done for d in n["deps"])}
    members: dict[str, list[GoldNode]] = {}
    for n in live:
        if n["group"] and n["group"] not in p.cocalled:
            members.setdefault(n["group"], []).append(n)
    for group in members.values():
        startable = all(d in p.done for n in group for d in n["deps"])
        repeats_effect = any(TOOLS[n["tool"]].side_effect and n["id"] in p.done for n in group)
        if startable and not repeats_effect and any(n["id"] not in p.down for n in group):
            ready |= {n["id"] for n in group if n["id"] not in p.down}
    return [n for n in live if n["id"] in ready]


def _decide(task: Task, ep: Episode, p: Progress) -> tuple[Action, list[GoldNode]]:
    """The next action from progress ``p``, and the gold nodes it calls (none for a final answer)."""
    if p.status is not None:
        return final_action(task, p.status, p.done), []
    if any(n["forbidden"] for n in task["gold"]["nodes"]):
        return final_action(task, Status.REFUSED, p.done), []
    ready = _ready(task, p)
    if ready:
        return Action(calls=[gold_call(ep, n, p.done) for n in ready]), ready
    missing = [n for n in _live(task) if n["required"] and n["id"] not in p.done]
    return final_action(task, Status.FAILED if missing else Status.DONE, p.done), []


def next_action(task: Task, ep: Episode) -> Action:
    """The expert's next action from the episode's current state."""
    return _decide(task, ep, progress(task, ep))[0]


def follow(task: Task, ep: Episode) -> Episode:
    """A copy of the episode played to its end by the expert (the original is untouched)."""
    sim = copy.deepcopy(ep)
    while not sim.done:
        sim.step(format_action(next_action(task, sim)))
    return sim


def label(task: Task, ep: Episode) -> Label:
    """The expert's next turn from ``ep``'s state, its decision kind, and whether following it succeeds."""
    if ep.done:
        raise ValueError(f"{task['id']}: the episode has ended; there is no next turn to label")
    action, ready = _decide(task, ep, progress(task, ep))
    end = follow(task, ep)
    verdict = judge(task, end.record())
    reasons = tuple(verdict["reasons"])
    if end.end_reason in _LIMIT_ENDS:
        reasons = ("budget", *reasons)
    return Label(text=format_action(action), kind=kind_of(ep, action.status, ready),
                 recoverable=verdict["success"], reasons=() if verdict["success"] else reasons)
