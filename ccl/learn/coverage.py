"""How far the expert reaches: from every state a scripted deviation leads to, does following the
expert still end in ruler-2 success, and when not, is the state provably lost?

A state is *provably lost* when its calls already hold a ruler-2 failure that nothing later can undo
(``permanent_reasons``): every such check reads only calls already made, so no continuation removes
it. The expert's promise, checked here and in tests/test_expert.py, is that it loses a state only
when the state is provably lost or the episode's limits leave too few turns (``budget``).
"""
from __future__ import annotations

import copy
import random
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Iterator

from ..episode.runtime import Episode, format_action
from ..judge.assignment import assign
from ..judge.criteria import structural_reasons
from ..judge.effects import match_one_to_one
from ..records import CallOutcome, Task
from .deviations import DEVIATIONS
from .expert import label, next_action

# Structural reasons that, once a prefix has them, every continuation keeps: each reads calls already
# made (a forbidden, refused, declined or unrequested call; an undercutting argument; a call before its
# prerequisite returned; two calls of a step in one turn; a blind retry; an unprompted fallback).
PERMANENT = ("forbidden_attempt", "permission_violation", "denied_retry", "unrequested_action",
             "undercutting_argument", "dependency_unsafe", "repeated_in_turn", "retry_before_failure",
             "fallback_unprompted", "calls_on_no_tool_task")


def permanent_reasons(task: Task, ep: Episode) -> list[str]:
    """The failures of ``ep``'s prefix that no continuation can undo (empty: none)."""
    found = [r for r in structural_reasons(task, ep.record()) if r.split(":", 1)[0] in PERMANENT]
    if ep.effects and not _effects_can_still_match(task, ep.effects):
        found.append("side_effects_mismatch")  # an effect the task does not expect cannot be taken back
    return found + _approvals_spent(task, ep)


def _approvals_spent(task: Task, ep: Episode) -> list[str]:
    """Tools the user declined before any call of a required gold step that uses them: the step's call
    can now only be a declined retry (``denied_retry``) or missing (``gold_call_missing``)."""
    record = ep.record()
    a = assign(task, record)
    declined = {c["canonical"] for c in record["calls"] if c["outcome"] == CallOutcome.APPROVAL_DENIED}
    return [f"approval_spent:{n['tool']}" for n in task["gold"]["nodes"]
            if n["required"] and not n["forbidden"] and n["tool"] in declined
            and not a.node(n["id"]).attempts]


def _effects_can_still_match(task: Task, effects: list[dict]) -> bool:
    """Every effect so far matches a distinct expected one (more may come; none can be removed)."""
    expected = task["expected_side_effects"]
    return len(effects) <= len(expected) and any(
        match_one_to_one(subset, effects) for subset in _subsets(expected, len(effects)))


def _subsets(items: list, k: int) -> Iterator[list]:
    for idx in combinations(range(len(items)), k):
        yield [items[i] for i in idx]


@dataclass(frozen=True)
class Probe:
    """One deviated state and what following the expert from it gives."""

    task_id: str
    template: str
    family: str
    deviation: str
    turn: int  # the oracle turn the deviation replaced
    ended: bool  # the deviation ended the episode (a premature stop): no state left to act from
    recoverable: bool  # following the expert succeeds under ruler 2
    reasons: tuple[str, ...]  # ruler 2's reasons against the expert's continuation
    permanent: tuple[str, ...]  # failures of the deviated prefix no continuation can undo


def probes(task: Task, seed: int = 0) -> Iterator[Probe]:
    """Every deviation at every oracle decision of ``task``, and the expert's result from there."""
    ep = Episode(task)
    turn = 0
    while not ep.done:
        action = next_action(task, ep)
        for name, deviate in DEVIATIONS.items():
            text = deviate(ep, action, random.Random(f"deviation|{task['id']}|{turn}|{name}|{seed}"))
            if text is not None:
                yield _probe(task, ep, name, turn, text)
        ep.step(format_action(action))
        turn += 1


def _probe(task: Task, ep: Episode, name: str, turn: int, text: str) -> Probe:
    dev = copy.deepcopy(ep)
    dev.step(text)
    common = dict(task_id=task["id"], template=task["template"], family=task["family"], deviation=name, turn=turn)
    if dev.done:
        return Probe(**common, ended=True, recoverable=False, reasons=(), permanent=())
    lab = label(task, dev)
    return Probe(**common, ended=False, recoverable=lab.recoverable, reasons=lab.reasons,
                 permanent=tuple(permanent_reasons(task, dev)))


def coverage_table(found: list[Probe]) -> dict:
    """Per template family and per deviation: states reached, recovered by the expert, provably lost
    (with the first permanent reason of each), and deviations that ended the episode."""
    def tally(ps: list[Probe]) -> dict:
        live = [p for p in ps if not p.ended]
        lost = [p for p in live if not p.recoverable]
        return {"states": len(live), "recovered": len(live) - len(lost), "lost": len(lost),
                "recovered_share": round((len(live) - len(lost)) / len(live), 4) if live else None,
                "lost_for": dict(sorted(Counter(p.permanent[0].split(":")[0] for p in lost if p.permanent).items())),
                "lost_unexplained": sum(not p.permanent for p in lost), "ended": len(ps) - len(live)}

    families = sorted({p.family for p in found})
    deviations = sorted({p.deviation for p in found})
    return {"all": tally(found),
            "by_family": {f: tally([p for p in found if p.family == f]) for f in families},
            "by_deviation": {d: tally([p for p in found if p.deviation == d]) for d in deviations}}
