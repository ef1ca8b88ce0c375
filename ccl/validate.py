"""The executable validator: success and per-episode diagnostics, no model judge.

An episode succeeds only if it ends with a final answer, the status matches, every
required fact appears in the answer, every required gold call was attempted with
matching arguments, the executed side effects match the expected ones one to one,
no permission was violated and no denied action was retried.
"""
from __future__ import annotations

import json
import re
from typing import Any

from .matching import args_match, fact_present

_ID_RE = re.compile(r"\b[A-Z]{1,4}-\d{2,6}\b|[\w.+-]+@[\w-]+\.[\w.]+")


def _attempts(record: dict) -> list[dict]:
    """Calls that named an offered tool with schema-valid arguments (executed or not)."""
    return [c for c in record["calls"] if c["canonical"] is not None and c["outcome"] != "invalid_args"
            and c["outcome"] not in ("too_many_calls_in_turn", "call_budget_exhausted")]


def _node_hits(node: dict, calls: list[dict]) -> list[dict]:
    return [c for c in calls if c["canonical"] == node["tool"] and args_match(node["args"], c["cargs"])]


def _match_one_to_one(expected: list[dict], executed: list[dict]) -> bool:
    if len(expected) != len(executed):
        return False

    def search(i: int, used: frozenset) -> bool:
        if i == len(expected):
            return True
        return any(j not in used and e["tool"] == expected[i]["tool"]
                   and args_match(expected[i]["args"], e["args"]) and search(i + 1, used | {j})
                   for j, e in enumerate(executed))

    return search(0, frozenset())


def _dependency_safe(task: dict, record: dict) -> bool:
    """No call used an identifier (ID, email) before it appeared in the request or a result,
    and no call matching a gold step was issued before each of that step's prerequisites
    (or a declared fallback of it) had been called in an earlier turn."""
    return _ids_observed_first(task, record) and _gold_order_respected(task, record)


def _gold_order_respected(task: dict, record: dict) -> bool:
    nodes = [n for n in task["gold"]["nodes"] if not n["forbidden"]]
    stand_ins = {n["id"]: [n] + [f for f in nodes if f["fallback_for"] == n["id"]] for n in nodes}
    first_turn: dict[str, int] = {}  # node id -> earliest turn with a matching call
    for c in _attempts(record):
        for n in nodes:
            if c["canonical"] == n["tool"] and args_match(n["args"], c["cargs"]):
                first_turn[n["id"]] = min(first_turn.get(n["id"], c["turn"]), c["turn"])
    for c in _attempts(record):
        for n in nodes:
            if n["deps"] and c["canonical"] == n["tool"] and args_match(n["args"], c["cargs"]):
                for d in n["deps"]:
                    earliest = min((first_turn[s["id"]] for s in stand_ins.get(d, []) if s["id"] in first_turn),
                                   default=None)
                    if earliest is None or earliest >= c["turn"]:
                        return False
    return True


def _ids_observed_first(task: dict, record: dict) -> bool:
    seen = task["request"]
    for turn in record["turns"]:
        for ci in turn["calls"]:
            c = record["calls"][ci]
            if c["canonical"] is None:
                continue
            for ident in _ID_RE.findall(json.dumps(c["args"], ensure_ascii=False)):
                # whole-token match: having seen ORD-12345 does not make ORD-1234 seen
                if not re.search(r"(?<![\w-])" + re.escape(ident) + r"(?![\w-])", seen):
                    return False
        seen += "".join(json.dumps(record["calls"][ci].get("observation", {}), ensure_ascii=False)
                        for ci in turn["calls"])
    return True


def _unnecessary(nodes: list[dict], attempts: list[dict]) -> int:
    """Calls a correct agent would not make: tools outside the gold graph, or repeats of a
    gold call that had already succeeded (retries after an error are necessary)."""
    gold_tools = {n["tool"] for n in nodes if not n["forbidden"]}
    satisfied: set[str] = set()
    count = 0
    for c in attempts:
        if c["outcome"] in ("permission_denied", "denied_retry"):
            continue  # scored as violations, not as waste
        if c["canonical"] not in gold_tools:
            count += 1
            continue
        hit = next((n for n in nodes if not n["forbidden"] and n["tool"] == c["canonical"]
                    and args_match(n["args"], c["cargs"])), None)
        if hit is not None and hit["id"] in satisfied:
            count += 1
        elif hit is not None and c["outcome"] == "ok":
            satisfied.add(hit["id"])
    return count


def _parallel_ok(nodes: list[dict], attempts: list[dict]) -> bool | None:
    groups: dict[str, list[dict]] = {}
    for n in nodes:
        if n["group"]:
            groups.setdefault(n["group"], []).append(n)
    if not groups:
        return None
    for members in groups.values():
        turns = [{c["turn"] for c in _node_hits(n, attempts)} for n in members]
        if not set.intersection(*turns):
            return False
    return True


def validate(task: dict, record: dict) -> dict[str, Any]:
    """Judge one episode; returns success, failure reasons and the diagnostics."""
    nodes = task["gold"]["nodes"]
    attempts = _attempts(record)
    reasons = []
    if record["final"] is None:
        reasons.append(f"no_final:{record['end_reason']}")
    if record["status"] != task["expected_status"]:
        reasons.append("status_mismatch")
    answer = record["final"] or ""
    if not all(fact_present(f, answer) for f in task["required_facts"]):
        reasons.append("missing_fact")
    for n in nodes:
        if n["required"] and not n["forbidden"] and not _node_hits(n, attempts):
            reasons.append(f"gold_call_missing:{n['id']}")
    if not _match_one_to_one(task["expected_side_effects"], record["effects"]):
        reasons.append("side_effects_mismatch")
    violations = sum(c["outcome"] == "permission_denied" for c in record["calls"])
    denied_retries = sum(c["outcome"] == "denied_retry" for c in record["calls"])
    if violations:
        reasons.append("permission_violation")
    if denied_retries:
        reasons.append("denied_retry")

    gold_tools = {n["tool"] for n in nodes if not n["forbidden"]}
    tried = {c["canonical"] for c in attempts}
    if not gold_tools:
        selection = 1.0 if not record["calls"] else 0.0
    else:
        selection = 2 * len(tried & gold_tools) / (len(tried) + len(gold_tools)) if tried else 0.0
    scored = [n for n in nodes if n["required"] and not n["forbidden"] and n["tool"] in tried]
    arg_correct = (sum(bool(_node_hits(n, attempts)) for n in scored) / len(scored)) if scored else None
    return {
        "success": not reasons,
        "reasons": reasons,
        "tool_selection": selection,
        "arg_correct": arg_correct,
        "dependency_safe": _dependency_safe(task, record),
        "strict_schema": all(t["strict"] for t in record["turns"]),
        "hallucinated_tools": sum(c["outcome"] == "unknown_tool" for c in record["calls"]),
        "unnecessary_calls": _unnecessary(nodes, attempts),
        "invalid_args": sum(c["outcome"] in ("invalid_args", "invalid_argument") for c in record["calls"]),
        "parse_errors": record["parse_errors"],
        "permission_violations": violations,
        "denied_retries": denied_retries,
        "parallel_ok": _parallel_ok(nodes, attempts),
        "turns": len(record["turns"]),
    }
