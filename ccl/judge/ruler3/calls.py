"""Ruler 3's call rules (issue 57), read off the episode's one assignment of calls to gold nodes:

- ``repeated_answered:<node or tool>``: a call that, in a later turn, repeats a call the world had
  already answered: the same offered tool with the same arguments as an earlier turn's call whose
  outcome was not a timeout, or a call given to a gold step an earlier turn's call had already
  answered. A retry after a timeout is recovery, not a repeat; calling a tool again after it was seen
  down is a repeat (the fallback is the recovery). This is study 2's pre-registered secondary rule B
  (``ccl.analysis.repeats``: only a timeout may be retried), made part of strict success: a repeat cannot change the answer, and
  GRPO's sparse arm learned to add them (76 of its 80 ruler-2 successes on study 2's fresh tasks);
- ``unoffered_tool``: any call the runtime refused as ``unknown_tool``, whatever its name (ruler 2
  scored only names that spell a consequential tool). The oracle never makes one;
- ``unread_call``: a call the runtime refused unread, over the per-turn or per-episode limit. Its name
  was never looked up, so an unoffered one would hide there; the oracle never makes one;
- ``vacuous_call:<node>``: a gold step whose argument is an expression (``calculate``) called with one
  that computes nothing the episode showed: no operator, or a number no earlier text held (the request,
  an observation). Evaluated to the gold value, ``calculate("11733")`` matches; it did no arithmetic.
"""
from __future__ import annotations

import ast
import json

from ...records import CallOutcome, EpisodeRecord, Task
from ..answers import norm, numbers
from ..assignment import Assignment

RETRYABLE = (CallOutcome.TIMEOUT,)  # rule B's: the one outcome after which the same call may rightly be made again
UNREAD = (CallOutcome.TOO_MANY_CALLS_IN_TURN, CallOutcome.CALL_BUDGET_EXHAUSTED)  # refused before the name was read


def _key(call: dict) -> str | None:
    """The offered tool and its arguments, as one comparable string (None for an unknown tool)."""
    if not isinstance(call.get("canonical"), str):
        return None
    return json.dumps([call["canonical"], call.get("cargs")], sort_keys=True, default=str)


def repeat_calls(record: EpisodeRecord, a: Assignment) -> list[int]:
    """Indices of calls repeating, in a later turn, a call the world had already answered."""
    answered_in = {s.id: s.returned for s in a.nodes}
    first_answer: dict[str, int] = {}  # call key -> the first turn a call of it got a non-retryable outcome
    out = []
    for i, call in enumerate(record["calls"]):
        key, turn, node = _key(call), call["turn"], a.node_of[i]
        by_key = key is not None and first_answer.get(key, turn) < turn
        by_node = node is not None and answered_in.get(node) is not None and answered_in[node] < turn
        if by_key or by_node:
            out.append(i)
        if key is not None and call.get("outcome") not in RETRYABLE:
            first_answer.setdefault(key, turn)
    return out


def repeated_answered(task: Task, record: EpisodeRecord, a: Assignment) -> list[str]:
    calls = record["calls"]
    return list(dict.fromkeys(f"repeated_answered:{a.node_of[i] or calls[i]['canonical']}"
                              for i in repeat_calls(record, a)))


def unoffered_tool(task: Task, record: EpisodeRecord, a: Assignment) -> list[str]:
    return ["unoffered_tool"] if any(c.get("outcome") == CallOutcome.UNKNOWN_TOOL for c in record["calls"]) else []


def unread_call(task: Task, record: EpisodeRecord, a: Assignment) -> list[str]:
    return ["unread_call"] if any(c.get("outcome") in UNREAD for c in record["calls"]) else []


def vacuous_call(task: Task, record: EpisodeRecord, a: Assignment) -> list[str]:
    nodes = {n["id"]: n for n in task["gold"]["nodes"]}
    out = []
    for i, call in enumerate(record["calls"]):
        node = nodes.get(a.node_of[i] or "")
        if node is None or not isinstance(call.get("cargs"), dict):
            continue
        shown = _shown_before(task, record, call["turn"])
        for name, gold in node["args"].items():
            if gold["rule"] == "expr" and not _computes(call["cargs"].get(name), shown):
                out.append(f"vacuous_call:{node['id']}")
    return list(dict.fromkeys(out))


def _shown_before(task: Task, record: EpisodeRecord, turn: int) -> set[float]:
    """Every number the request and the observations of turns before ``turn`` held."""
    texts = [task["request"]] + [json.dumps(c.get("observation", {}), ensure_ascii=False)
                                 for c in record["calls"] if c["turn"] < turn]
    return {round(n.value, 6) for t in texts for n in numbers(norm(t))}


def _computes(expression: object, shown: set[float]) -> bool:
    """The expression applies at least one operator, and every number in it was shown before."""
    if not isinstance(expression, str) or len(expression) > 200:
        return False
    try:
        tree = ast.parse(expression.replace("^", "**").replace("×", "*"), mode="eval")
    except (SyntaxError, ValueError):
        return False
    operators = [n for n in ast.walk(tree) if isinstance(n, ast.BinOp)]
    literals = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    return bool(operators) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                   and round(float(v), 6) in shown for v in literals)
