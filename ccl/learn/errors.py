"""The error-driven round (issue 40): read where C fails, write training data exactly there.

1. **The validation replay set.** The oracle's decisions on every task of the validation pool (never an
   evaluation split), frozen as decision-point replay freezes them (``ccl.replay.decisions``), cut in two
   halves per template: the *map* half, whose failures choose what to write, and the *held-out* half,
   which only measures. A configuration answers each decision once; the replay grader grades it, a final
   answer judged by ruler 2.
2. **The failure map.** Decisions are grouped by coordinate, decision kind x the gold action's tool (the
   first ready tool, or ``final:<status>``), and each coordinate's failures are counted by verdict. A
   wrong-tool failure also records the tool called instead: a confusion between two tools.
3. **Targeted tasks.** Coordinates with at least ``min_failures`` failures on the map half get new
   training tasks in proportion to their failures, from the training templates whose oracle episodes
   visit that coordinate (a target no training template visits gets none, and is listed); where C confused
   two tools, half of the share goes to templates where the confused tool is the right one (the
   contrastive pair). Tasks are generated afresh (seeds no pool uses), and gated like the pools: a task
   whose request occurs in any evaluation split or the validation pool is skipped, and a held-out tool
   stops the stage. Slot values are drawn as the templates draw them; only templates are
   weighted.
4. **The training set.** The oracle's episodes on the targeted tasks, beside a replay slice of C's own
   rows (all of them by default) so that what C does well is still rehearsed.

The before/after comparison per coordinate on both halves (``cluster_changes``) says which failures the
data fixed; a coordinate that stays low on the held-out half is a capacity limit, not a missing
convention.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from ..data.datasets import MAX_CONSECUTIVE_DROPS, max_jaccard
from ..data.sft import sft_row
from ..episode.oracle import OraclePolicy
from ..episode.runtime import Episode, run_episode
from ..judge.ruler2 import judge
from ..records import ReplayVerdict, Task
from ..replay.decisions import decisions
from ..replay.grading import grade_rows
from ..world.tasks import TEMPLATES, generate_task
from ..world.tools import HELD_OUT_TOOLS
from .reward import ruler2_success

MAP, HELDOUT = "map", "heldout"
SEED_BASE = 900_000  # targeted tasks' seeds: above every pool's (train 0.., validation 500000..)


@dataclass(frozen=True)
class ErrorRoundConfig:
    """params.yaml ``err``."""

    tasks: int = 64  # targeted training tasks
    replay_slice: int = 128  # C's rows kept beside them (its first rows, in file order)
    min_failures: int = 2  # failed decisions on the map half that make a coordinate a target
    max_val_tasks: int = 0  # the validation replay set's tasks: the first this many of the pool (0: all)
    batch_size: int = 32
    max_new_tokens: int = 128


def halves(tasks: list[Task]) -> dict[str, str]:
    """Task id -> MAP or HELDOUT: alternately within each template, in pool order."""
    seen: Counter = Counter()
    out = {}
    for t in tasks:
        out[t["id"]] = MAP if seen[t["template"]] % 2 == 0 else HELDOUT
        seen[t["template"]] += 1
    return out


def golden(tasks: list[Task]) -> list[dict]:
    """The oracle's decisions on every task, each tagged with its half and its coordinate."""
    half = halves(tasks)
    rows = []
    for task in tasks:
        for d in decisions(task):
            rows.append({**d, "half": half[task["id"]], "coordinate": coordinate(task, d)})
    return rows


def coordinate(task: Task, decision: dict) -> str:
    """``<kind>|<tool>``: the decision's kind and the gold action's first tool (``final:<status>`` for a stop)."""
    if decision["status"] is not None:
        return f"{decision['kind']}|final:{decision['status']}"
    tools = {n["id"]: n["tool"] for n in task["gold"]["nodes"]}
    return f"{decision['kind']}|{tools[decision['ready'][0]]}"


def grade_all(tasks: dict[str, Task], gold: list[dict], answers: list[dict]) -> list[dict]:
    """Each answer graded at its decision by the replay grader (a final answer judged by ruler 2), with the
    decision's half and coordinate."""
    rows = grade_rows(tasks, gold, answers, success=ruler2_success)
    return [{**r, "half": d["half"], "coordinate": d["coordinate"]} for r, d in zip(rows, gold)]


def failure_map(graded: Iterable[dict], half: str) -> dict[str, dict]:
    """Per coordinate of one half: decisions, passes, failures by verdict, and wrong-tool confusions."""
    out: dict[str, dict] = {}
    for r in graded:
        if r["half"] != half:
            continue
        c = out.setdefault(r["coordinate"], {"decisions": 0, "passed": 0, "failures": {}, "confused_with": {}})
        c["decisions"] += 1
        if r["verdict"] == ReplayVerdict.PASS:
            c["passed"] += 1
            continue
        c["failures"][str(r["verdict"])] = c["failures"].get(str(r["verdict"]), 0) + 1
        if r["verdict"] == ReplayVerdict.WRONG_TOOL:
            for tool in sorted(set(r["tools"]) - {None}):
                c["confused_with"][tool] = c["confused_with"].get(tool, 0) + 1
    return dict(sorted(out.items()))


