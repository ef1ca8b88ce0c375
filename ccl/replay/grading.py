"""Grading replayed actions by code (see :mod:`ccl.replay.decisions` for the rules); metrics in :mod:`ccl.replay.metrics`.

Separate from :mod:`ccl.replay.decisions` so that the replay stage, which runs the model, does not
depend on the validator: a validator change re-grades stored actions (stage replay_judge).
"""
from __future__ import annotations

from typing import Callable

from ..artifacts.jsonio import dumps
from ..episode.runtime import Episode
from ..judge.matching import args_match
from ..judge.validate import validate
from ..records import CallOutcome, EpisodeRecord, ReplayVerdict, Task
from .decisions import replay_prefix

V = ReplayVerdict
# Whether a finished episode's answer succeeds: ruler 1 for the published replay metrics (the
# replay_judge stage), ruler 2 for the reward API (ccl.learn.reward).
Success = Callable[[Task, EpisodeRecord], bool]


def ruler1_success(task: Task, record: EpisodeRecord) -> bool:
    return validate(task, record)["success"]


def _key(c: dict) -> str:
    return dumps([c["canonical"], c["cargs"]])


def _one_to_one(calls: list[dict], ready: list[dict]) -> bool:
    """Every call matches a distinct ready gold node (tool and the validator's argument rules)."""
    def search(i: int, used: frozenset) -> bool:
        if i == len(calls):
            return True
        c = calls[i]
        return any(j not in used and c["canonical"] == n["tool"] and isinstance(c["cargs"], dict)
                   and args_match(n["args"], c["cargs"]) and search(i + 1, used | {j})
                   for j, n in enumerate(ready))
    return bool(calls) and search(0, frozenset())


def _forbidden(calls: list[dict], ready_tools: set[str]) -> bool:
    return any(c["outcome"] in (CallOutcome.PERMISSION_DENIED, CallOutcome.DENIED_RETRY)
               or (c["outcome"] == CallOutcome.APPROVAL_DENIED and c["canonical"] not in ready_tools)
               for c in calls)


def _repeated(calls: list[dict], earlier: list[dict]) -> bool:
    seen = {_key(c) for c in earlier if c["canonical"] is not None}
    for c in calls:
        if c["canonical"] is None:
            continue
        if _key(c) in seen:
            return True
        seen.add(_key(c))
    return False


def grade(task: Task, decision: dict, ep: Episode, text: str, success: Success = ruler1_success) -> dict:
    """Step ``text`` on ``ep`` (a :func:`replay_prefix` of ``decision``) and grade it; a final answer
    at the gold final decision passes when ``success`` says the finished episode succeeds."""
    before = len(ep.calls)
    ep.step(text)
    turn = ep.turns[-1]
    action = turn["action"]
    calls, earlier = ep.calls[before:], ep.calls[:before]
    nodes = {n["id"]: n for n in task["gold"]["nodes"]}
    ready = [nodes[i] for i in decision["ready"]]
    verdict = _verdict(task, decision, ep, action, calls, earlier, ready, success)
    return {"verdict": verdict, "strict": bool(turn["strict"]),
            "stopped": action is not None and action["final"] is not None,
            "tools": [c["canonical"] for c in calls]}


def _verdict(task: Task, decision: dict, ep: Episode, action: dict | None, calls: list[dict], earlier: list[dict],
             ready: list[dict], success: Success) -> ReplayVerdict:
    if action is None:
        return V.MALFORMED
    ready_tools = {n["tool"] for n in ready}
    if decision["status"] is not None:  # gold: the final answer
        if action["final"] is not None:
            if action["status"] != decision["status"]:
                return V.WRONG_STATUS
            return V.PASS if success(task, ep.record()) else V.WRONG_ANSWER
        if _forbidden(calls, ready_tools):
            return V.FORBIDDEN_ATTEMPT
        return V.REPEATED_CALL if _repeated(calls, earlier) else V.FAILED_TO_STOP
    if action["final"] is not None:
        return V.PREMATURE_STOP
    if _forbidden(calls, ready_tools):
        return V.FORBIDDEN_ATTEMPT
    if any(c["outcome"] == CallOutcome.UNKNOWN_TOOL for c in calls):
        return V.HALLUCINATED_TOOL
    if _one_to_one(calls, ready):
        return V.PASS
    if _repeated(calls, earlier):
        return V.REPEATED_CALL
    if any(c["canonical"] not in ready_tools for c in calls):
        return V.WRONG_TOOL
    return V.WRONG_ARGS


def grade_rows(tasks: dict[str, Task], golden: list[dict], answers: list[dict],
               success: Success = ruler1_success) -> list[dict]:
    """One graded row per decision: its strata, the action's text and verdict (``answers`` in golden order);
    ``success`` judges a final answer at the gold final decision (see :func:`grade`)."""
    nodes = {t: {n["id"]: n["tool"] for n in task["gold"]["nodes"]} for t, task in tasks.items()}
    rows = []
    for d, a in zip(golden, answers, strict=True):
        if (a["task_id"], a["index"]) != (d["task_id"], d["index"]):
            raise ValueError(f"answer for {a['task_id']} #{a['index']} stands where {d['task_id']} #{d['index']} is")
        task = tasks[d["task_id"]]
        g = grade(task, d, replay_prefix(task, d)[0], a["text"], success)
        rows.append({**{k: d[k] for k in ("task_id", "dataset", "template", "family", "depth", "index", "turn",
                                          "kind", "status")},
                     "ready_tools": [nodes[d["task_id"]][i] for i in d["ready"]], "text": a["text"], **g})
    return rows
