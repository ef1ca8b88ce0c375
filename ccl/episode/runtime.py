"""The one episode loop: parse an action, validate, enforce permissions, ask for
approval, inject faults, execute, observe, enforce limits.

Every driver (oracle data, teacher generation, evaluation, the CLI, the server)
feeds assistant text into :meth:`Episode.step`; a policy never touches the world.
Nothing a model writes can crash the loop: malformed or oversized actions, unknown
tools, bad arguments and tools that raise all become observations and are recorded.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from ..artifacts.jsonio import dumps
from ..records import (
    PARSE_ERROR,
    Approval,
    CallOutcome,
    CallRecord,
    Effect,
    EndReason,
    EpisodeRecord,
    FaultKind,
    Message,
    Observation,
    Status,
    Task,
    TurnRecord,
)
from ..world.catalogue import Catalogue
from ..world.execution import run_tool
from ..world.state import World
from ..world.toolkit import validate_args
from ..world.tools import TOOLS
from .jsonscan import fenced, first_values
from .prompt import observation_text, system_prompt

# Plain strings, not members: the parse-error message below shows ``list(STATUSES)``, and a
# member's repr would change the transcripts.
STATUSES = tuple(s.value for s in Status)


@dataclass(frozen=True)
class Limits:
    max_turns: int = 8  # assistant turns per episode
    max_calls_per_turn: int = 6
    max_calls_total: int = 16
    max_parse_errors: int = 2  # the episode ends at this many unparseable turns
    tool_timeout_s: float = 2.0  # a call still running is abandoned here, reported as a timeout (world.execution)
    max_action_chars: int = 16_000  # longer assistant text is a parse error
    max_json_depth: int = 32  # deeper nesting is a parse error (no recursion blow-ups)


# ---------------------------------------------------------------- parsing
@dataclass
class Action:
    calls: list[dict] | None = None  # [{"tool": str, "args": dict}]
    final: str | None = None
    status: Status | None = None


_THINK_RE = re.compile(r"<think>.*?(</think>|$)", re.S)


def _too_deep(text: str, limit: int) -> bool:
    depth = 0
    for ch in text:
        if ch in "{[":
            depth += 1
            if depth > limit:
                return True
        elif ch in "}]":
            depth = max(depth - 1, 0)  # stray closers must not buy extra nesting
    return False


def _normalise(obj: Any) -> Action | str:
    """Turn a decoded JSON value into an Action, or return an error message."""
    if isinstance(obj, list):
        obj = {"calls": obj}
    if not isinstance(obj, dict):
        return "the action must be a JSON object"
    if "final" not in obj and ("tool" in obj or "name" in obj):
        obj = {"calls": [obj]}
    if "final" in obj:
        final = obj["final"]
        if final is None:
            return "final must be a string"
        if obj.get("status") not in STATUSES:
            return f"status must be one of {list(STATUSES)}"
        # lenient: a structured answer (small models often hand back the result object)
        # is read as its canonical JSON text; strict-schema compliance is recorded apart
        return Action(final=final if isinstance(final, str) else dumps(final), status=Status(obj["status"]))
    calls = obj.get("calls")
    if not isinstance(calls, list) or not calls:
        return 'expected {"calls": [...]} with at least one call, or {"final": ..., "status": ...}'
    out = []
    for c in calls:
        if not isinstance(c, dict):
            return "each call must be an object with tool and args"
        name = c.get("tool", c.get("name"))
        args = c.get("args", c.get("arguments", c.get("parameters", {})))
        if not isinstance(name, str):
            return "each call needs a tool name"
        out.append({"tool": name, "args": args})
    return Action(calls=out)


def _is_strict(text: str) -> bool:
    """Exactly one schema-conforming JSON object, nothing around it."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return False
    if not isinstance(obj, dict):
        return False
    if set(obj) == {"final", "status"}:
        return isinstance(obj["final"], str) and obj["status"] in STATUSES
    if set(obj) == {"calls"} and isinstance(obj["calls"], list) and obj["calls"]:
        return all(isinstance(c, dict) and set(c) == {"tool", "args"} and isinstance(c["tool"], str)
                   and isinstance(c["args"], dict) for c in obj["calls"])
    return False


def parse_action(text: Any, limits: Limits = Limits()) -> tuple[Action | None, str | None, bool]:
    """Lenient parse: returns (action, error message, strict-schema flag); never raises."""
    if not isinstance(text, str):
        return None, "the assistant message must be text", False
    if len(text) > limits.max_action_chars:
        return None, f"action longer than {limits.max_action_chars} characters", False
    if _too_deep(text, limits.max_json_depth):
        return None, f"JSON nested deeper than {limits.max_json_depth} levels", False
    strict = _is_strict(text.strip())
    try:  # a whole-text JSON value is taken as is (its strings may mention "<think>")
        result = _normalise(json.loads(text))
        if isinstance(result, Action):
            return result, None, strict
    except (ValueError, RecursionError):
        pass
    body = _THINK_RE.sub("", text)
    candidates = fenced(body) + [body]
    decoder = json.JSONDecoder()
    error = "no JSON object found"
    for cand in candidates:
        # the first bracket the decoder reads a value from (jsonscan: linear time, same answer as trying
        # the decoder at every bracket)
        for obj in first_values(cand, decoder):
            result = _normalise(obj)
            if isinstance(result, Action):
                return result, None, strict
            error = result
            break  # the first JSON value in a candidate is the action
    return None, error, False


