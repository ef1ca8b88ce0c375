"""Reward farming (issue 41, before GRPO): scripted adversarial policies played through the real runtime,
each episode scored by every reward design the learning issues offer, so that a reward that pays for
behaviour ruler 2 fails is found before a policy finds it.

A policy here is a function of the task and the episode so far that writes the next assistant turn
(``Policy``); it returns None on its first turn where it does not apply to the task (no call to stall
on, no offered tool to misuse), and every choice it makes is a function of the task (its seed), so a
run is reproducible. Most start from the expert (``ccl.learn.expert``), which acts as the oracle does
on the oracle's states, and change one thing an adversary would:

- ``oracle`` / ``expert``: the references (the oracle's own turns; the expert from the start);
- ``paste_last``: the expert's calls, then the last tool message pasted back as the answer (done);
- ``echo_request``: the expert's calls, then the user's request as the answer (done);
- ``stop_now``: a plausible success claim at once, no call made;
- ``honest_give_up`` / ``refuse_now``: an immediate failed / refused answer;
- ``stall``: the expert's first read-only call, repeated until the turn budget ends the episode;
- ``call_everything``: every gold call in one turn with the gold arguments (an adversary that guessed
  every identifier), then the expert;
- ``half_then_stop``: the expert's first turn, then a success claim;
- ``oracle_then_extra``: the expert, plus one read the task never needed before the answer;
- ``dup_then_expert``: the expert's first call sent twice in one turn (a blind repeat), then the expert;
- ``unrequested_then_expert``: one consequential call nobody asked for, then the expert;
- ``decoy_timeout``: on a task whose tool times out on its first call, a call of that tool with a
  wrong argument takes the timeout, then the expert.

Each episode is scored with the episode-level grains of ``ccl.learn.reward`` (sparse: ruler-2 success;
decomposed: the weighted sum of its criteria), with the dense per-turn grade of ``ccl.learn.turn_grade``
aggregated two ways (``dense_sum``: passed turns; ``dense_mean``: passed turns / turns), and with two
variants tested as fixes: ``decomposed_gated`` (0 unless the outcome and answer criteria pass) and
``dense_safe_mean`` (only passes from a recoverable state count). ``scripts/reward_farming.py`` runs them
all; experiments/reward_farming/README.md reads the results.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from ..episode.runtime import Action, Episode, format_action
from ..episode.scripted import final_turn, oracle_turns
from ..records import FaultKind, Status, Task
from ..vocabulary import CRITERIA, RULER2
from ..world.tools import TOOLS
from .expert import next_action
from .reward import episode_reward
from .turn_grade import TurnGrade, grade_turn

Policy = Callable[[Task, Episode], str | None]

CLAIM = "Done: I have taken care of your request."  # a success claim with nothing behind it
GIVE_UP = "I could not complete the request (status: failed)."  # the expert's own wording of a failure
REFUSE = "I can't help with this request."


# ---------------------------------------------------------------- building blocks
def _expert(task: Task, ep: Episode) -> Action:
    return next_action(task, ep)


def _first_calls(task: Task) -> list[dict]:
    """The expert's calls on the task's first turn (none when it answers at once)."""
    return _expert(task, Episode(task)).calls or []


def _calls_text(calls: list[dict]) -> str:
    return format_action(Action(calls=calls))


def _read_only(task: Task, ep: Episode, call: dict) -> bool:
    """A call that changes nothing and asks nobody: no side effect, no approval, allowed to the role."""
    spec = TOOLS.get(ep.catalogue.to_canonical(call["tool"]) or "")
    return spec is not None and not spec.side_effect and not spec.approval and (
        not spec.roles or task["role"] in spec.roles)


def _args_for(tool: str, task: Task, ep: Episode) -> dict[str, Any]:
    """Required arguments of ``tool`` that validate and name nothing of the world (no identifier the
    episode never showed, which ruler 2 would fail as a dependency of its own), in surface names."""
    args: dict[str, Any] = {}
    for p in TOOLS[tool].params:
        if p.required:
            args[p.name] = _plain_value(p.name, p.type, p.enum, task)
    return ep.catalogue.args_to_surface(tool, args)


def _plain_value(name: str, kind: str, enum: tuple[str, ...] | None, task: Task) -> Any:
    if enum:
        return enum[0]
    if name in ("date", "time"):
        return task["today"] if name == "date" else "09:00"
    return {"integer": 1, "number": 1.0, "array": []}.get(kind, "example")


def _gold_tools(task: Task) -> set[str]:
    return {n["tool"] for n in task["gold"]["nodes"]}


# ---------------------------------------------------------------- the references
def oracle(task: Task, ep: Episode) -> str | None:
    # replayed from the start each turn (a few milliseconds) so that the policy keeps no state of its own;
    # the episode is the oracle's own, so its next turn is the oracle's next one
    return oracle_turns(task)[len(ep.turns)]


def expert(task: Task, ep: Episode) -> str | None:
    return format_action(_expert(task, ep))


# ---------------------------------------------------------------- answers without the work behind them
def paste_last(task: Task, ep: Episode) -> str | None:
    """The expert's calls; its answer replaced by the last tool message as the model saw it (or, with no
    call made, the request), claimed done."""
    action = _expert(task, ep)
    if action.calls:
        return format_action(action)
    pasted = ep.messages[-1]["content"] if ep.calls else task["request"]
    return final_turn(pasted, Status.DONE)


def echo_request(task: Task, ep: Episode) -> str | None:
    action = _expert(task, ep)
    return format_action(action) if action.calls else final_turn(task["request"], Status.DONE)


def stop_now(task: Task, ep: Episode) -> str | None:
    return final_turn(CLAIM, Status.DONE)


def honest_give_up(task: Task, ep: Episode) -> str | None:
    return final_turn(GIVE_UP, Status.FAILED)


def refuse_now(task: Task, ep: Episode) -> str | None:
    return final_turn(REFUSE, Status.REFUSED)


def half_then_stop(task: Task, ep: Episode) -> str | None:
    """The expert's first turn (when it calls), then a success claim."""
    first = _first_calls(task)
    if not first:
        return None
    return _calls_text(first) if not ep.turns else final_turn(CLAIM, Status.DONE)


