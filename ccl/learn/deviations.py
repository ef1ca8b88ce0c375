"""Scripted deviations: the mistakes a learner makes, played on purpose from the oracle's states.

Each deviation takes the state an episode stands in (``Episode``) and the expert's action there, and
returns the assistant text a learner might have written instead, or None where the mistake makes no
sense (no call to get wrong, no approval to retry). They drive the expert's property tests and the
expert coverage table (``ccl.learn.coverage``): from every state they reach, the expert must lead to
ruler-2 success unless the state is unrecoverable for a reason ruler 2 can name.

- ``wrong_tool``: an offered tool outside the gold graph instead of the first call, with arguments of
  the right types (so the call is an attempt, not a schema error);
- ``missing_argument``: the first call without one of its arguments;
- ``wrong_entity``: the first call with a string argument pointing at another entity of the world
  (another contact, order, city...), or a changed string where the world has no other;
- ``repeated_call``: the previous turn's calls sent again (the first turn: the first call twice);
- ``premature_stop``: a final answer claiming success while calls remain (it ends the episode);
- ``denied_approval``: after the user declined a call, the same call again (a declined retry);
- ``malformed``: prose with no JSON action (a parse error).

Every choice comes from ``random.Random`` seeded with a string, so the states are reproducible.
"""
from __future__ import annotations

import json
import random
from typing import Any, Callable

from ..episode.runtime import Action, Episode, format_action
from ..records import CallOutcome, Status
from ..world.tools import TOOLS

Deviation = Callable[[Episode, Action, random.Random], str | None]


def _calls(action: Action) -> list[dict] | None:
    return [dict(c, args=dict(c["args"])) for c in action.calls] if action.calls else None


def wrong_tool(ep: Episode, action: Action, rng: random.Random) -> str | None:
    calls = _calls(action)
    if not calls:
        return None
    gold = {n["tool"] for n in ep.task["gold"]["nodes"]}
    others = [t for t in ep.catalogue.canonical if t not in gold]
    if not others:
        return None
    tool = rng.choice(sorted(others))
    args = {p.name: _typed_value(p, rng, ep) for p in TOOLS[tool].params if p.required}
    calls[0] = {"tool": ep.catalogue.surface(tool), "args": ep.catalogue.args_to_surface(tool, args)}
    return format_action(Action(calls=calls))


def _typed_value(param, rng: random.Random, ep: Episode) -> Any:
    if param.enum:
        return rng.choice(list(param.enum))
    if param.type == "integer":
        return rng.randint(1, 9)
    if param.type == "number":
        return float(rng.randint(1, 99))
    if param.type == "array":
        return ["x"]
    return rng.choice(_world_strings(ep.task["world"]) or ["unknown"])


def missing_argument(ep: Episode, action: Action, rng: random.Random) -> str | None:
    calls = _calls(action)
    if not calls or not calls[0]["args"]:
        return None
    del calls[0]["args"][rng.choice(sorted(calls[0]["args"]))]
    return format_action(Action(calls=calls))


def wrong_entity(ep: Episode, action: Action, rng: random.Random) -> str | None:
    calls = _calls(action)
    if not calls:
        return None
    strings = [k for k, v in sorted(calls[0]["args"].items()) if isinstance(v, str)]
    if not strings:
        return None
    key = rng.choice(strings)
    value = calls[0]["args"][key]
    same_kind = [s for s in _world_strings(ep.task["world"]) if s != value and _kind(s) == _kind(value)]
    calls[0]["args"][key] = rng.choice(same_kind) if same_kind else value + " 2"
    return format_action(Action(calls=calls))


def _kind(s: str) -> tuple[bool, bool]:
    """A coarse shape: identifiers (ORD-123, F-2093) stay identifiers, names stay names."""
    return any(ch.isdigit() for ch in s), "-" in s


def _world_strings(world: dict) -> list[str]:
    """Entity-like strings of the world: identifiers (dict keys) and short names or titles."""
    found: set[str] = set()

    def walk(x: Any) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if isinstance(k, str) and any(ch.isdigit() for ch in k) and "-" in k:
                    found.add(k)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        elif isinstance(x, str) and 2 < len(x) <= 40 and not x[:4].isdigit():
            found.add(x)

    walk({k: v for k, v in world.items() if k not in ("today", "now_utc")})
    return sorted(found)


def repeated_call(ep: Episode, action: Action, rng: random.Random) -> str | None:
    if ep.turns and ep.turns[-1]["action"] and ep.turns[-1]["action"].get("calls"):
        return format_action(Action(calls=ep.turns[-1]["action"]["calls"]))
    calls = _calls(action)
    return format_action(Action(calls=[calls[0], *calls])) if calls else None


def premature_stop(ep: Episode, action: Action, rng: random.Random) -> str | None:
    if not action.calls:
        return None
    return json.dumps({"final": "All done: your request has been completed.", "status": Status.DONE})


def denied_approval(ep: Episode, action: Action, rng: random.Random) -> str | None:
    if not ep.turns or not ep.turns[-1]["calls"]:
        return None
    declined = [ep.calls[i] for i in ep.turns[-1]["calls"] if ep.calls[i]["outcome"] == CallOutcome.APPROVAL_DENIED]
    if not declined:
        return None
    return format_action(Action(calls=[{"tool": c["tool"], "args": c["args"]} for c in declined]))


def malformed(ep: Episode, action: Action, rng: random.Random) -> str | None:
    return "Let me look into that for you."


DEVIATIONS: dict[str, Deviation] = {
    "wrong_tool": wrong_tool, "missing_argument": missing_argument, "wrong_entity": wrong_entity,
    "repeated_call": repeated_call, "premature_stop": premature_stop, "denied_approval": denied_approval,
    "malformed": malformed,
}