def format_action(action: Action) -> str:
    """The canonical serialisation of an action (training targets and histories):
    tool before args, args with sorted keys, one space after separators."""
    if action.calls is None:
        return json.dumps({"final": action.final, "status": action.status}, ensure_ascii=False)
    inner = ", ".join('{"tool": ' + json.dumps(c["tool"], ensure_ascii=False) + ', "args": '
                      + json.dumps(c["args"], ensure_ascii=False, sort_keys=True) + "}"
                      for c in action.calls)
    return '{"calls": [' + inner + "]}"


# ---------------------------------------------------------------- approval
class Approver(Protocol):
    def __call__(self, task: Task, tool: str, args: dict) -> bool: ...


def scripted_approver(task: Task, tool: str, args: dict) -> bool:
    """Datasets and evaluation: the task's scripted decision; unscripted means deny."""
    return task.get("approvals", {}).get(tool) == Approval.APPROVE


def terminal_approver(task: Task, tool: str, args: dict) -> bool:
    """The CLI: ask a real person."""
    answer = input(f"\nApprove {tool}({dumps(args)})? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


# ---------------------------------------------------------------- the episode
@dataclass
class Episode:
    """State of one episode; feed assistant text to :meth:`step` until ``done``."""

    task: Task
    approver: Callable[[Task, str, dict], bool] = scripted_approver
    limits: Limits = Limits()
    system: str | None = None  # override (few-shot variants); default: the standard prompt
    catalogue: Catalogue = field(init=False)
    world: World = field(init=False)
    messages: list[Message] = field(init=False)
    turns: list[TurnRecord] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)
    final: str | None = None
    status: Status | None = None
    end_reason: EndReason | None = None
    parse_errors: int = 0
    # Nothing of whoever drives the episode lives here: a policy keeps its memory of the episode
    # (the oracle's progress, a model's KV cache and token counts) in its own object, which the
    # driving loop holds beside the episode and hands back on every turn (Policy.memory).
    _attempts: Counter = field(default_factory=Counter)
    _denied: set = field(default_factory=set)

    def __post_init__(self) -> None:
        self.catalogue = Catalogue(self.task)
        self.world = World(self.task["world"])
        self.messages = [{"role": "system", "content": self.system or system_prompt(self.task, self.catalogue)},
                         {"role": "user", "content": self.task["request"]}]

    @property
    def done(self) -> bool:
        return self.end_reason is not None

    def step(self, text: str) -> None:
        """Consume one assistant turn."""
        if self.done:
            raise RuntimeError("episode already finished")
        action, error, strict = parse_action(text, self.limits)
        turn = {"index": len(self.turns), "text": text, "strict": strict, "error": error,
                "action": None if action is None else action.__dict__, "calls": []}
        self.turns.append(turn)
        self.messages.append({"role": "assistant", "content": text})
        if action is None:
            self.parse_errors += 1
            self._observe([{"error": {"kind": PARSE_ERROR, "message": error}}])
            if self.parse_errors >= self.limits.max_parse_errors:
                self.end_reason = EndReason.PARSE_ERRORS
        elif action.final is not None:
            self.final, self.status, self.end_reason = action.final, action.status, EndReason.FINAL
        else:
            results = [self._call(turn, i, c) for i, c in enumerate(action.calls)]
            self._observe(results)
            if any(r.get("error", {}).get("kind") == CallOutcome.CALL_BUDGET_EXHAUSTED for r in results):
                self.end_reason = EndReason.CALL_LIMIT
        if not self.done and len(self.turns) >= self.limits.max_turns:
            self.end_reason = EndReason.TURN_LIMIT

    def _observe(self, results: list[dict]) -> None:
        self.messages.append({"role": "user", "content": observation_text(results)})

    def _call(self, turn: TurnRecord, index: int, call: dict) -> dict:
        name, args = call["tool"], call["args"]
        # becomes a CallRecord once its observation is in (filled in as the call goes through)
        rec: dict[str, Any] = {"turn": turn["index"], "tool": name, "args": args, "canonical": None,
                               "cargs": None, "outcome": None, "executed": False}
        turn["calls"].append(len(self.calls))
        self.calls.append(rec)
        obs = self._dispatch(rec, index)
        rec["observation"] = obs
        return {"tool": name, **obs}

    def _dispatch(self, rec: dict, index: int) -> Observation:
        def fail(kind: CallOutcome, message: str, **extra: Any) -> Observation:
            rec["outcome"] = kind
            return {"ok": False, "error": {"kind": kind, "message": message, **extra}}

        if index >= self.limits.max_calls_per_turn:
            return fail(CallOutcome.TOO_MANY_CALLS_IN_TURN,
                        f"at most {self.limits.max_calls_per_turn} calls per turn; not run")
        if len(self.calls) > self.limits.max_calls_total:
            return fail(CallOutcome.CALL_BUDGET_EXHAUSTED,
                        f"at most {self.limits.max_calls_total} calls per episode; not run")
        tool = self.catalogue.to_canonical(rec["tool"]) if isinstance(rec["tool"], str) else None
        if tool is None:
            return fail(CallOutcome.UNKNOWN_TOOL, f"no tool named {rec['tool']!r} in the catalogue")
        rec["canonical"] = tool
        if not isinstance(rec["args"], dict):
            return fail(CallOutcome.INVALID_ARGS, "args must be a JSON object")
        cargs = self.catalogue.args_to_canonical(tool, rec["args"])
        rec["cargs"] = cargs
        spec = TOOLS[tool]
        if (err := validate_args(spec, cargs)) is not None:
            err = re.sub(r"'\?(\w+)'", r"'\1'", err)
            return fail(CallOutcome.INVALID_ARGS, err)
        if spec.roles and self.task["role"] not in spec.roles:
            return fail(CallOutcome.PERMISSION_DENIED, f"role {self.task['role']} may not use this tool")
        if spec.approval:
            if tool in self._denied:
                return fail(CallOutcome.DENIED_RETRY, "the user already declined this action")
            if not self.approver(self.task, tool, cargs):
                self._denied.add(tool)
                return fail(CallOutcome.APPROVAL_DENIED, "the user declined this action")
        self._attempts[tool] += 1
        for f in self.task.get("faults", []):
            if f["tool"] != tool:
                continue
            if f["kind"] == FaultKind.TIMEOUT and self._attempts[tool] in f["calls"]:
                return fail(CallOutcome.TIMEOUT, "the service timed out; try again", retryable=True)
            if f["kind"] == FaultKind.SERVICE_UNAVAILABLE:
                fb = spec.fallback
                return fail(CallOutcome.SERVICE_UNAVAILABLE, "the service is down", retryable=False,
                            fallback=self.catalogue.surface(fb) if fb else None)
        return self._execute(rec, tool, cargs)

    def _execute(self, rec: dict, tool: str, cargs: dict) -> Observation:
        """Run the tool as a transaction under its time limit (ccl.world.execution): the world and the
        effects list change together, on success only."""
        spec = TOOLS[tool]
        ran = run_tool(spec, self.world, cargs, self.limits.tool_timeout_s)
        if ran.timed_out:
            rec["outcome"] = CallOutcome.TIMEOUT
            return {"ok": False, "error": {"kind": CallOutcome.TIMEOUT, "message": "the tool took too long",
                                           "retryable": True}}
        if ran.error is not None:
            rec["outcome"] = ran.error.kind
            return {"ok": False, "error": {"kind": ran.error.kind, "message": ran.error.message}}
        if ran.crash is not None:
            rec["outcome"] = CallOutcome.TOOL_ERROR
            return {"ok": False, "error": {"kind": CallOutcome.TOOL_ERROR, "message": ran.crash}}
        rec["outcome"], rec["executed"], rec["result"] = CallOutcome.OK, True, ran.result
        if spec.side_effect:
            self.world.state = ran.state
            self.effects.append({"tool": tool, "args": cargs})
        return {"ok": True, "result": ran.result}

    def record(self) -> EpisodeRecord:
        """Everything the validator and the datasets need, as plain JSON."""
        return {"task_id": self.task["id"], "messages": self.messages, "turns": self.turns,
                "calls": self.calls, "effects": self.effects, "final": self.final,
                "status": self.status, "end_reason": self.end_reason,
                "parse_errors": self.parse_errors}


class Policy(Protocol):
    """Writes an episode's next assistant turn. A policy that remembers something between turns
    offers ``memory()``, a fresh per-episode object of its own type; the loop that drives the
    episode keeps it and passes it to every ``act`` (None for a policy without one)."""

    def act(self, episode: Episode, memory: Any) -> str: ...


def fresh_memory(policy: Any) -> Any:
    """The policy's memory for a new episode, or None when it keeps none."""
    return policy.memory() if hasattr(policy, "memory") else None


def token_counts(memory: Any) -> tuple[int, int]:
    """(generated, prefilled) tokens a policy's memory of an episode counts: a model policy's
    ``ModelMemory`` counts them; a policy without a model (the oracle, a scripted one) has none."""
    return getattr(memory, "new_tokens", 0), getattr(memory, "prompt_tokens", 0)


def run_episode(task: Task, policy: Policy, approver: Callable = scripted_approver,
                limits: Limits = Limits(), on_turn: Callable[[Episode], None] | None = None) -> Episode:
    """Drive one episode to the end with one policy."""
    ep, memory = Episode(task, approver, limits), fresh_memory(policy)
    while not ep.done:
        ep.step(policy.act(ep, memory))
        if on_turn:
            on_turn(ep)
    return ep
