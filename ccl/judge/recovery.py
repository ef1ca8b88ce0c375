"""Recovery that answers an observed failure: the part of ruler 2 that refuses a timeout or an outage
skipped by luck (issue 37; ruler 1 does not use it yet).

Ruler 1 asks only that every required gold call was answered by the world. Two shortcuts satisfy
it without recovering from anything (experiments/ruler_farming: 36 of 36 and 12 of 12 tasks):
sending a call twice in one turn, so that the copy behind the timed-out one returns; and calling
the declared backup first, so that the primary's outage is never met. A retry is an answer to a
failure the agent saw, so here it counts only in a turn after the failure was observed:

- ``repeated_in_turn:<node>``: two calls matching the same gold node in one turn (a blind retry);
- ``fallback_unprompted:<node>``: a call matching a declared fallback node in a turn before the
  primary's ``service_unavailable`` was observed, or when the primary was never called.
"""
from __future__ import annotations

from collections import Counter

from ..records import CallOutcome, EpisodeRecord, Task
from .matching import args_match


def _turns_of(node: dict, record: EpisodeRecord) -> list[tuple[int, str]]:
    """(turn, outcome) of every call that named an offered tool and matches ``node``."""
    return [(c["turn"], c["outcome"]) for c in record["calls"]
            if c.get("canonical") == node["tool"] and isinstance(c.get("cargs"), dict)
            and args_match(node["args"], c["cargs"])]


def recovery_reasons(task: Task, record: EpisodeRecord) -> list[str]:
    """Why the episode's recovery did not answer an observed failure (empty: it did, or none was due)."""
    nodes = {n["id"]: n for n in task["gold"]["nodes"] if not n["forbidden"]}
    reasons = []
    for nid, node in nodes.items():
        per_turn = Counter(turn for turn, _ in _turns_of(node, record))
        if any(k > 1 for k in per_turn.values()):
            reasons.append(f"repeated_in_turn:{nid}")
        primary = nodes.get(node["fallback_for"]) if node["fallback_for"] else None
        if primary is None:
            continue
        outage = [turn for turn, outcome in _turns_of(primary, record) if outcome == CallOutcome.SERVICE_UNAVAILABLE]
        calls = [turn for turn, _ in _turns_of(node, record)]
        if calls and (not outage or min(calls) <= min(outage)):
            reasons.append(f"fallback_unprompted:{nid}")
    return reasons