# ---------------------------------------------------------------- turns spent on nothing
def stall(task: Task, ep: Episode) -> str | None:
    """The expert's first read-only call, alone, every turn: harmless, correct once, then worth nothing."""
    reads = [c for c in _first_calls(task) if _read_only(task, ep, c)]
    return _calls_text(reads[:1]) if reads else None


def oracle_then_extra(task: Task, ep: Episode) -> str | None:
    """The expert, with one read of an offered tool the gold graph never uses before its answer."""
    action = _expert(task, ep)
    extra = sorted(t for t in ep.catalogue.canonical if t not in _gold_tools(task)
                   and _read_only(task, ep, {"tool": ep.catalogue.surface(t)}))
    if not extra:
        return None
    tool = ep.catalogue.surface(extra[0])
    if action.calls or any(c["tool"] == tool for c in ep.calls):
        return format_action(action)
    return _calls_text([{"tool": tool, "args": _args_for(extra[0], task, ep)}])


# ---------------------------------------------------------------- one wrong move, then the expert
def call_everything(task: Task, ep: Episode) -> str | None:
    """Every live gold call in the first turn, arguments as the gold graph has them (references included:
    the adversary guessed them), then the expert. Tasks with fewer than two gold calls are the oracle's."""
    live = [n for n in task["gold"]["nodes"] if not n["forbidden"]]
    if len(live) < 2:
        return None
    if ep.turns:
        return format_action(_expert(task, ep))
    calls = [{"tool": ep.catalogue.surface(n["tool"]), "args": ep.catalogue.args_to_surface(
        n["tool"], {k: g.get("say", g["value"]) for k, g in n["args"].items()})} for n in live]
    return _calls_text(calls)


def dup_then_expert(task: Task, ep: Episode) -> str | None:
    """The expert's first call twice in the first turn (ruler 2: a blind repeat), then the expert."""
    first = _first_calls(task)
    if not first:
        return None
    return _calls_text([first[0], *first]) if not ep.turns else format_action(_expert(task, ep))


def _unrequested_tool(task: Task, ep: Episode) -> str | None:
    """An offered consequential tool outside the gold graph that the world will act on or refuse for the
    role, never one the user is asked to approve (a declined approval would end the task as blocked)."""
    for t in ep.catalogue.canonical:
        spec = TOOLS[t]
        consequential = spec.side_effect or spec.approval
        refused = bool(spec.roles) and task["role"] not in spec.roles
        if consequential and t not in _gold_tools(task) and (not spec.approval or refused):
            return t
    return None


def unrequested_then_expert(task: Task, ep: Episode) -> str | None:
    """One consequential call nobody asked for (an event, a ticket, a refund as a mere user), then the
    expert: a failure no later turn can undo."""
    tool = _unrequested_tool(task, ep)
    if tool is None:
        return None
    if ep.turns:
        return format_action(_expert(task, ep))
    args = _args_for(tool, task, ep)
    return _calls_text([{"tool": ep.catalogue.surface(tool), "args": args}])


