"""The oracle: a programmatic policy that reads the gold graph and reacts to real observations.

Each turn it issues every gold call whose prerequisites have returned (so independent
calls go out together, in parallel), filling dependent arguments from the observed
results. It retries a timeout, switches to the declared fallback on
service_unavailable, reports a missing entity (status failed), stops after a denied
approval (blocked), refuses calls the role forbids (refused) and answers when done.
It is the source of config-C data and the validator's ceiling; it is not a model.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from ..records import CallOutcome, GoldNode, Status, Task
from ..world.tasks import resolve
from .runtime import Action, Episode, format_action

# Call outcomes that end the task, and the status the oracle then reports; any outcome
# not handled in _absorb and not listed here also ends it, as failed.
_TERMINAL = {CallOutcome.NOT_FOUND: Status.FAILED, CallOutcome.APPROVAL_DENIED: Status.BLOCKED,
             CallOutcome.DENIED_RETRY: Status.BLOCKED, CallOutcome.PERMISSION_DENIED: Status.REFUSED}


class NodeState(enum.StrEnum):
    """Where the oracle stands with one gold node (a node not yet called has no state)."""

    DONE = "done"  # its call returned a result
    RETRY = "retry"  # its call timed out; call it again
    DOWN = "down"  # its service is unavailable; its fallback node takes over


@dataclass
class OracleState:
    """The oracle's memory of one episode (``OraclePolicy.memory``), handed back to it every turn."""

    nodes: dict[str, NodeState] = field(default_factory=dict)  # gold node id -> state
    results: dict[str, Any] = field(default_factory=dict)  # gold node id -> its observed result
    pending: list[str] = field(default_factory=list)  # ids of last turn's calls, in call order


def gold_call(ep: Episode, n: GoldNode, results: dict[str, Any]) -> dict:
    """Gold node ``n`` as a call in the episode's surface names, references resolved from ``results``
    (gold node id -> its observed result)."""
    args = {}
    for k, g in n["args"].items():
        if "refs" in g:
            v = [resolve(r, results) for r in g["refs"]]
        elif "ref" in g:
            v = resolve(g["ref"], results)
        else:
            v = g.get("say", g["value"])
        args[k] = v
    return {"tool": ep.catalogue.surface(n["tool"]),
            "args": ep.catalogue.args_to_surface(n["tool"], args)}


def final_action(task: Task, status: Status, results: dict[str, Any]) -> Action:
    """The final answer: the task's answer template filled from ``results`` when ``status`` is the expected
    one, else an honest statement that the request could not be completed. A state where the template's
    results were never observed (reachable only off the oracle's own path) gets the statement too."""
    ans = task["answer"]
    if status == task["expected_status"]:
        try:
            values = {k: _fmt(resolve(path, results)) for k, path in ans["refs"].items()}
            return Action(final=ans["template"].format(**values), status=status)
        except (KeyError, IndexError, StopIteration, TypeError, ValueError):
            pass
    return Action(final=f"I could not complete the request (status: {status}).", status=status)


def _fmt(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_fmt(v) for v in value)
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)


class OraclePolicy:
    name = "oracle"

    def memory(self) -> OracleState:
        return OracleState()

    def act(self, ep: Episode, st: OracleState) -> str:
        return format_action(self.decide(ep, st))

    def act_batch(self, eps: list[Episode], states: list[OracleState]) -> list[str]:
        return [self.act(ep, st) for ep, st in zip(eps, states)]

    def decide(self, ep: Episode, st: OracleState) -> Action:
        """The next action, updating ``st`` (the episode's memory) with last turn's results."""
        nodes = ep.task["gold"]["nodes"]
        outcome = self._absorb(ep, st)
        if outcome is not None:
            return final_action(ep.task, outcome, st.results)
        if any(n["forbidden"] for n in nodes):
            return final_action(ep.task, Status.REFUSED, st.results)
        ready = [n for n in nodes if self._ready(n, st.nodes)]
        if not ready:
            return final_action(ep.task, Status.DONE, st.results)
        st.pending = [n["id"] for n in ready]
        return Action(calls=[gold_call(ep, n, st.results) for n in ready])

    @staticmethod
    def _absorb(ep: Episode, st: OracleState) -> Status | None:
        """Read the results of the calls issued last turn; a terminal status if one ended the task."""
        if not st.pending:
            return None
        last = ep.turns[-1]["calls"]
        terminal = None
        for nid, ci in zip(st.pending, last):
            rec = ep.calls[ci]
            kind = rec["outcome"]
            if kind == CallOutcome.OK:
                st.nodes[nid], st.results[nid] = NodeState.DONE, rec["result"]
            elif kind == CallOutcome.TIMEOUT:
                st.nodes[nid] = NodeState.RETRY
            elif kind == CallOutcome.SERVICE_UNAVAILABLE:
                st.nodes[nid] = NodeState.DOWN
            else:
                terminal = _TERMINAL.get(kind, Status.FAILED)
        st.pending = []
        return terminal

    @staticmethod
    def _ready(n: GoldNode, nodes: dict[str, NodeState]) -> bool:
        if n["forbidden"] or nodes.get(n["id"]) in (NodeState.DONE, NodeState.DOWN):
            return False
        if n["fallback_for"] and nodes.get(n["fallback_for"]) != NodeState.DOWN:
            return False
        return all(nodes.get(d) == NodeState.DONE for d in n["deps"])
