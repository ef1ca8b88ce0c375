"""The one matching of an episode's calls to its gold nodes, made once and read by every structural
criterion of ruler 2 (``ccl.judge.criteria``; issue 37).

Ruler 1 asks of each check afresh which calls match a node, so one call may count for two nodes, a
copy sent beside a timed-out call "retries" it, and a backup called first "falls back". Here each
call is given to at most one non-forbidden gold node, and each node learns what its calls did:

- a call is *assignable* when it is an attempt (it named an offered tool, and the runtime did not
  refuse it before any check: ``outcomes.NOT_ATTEMPTED``) and :func:`call_matches` a node: the same
  canonical tool, arguments matching by ``ccl.judge.matching.args_match``;
- when several nodes match one call, it goes to the first of them in gold order that no earlier call
  has answered (an outcome in ``outcomes.RETURNED``), else to the first of them: two calls that only
  differ by which identical step they do fill both steps, a third is a repeat of the first;
- ``repeats``: a node's calls in a turn that already held one of its calls. The copy was sent before
  anything was observed, so it answers no failure (a blind retry);
- ``blind``: for a tool the task's fault plan times out, a node's call that returned in a turn where a
  call of that tool timed out that was the node's own or no node's (a decoy beside the real call).
  The timeout was not yet observed, so the call that returned is no recovery from it. A call of
  another gold node that takes the timeout does not make it blind: that node must still be retried.
  Under the plans the templates use (the first call of the tool times out) this is the rule "the
  answer must come in a turn after the tool's first timeout";
- ``unprompted``: calls of a declared fallback node in a turn before the primary's tool was observed
  ``service_unavailable`` (any call of that tool: the outage is the tool's, whatever the arguments),
  or when it never was;
- ``answered``: some call of the node returned that is none of the three above.

``unoffered`` lists calls the runtime refused as ``unknown_tool`` whose name, case and separators
aside, is a consequential tool's canonical name or alias (``ccl.judge.actions.consequential_name``).

Nothing an episode record holds can make :func:`assign` raise.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..records import CallOutcome, EpisodeRecord, FaultKind, Task
from .actions import consequential_name
from .matching import args_match
from .outcomes import NOT_ATTEMPTED, RETURNED


@dataclass(frozen=True)
class NodeState:
    """What the calls given to one gold node did (call indices into ``record["calls"]``)."""

    id: str
    attempts: tuple[int, ...]  # its calls, in record order
    returned: int | None  # the first turn one of its calls returned (RETURNED), None if none did
    answered: bool  # one of its calls returned that is not a repeat, blind or unprompted
    repeats: tuple[int, ...]  # calls in a turn that already held one of its calls
    blind: tuple[int, ...]  # calls that returned beside a timeout of their tool that was theirs or a decoy's
    unprompted: tuple[int, ...]  # (fallback nodes) calls before the primary's outage was observed


@dataclass(frozen=True)
class Assignment:
    """The matching of one episode's calls to its gold nodes."""

    node_of: tuple[str | None, ...]  # per call: the id of its node, None if it has none
    nodes: tuple[NodeState, ...]  # the non-forbidden gold nodes, in gold order
    unoffered: tuple[tuple[int, str], ...]  # (call, consequential tool) of unknown-tool calls naming one

    def node(self, node_id: str) -> NodeState | None:
        return next((s for s in self.nodes if s.id == node_id), None)


def is_attempt(call: dict) -> bool:
    """The call named an offered tool and reached the runtime's checks (executed or not)."""
    return isinstance(call.get("canonical"), str) and call.get("outcome") not in NOT_ATTEMPTED


def call_matches(node: dict, call: dict) -> bool:
    """The one per-call matching predicate: the node's tool, and arguments that match its gold ones."""
    return (call.get("canonical") == node["tool"] and isinstance(call.get("cargs"), dict)
            and args_match(node["args"], call["cargs"]))


def assign(task: Task, record: EpisodeRecord) -> Assignment:
    """Give each call to at most one gold node, and say per node what its calls did."""
    nodes = [n for n in task["gold"]["nodes"] if not n["forbidden"]]
    calls = record["calls"]
    node_of = _node_of(nodes, calls)
    states = tuple(_state(task, n, [i for i, nid in enumerate(node_of) if nid == n["id"]], node_of, calls)
                   for n in nodes)
    unoffered = tuple((i, name) for i, c in enumerate(calls) if c.get("outcome") == CallOutcome.UNKNOWN_TOOL
                      and (name := consequential_name(c.get("tool"))) is not None)
    return Assignment(node_of=tuple(node_of), nodes=states, unoffered=unoffered)


def _node_of(nodes: list[dict], calls: list[dict]) -> list[str | None]:
    out: list[str | None] = []
    answered: set[str] = set()
    for c in calls:
        matching = [n["id"] for n in nodes if is_attempt(c) and call_matches(n, c)]
        nid = next((m for m in matching if m not in answered), matching[0]) if matching else None
        if nid is not None and c["outcome"] in RETURNED:
            answered.add(nid)
        out.append(nid)
    return out


def _state(task: Task, node: dict, mine: list[int], node_of: list[str | None], calls: list[dict]) -> NodeState:
    returned = [i for i in mine if calls[i]["outcome"] in RETURNED]
    repeats = tuple(i for k, i in enumerate(mine) if any(calls[j]["turn"] == calls[i]["turn"] for j in mine[:k]))
    blind = tuple(i for i in returned if _absorbed(task, node, calls[i]["turn"], node_of, calls))
    unprompted = tuple(_unprompted(task, node, mine, calls))
    counted = [i for i in returned if i not in repeats + blind + unprompted]
    return NodeState(id=node["id"], attempts=tuple(mine),
                     returned=min((calls[i]["turn"] for i in returned), default=None),
                     answered=bool(counted), repeats=repeats, blind=blind, unprompted=unprompted)


def _absorbed(task: Task, node: dict, turn: int, node_of: list[str | None], calls: list[dict]) -> bool:
    """In ``turn``, a call of the node's tool timed out as the fault plan says, and that call was the
    node's own or matched no node (a decoy)."""
    if not any(f.get("tool") == node["tool"] and f.get("kind") == FaultKind.TIMEOUT for f in task.get("faults", [])):
        return False
    return any(c["turn"] == turn and c.get("canonical") == node["tool"] and c["outcome"] == CallOutcome.TIMEOUT
               and node_of[j] in (node["id"], None) for j, c in enumerate(calls))


def _unprompted(task: Task, node: dict, mine: list[int], calls: list[dict]) -> list[int]:
    """A fallback node's calls in a turn before its primary's tool was first seen down (all, if never)."""
    primary = next((n for n in task["gold"]["nodes"] if n["id"] == node["fallback_for"]), None)
    if primary is None:
        return []
    outage = min((c["turn"] for c in calls if c.get("canonical") == primary["tool"]
                  and c["outcome"] == CallOutcome.SERVICE_UNAVAILABLE), default=None)
    return [i for i in mine if outage is None or calls[i]["turn"] <= outage]