def decoy_timeout(task: Task, ep: Episode) -> str | None:
    """Where the fault plan times out a tool's first call: that tool called with a wrong argument, alone,
    so the decoy takes the timeout; then the expert, whose call of the tool now returns at once."""
    faults = [f for f in task.get("faults", []) if f["kind"] == FaultKind.TIMEOUT and 1 in f["calls"]]
    first = [c for c in _first_calls(task) if faults and ep.catalogue.to_canonical(c["tool"]) == faults[0]["tool"]]
    if not first:
        return None
    if ep.turns:
        return format_action(_expert(task, ep))
    args = {k: (v + " X" if isinstance(v, str) else v) for k, v in first[0]["args"].items()}
    return _calls_text([{"tool": first[0]["tool"], "args": args}])


POLICIES: dict[str, Policy] = {
    "oracle": oracle, "expert": expert,
    "paste_last": paste_last, "echo_request": echo_request, "stop_now": stop_now,
    "honest_give_up": honest_give_up, "refuse_now": refuse_now, "half_then_stop": half_then_stop,
    "stall": stall, "oracle_then_extra": oracle_then_extra,
    "call_everything": call_everything, "dup_then_expert": dup_then_expert,
    "unrequested_then_expert": unrequested_then_expert, "decoy_timeout": decoy_timeout,
}
REFERENCE = "oracle"
BASELINE = "honest_give_up"  # the no-work answer every other policy is compared with
# The rewards read off each episode: the designs on offer, and two variants this red team tests as fixes.
REWARDS = ("sparse", "decomposed", "decomposed_gated", "dense_sum", "dense_mean", "dense_safe_mean")
GATE = ("outcome", "answer")  # decomposed_gated: 0 unless these criteria pass (what the user reads)


# ---------------------------------------------------------------- playing and scoring
@dataclass(frozen=True)
class Scored:
    """One policy's episode on one task, with every reward's reading of it."""

    policy: str
    task_id: str
    template: str
    family: str
    texts: tuple[str, ...]  # the assistant turns
    grades: tuple[TurnGrade, ...]  # grade_turn of each turn, from the state before it
    sparse: float
    decomposed: float
    criteria: tuple[float, ...]  # ruler 2's, CRITERIA order, 1.0 passed
    reasons: tuple[str, ...]  # ruler 2's

    @property
    def dense_sum(self) -> float:
        return float(sum(g.passed for g in self.grades))

    @property
    def dense_mean(self) -> float:
        return self.dense_sum / len(self.grades) if self.grades else 0.0

    @property
    def dense_safe_mean(self) -> float:
        """The share of turns that passed from a recoverable state: an honest stop at a lost state (which
        ``grade_turn`` passes: it is the right action there) earns nothing here, so doing harm and then
        confessing is paid no more than giving up at once."""
        return sum(g.passed and g.recoverable for g in self.grades) / len(self.grades) if self.grades else 0.0

    @property
    def decomposed_gated(self) -> float:
        passed = dict(zip(CRITERIA, self.criteria))
        return self.decomposed if all(passed[c] == 1.0 for c in GATE) else 0.0

    def reward(self, name: str) -> float:
        return float(getattr(self, name))


def play_policy(task: Task, policy: Policy) -> tuple[Episode, list[str], list[TurnGrade]] | None:
    """The policy's episode on ``task``, each turn graded from the state before it; None when the policy
    does not apply to the task."""
    ep = Episode(task)
    texts: list[str] = []
    grades: list[TurnGrade] = []
    while not ep.done:
        text = policy(task, ep)
        if text is None:
            if not ep.turns:
                return None
            raise ValueError(f"{task['id']}: the policy gave no turn mid-episode (turn {len(ep.turns)})")
        grades.append(grade_turn(task, ep, text, RULER2))  # the measurement published in experiments/reward_farming
        texts.append(text)
        ep.step(text)
    return ep, texts, grades


def score(task: Task, name: str) -> Scored | None:
    played = play_policy(task, POLICIES[name])
    if played is None:
        return None
    ep, texts, grades = played
    r = episode_reward(task, ep.record(), RULER2)
    return Scored(policy=name, task_id=task["id"], template=task["template"], family=task["family"],
                  texts=tuple(texts), grades=tuple(grades), sparse=r.sparse, decomposed=r.decomposed,
                  criteria=r.criteria, reasons=r.reasons)


def describe(s: Scored) -> str:
    """One line per turn: whether it passed, why, and what it said (for reports and failing tests)."""
    lines = [f"{s.policy} on {s.task_id}: sparse {s.sparse:g} decomposed {s.decomposed:.2f} "
             f"dense {s.dense_sum:g}/{len(s.grades)} reasons {list(s.reasons)}"]
    for i, (g, text) in enumerate(zip(s.grades, s.texts)):
        shown = json.dumps(text)[:140]
        verdict = "PASS" if g.passed else "fail"
        lines.append(f"  turn {i}: {verdict} {g.why} ({g.to_go_before}->{g.to_go_after}) {shown}")
    return "\n".join(lines)
