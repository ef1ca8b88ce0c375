"""Recovery that answers an observed failure: the part of ruler 2 that refuses a timeout or an outage
skipped by luck (issue 37; ruler 1 does not use it yet).

Ruler 1 asks only that every required gold call was answered by the world. Two shortcuts satisfy
it without recovering from anything (experiments/ruler_farming: 36 of 36 and 12 of 12 tasks):
sending a call twice in one turn, so that the copy behind the timed-out one returns; and calling
the declared backup first, so that the primary's outage is never met. A retry is an answer to a
failure the agent saw, so here it counts only in a turn after the failure was observed:

- ``repeated_in_turn:<node>``: two calls matching the same gold node in one turn (a blind retry);
- ``retry_before_failure:<node>``: the task's fault plan times out a tool, and the node's first call
  that the world answered came in the turn of the tool's first timeout or before it (a decoy call of
  the same tool that takes the timeout beside the real one is no recovery either);
- ``fallback_unprompted:<node>``: a call matching a declared fallback node in a turn before the
  primary's ``service_unavailable`` was observed, or when the primary was never called.
"""
from __future__ import annotations

from collections import Counter

from ..records import CallOutcome, EpisodeRecord, FaultKind, Task
from .matching import args_match
from .validate import RETURNED


def _turns_of(node: dict, record: EpisodeRecord) -> list[tuple[int, str]]:
    """(turn, outcome) of every call that named an offered tool and matches ``node``."""
    return [(c["turn"], c["outcome"]) for c in record["calls"]
            if c.get("canonical") == node["tool"] and isinstance(c.get("cargs"), dict)
            and args_match(node["args"], c["cargs"])]


def _first_timeouts(task: Task, record: EpisodeRecord) -> dict[str, int]:
    """Tool -> the turn of its first timed-out call, for the tools the fault plan times out."""
    planned = {f["tool"] for f in task["faults"] if f["kind"] == FaultKind.TIMEOUT}
    out: dict[str, int] = {}
    for c in record["calls"]:
        if c.get("canonical") in planned and c["outcome"] == CallOutcome.TIMEOUT:
            out.setdefault(c["canonical"], c["turn"])
    return out


def recovery_reasons(task: Task, record: EpisodeRecord) -> list[str]:
    """Why the episode's recovery did not answer an observed failure (empty: it did, or none was due)."""
    nodes = {n["id"]: n for n in task["gold"]["nodes"] if not n["forbidden"]}
    first_timeout = _first_timeouts(task, record)
    reasons = []
    for nid, node in nodes.items():
        per_turn = Counter(turn for turn, _ in _turns_of(node, record))
        if any(k > 1 for k in per_turn.values()):
            reasons.append(f"repeated_in_turn:{nid}")
        answered = [turn for turn, outcome in _turns_of(node, record) if outcome in RETURNED]
        if node["tool"] in first_timeout and answered and min(answered) <= first_timeout[node["tool"]]:
            reasons.append(f"retry_before_failure:{nid}")
        primary = nodes.get(node["fallback_for"]) if node["fallback_for"] else None
        if primary is None:
            continue
        outage = [turn for turn, outcome in _turns_of(primary, record) if outcome == CallOutcome.SERVICE_UNAVAILABLE]
        calls = [turn for turn, _ in _turns_of(node, record)]
        if calls and (not outage or min(calls) <= min(outage)):
            reasons.append(f"fallback_unprompted:{nid}")
    return reasons
