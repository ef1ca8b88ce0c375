"""The 44 task templates and :func:`generate_task`, which turns (template, seed) into a task.

Usage: ``generate_task("ch_contact_email", 7, pool="train")`` returns a plain-JSON dict
holding the request, role, catalogue, aliases, approvals, fault plan, initial world,
gold graph, expected status, required facts, expected side effects, the oracle's
answer template and a value-free graph signature.
"""
from __future__ import annotations

import random

from ..aliases import VOCABULARIES, draw_aliases
from ..tools import TOOLS, TRAIN_TOOLS
from . import approval, args, chain, parallel, permission, recovery, select, termination  # noqa: F401 (registers)
from .base import FAMILIES, SPLITS, STATUSES, TEMPLATES, Builder, Template, resolve

POOLS = ("train", "eval")
__all__ = ["FAMILIES", "SPLITS", "STATUSES", "TEMPLATES", "POOLS", "Template", "generate_task",
           "graph_depth", "graph_signature", "resolve"]


class TaskError(ValueError):
    """Bad template name, seed or option; the message names the problem and the choices."""


def graph_depth(nodes: list[dict]) -> int:
    """Longest dependency chain; a fallback sits at its primary's depth."""
    depth: dict[str, int] = {}
    for n in nodes:  # nodes are stored in topological order
        parents = [depth[d] for d in n["deps"]]
        if n["fallback_for"]:
            depth[n["id"]] = depth[n["fallback_for"]]
        else:
            depth[n["id"]] = 1 + max(parents, default=0)
    return max(depth.values(), default=0)


def graph_signature(nodes: list[dict], faults: list[dict], approvals: dict[str, str],
                    status: str) -> str:
    """A value-free description of the gold graph: tools, edges, flags, faults, outcome."""
    index = {n["id"]: i for i, n in enumerate(nodes)}
    parts = []
    for i, n in enumerate(nodes):
        s = f"{i}:{'!' if n['forbidden'] else ''}{n['tool']}"
        if n["deps"]:
            s += "<" + ",".join(str(index[d]) for d in n["deps"])
        if n["fallback_for"]:
            s += f"~{index[n['fallback_for']]}"
        if n["group"]:
            s += "&" + n["group"]
        parts.append(s)
    parts += sorted(f"{f['kind']}:{f['tool']}" for f in faults)
    parts += sorted(f"{v}:{k}" for k, v in approvals.items())
    return ";".join(parts) + f"=>{status}"


def _params(tool: str) -> list[str]:
    return [p.name for p in TOOLS[tool].params]


def generate_task(name: str, seed: int, pool: str = "train", rename: str | None = None,
                  distractors: int | None = None) -> dict:
    """Build one task deterministically from (template, seed, pool, rename, distractors).

    ``pool`` selects the entity pools (train: a strict subset of eval). ``rename``
    is None or an alias vocabulary (train | heldout). ``distractors`` fixes the
    number of distractor tools (default: 2 to 6 drawn per task); catalogues with
    different counts of the same task are nested.
    """
    if name not in TEMPLATES:
        raise TaskError(f"unknown template {name!r}; valid templates: {', '.join(sorted(TEMPLATES))}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise TaskError(f"seed must be a non-negative integer, got {seed!r}")
    if pool not in POOLS:
        raise TaskError(f"unknown pool {pool!r}; valid: {', '.join(POOLS)}")
    if rename is not None and rename not in VOCABULARIES:
        raise TaskError(f"unknown alias vocabulary {rename!r}; valid: {', '.join(VOCABULARIES)}")
    t = TEMPLATES[name]
    b = Builder(random.Random(f"task|{name}|{seed}|{pool}"), pool)
    t.build(b)
    return _finish(b, t, seed, rename, distractors)


def _catalogue(b: Builder, t: Template, seed: int, distractors: int | None) -> tuple[list[str], int]:
    own = list(dict.fromkeys([n["tool"] for n in b.nodes] + b.extra_tools))
    universe = TRAIN_TOOLS if b.pool == "train" else sorted(TOOLS)
    candidates = [x for x in universe if x not in own]
    rng = random.Random(f"catalogue|{t.name}|{seed}|{b.pool}")
    rng.shuffle(candidates)
    k = rng.randint(2, 6) if distractors is None else distractors
    if not 0 <= k <= len(candidates):
        raise TaskError(f"distractors must be between 0 and {len(candidates)} for {t.name}, got {k}")
    catalogue = own + candidates[:k]
    random.Random(f"order|{t.name}|{seed}|{b.pool}").shuffle(catalogue)
    return catalogue, k


def _finish(b: Builder, t: Template, seed: int, rename: str | None, distractors: int | None) -> dict:
    catalogue, k = _catalogue(b, t, seed, distractors)
    aliases = None
    if rename:
        rng = random.Random(f"rename|{t.name}|{seed}|{b.pool}|{rename}")
        aliases = draw_aliases(rng, catalogue, {x: _params(x) for x in catalogue}, rename)
    surface = (aliases or {}).get("tools", {})
    facts = [list(f) for f in b.facts] + [[surface.get(x, x)] for x in b.fact_tools]
    answer = b.answer
    for x in b.fact_tools:
        answer = answer.replace("{tool:" + x + "}", surface.get(x, x))
    effects = [{"tool": n["tool"], "args": n["args"]} for n in b.nodes
               if TOOLS[n["tool"]].side_effect and not n["forbidden"]
               and b.approvals.get(n["tool"]) != "deny"]
    task_id = f"{t.name}:{b.pool}:{seed}" + (f":{rename}" if rename else "") + (
        f":k{distractors}" if distractors is not None else "")
    return {
        "id": task_id, "template": t.name, "family": t.family, "split": t.split, "depth": t.depth,
        "seed": seed, "pool": b.pool, "rename": rename, "distractors": k,
        "request": b.request, "role": b.role, "today": b.today.isoformat(),
        "catalogue": catalogue, "aliases": aliases, "approvals": dict(sorted(b.approvals.items())),
        "faults": b.faults, "world": b.state,
        "gold": {"nodes": b.nodes}, "expected_status": b.status, "required_facts": facts,
        "expected_side_effects": effects,
        "answer": {"template": answer, "refs": b.answer_refs},
        "graph_signature": graph_signature(b.nodes, b.faults, b.approvals, b.status),
    }