def template_coordinates() -> dict[str, set[str]]:
    """Each training template -> the coordinates its oracle episode visits (seed 0 of the training pool)."""
    out = {}
    for name, t in sorted(TEMPLATES.items()):
        if t.split == "train":
            task = {**generate_task(name, 0, "train"), "dataset": "err_round"}
            out[name] = {coordinate(task, d) for d in decisions(task)}
    return out


def allocate(fmap: dict[str, dict], cfg: ErrorRoundConfig) -> tuple[dict[str, int], list[str]]:
    """Targeted tasks per template, and the targets no training template visits (which get none).

    Each target coordinate gets a share of ``cfg.tasks`` in proportion to its failures (at least one
    task per template group). The share goes to the training templates whose oracle episodes visit the
    coordinate; when C confused it with other tools, half of it goes instead to templates where such a
    tool is the right one at the same kind of decision (the contrastive pair)."""
    if cfg.min_failures < 1:
        raise ValueError(f"err.min_failures must be at least 1, got {cfg.min_failures}")
    coords = template_coordinates()
    targets = {c: sum(v["failures"].values()) for c, v in fmap.items() if sum(v["failures"].values()) >= cfg.min_failures}
    total = sum(targets.values())
    plan: Counter = Counter()
    unreachable = []
    for c, fails in sorted(targets.items()):
        kind = c.split("|", 1)[0]
        same = [n for n, cs in coords.items() if c in cs]
        if not same:
            unreachable.append(c)
            continue
        confused = fmap[c]["confused_with"]
        pairs = [n for n, cs in coords.items() if n not in same
                 and any(x.startswith(f"{kind}|") and x.split("|", 1)[1] in confused for x in cs)]
        groups = [same, pairs] if pairs else [same]
        share = max(len(groups), round(cfg.tasks * fails / total))
        for g, group in enumerate(groups):
            n = share // len(groups) + (g < share % len(groups))  # the first group takes an odd task
            for i in range(n):
                plan[group[i % len(group)]] += 1
    return dict(sorted(plan.items())), unreachable


def targeted_tasks(plan: dict[str, int], blocked_requests: set[str]) -> tuple[list[Task], int]:
    """Fresh training tasks per template (seeds from ``SEED_BASE``), gated: a request in ``blocked_requests``
    (evaluation splits, validation pool) is skipped for the next seed, and a template that draws only
    blocked requests ``MAX_CONSECUTIVE_DROPS`` times in a row stops the stage. Returns the tasks and the skips."""
    tasks, skipped = [], 0
    for name, n in plan.items():
        seed, drops = SEED_BASE, 0
        while sum(t["template"] == name for t in tasks) < n:
            task = generate_task(name, seed, "train")
            seed += 1
            if task["request"] in blocked_requests:
                skipped, drops = skipped + 1, drops + 1
                if drops >= MAX_CONSECUTIVE_DROPS:
                    raise ValueError(f"template {name}: {drops} fresh seeds in a row gave requests of an evaluation "
                                     f"split or the validation pool; it cannot be targeted")
                continue
            drops = 0
            tasks.append({**task, "dataset": "err_round"})
    leaked = sorted({t for task in tasks for t in task["catalogue"]} & set(HELD_OUT_TOOLS))
    if leaked:
        raise AssertionError(f"held-out tools in targeted training tasks: {leaked}")
    return tasks, skipped


def audit(tasks: list[Task], evaluation: dict[str, list[Task]]) -> dict:
    """The leakage audit's numbers for the targeted tasks against each evaluation split."""
    requests = {t["request"] for t in tasks}
    out = {}
    for split, rows in sorted(evaluation.items()):
        sims = max_jaccard([t["request"] for t in rows], [t["request"] for t in tasks]) if tasks and rows else []
        out[split] = {"request_overlap": sum(t["request"] in requests for t in rows),
                      "request_similarity_max": round(float(max(sims)), 4) if len(sims) else None}
    return out


def oracle_rows(tasks: list[Task]) -> list[dict]:
    """The oracle's episodes on the targeted tasks as SFT rows; every one succeeds under ruler 2."""
    rows = []
    for task in tasks:
        ep: Episode = run_episode(task, OraclePolicy())
        if not judge(task, ep.record())["success"]:
            raise AssertionError(f"{task['id']}: the oracle's episode fails ruler 2")
        rows.append(sft_row(task, ep.record(), "oracle_err"))
    return rows


def cluster_changes(before: list[dict], after: list[dict], targets: set[str]) -> dict:
    """Pass rate per coordinate and half, before and after; targets flagged."""
    def rates(rows: list[dict]) -> dict[tuple[str, str], tuple[int, int]]:
        acc: dict[tuple[str, str], list[int]] = {}
        for r in rows:
            a = acc.setdefault((r["coordinate"], r["half"]), [0, 0])
            a[0] += r["verdict"] == ReplayVerdict.PASS
            a[1] += 1
        return {k: (v[0], v[1]) for k, v in acc.items()}

    b, a = rates(before), rates(after)
    out: dict[str, dict] = {}
    for (coord, half) in sorted(set(b) | set(a)):
        pb, n = b.get((coord, half), (0, 0))
        pa, _ = a.get((coord, half), (0, 0))
        out.setdefault(coord, {"target": coord in targets})[half] = {"n": n, "passed_before": pb, "passed_after": pa}
    return out
