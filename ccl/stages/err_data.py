"""Stage err_data: the error-driven round's training set (issue 40; ``ccl.learn.errors``).

Grades C's answers on the validation replay set (stage val_replay), maps its failures on the map half,
generates training tasks at the failing coordinates, gates them against the evaluation splits and the
validation pool, and writes the oracle's episodes on them beside a replay slice of C's rows. Writes
``failure_map.json`` (both halves; the map half chooses), ``tasks.jsonl``, ``rows.jsonl.gz``,
``train.jsonl.gz``, ``stats.json`` and ``manifest.json``.
"""
from __future__ import annotations

from pathlib import Path

from ..artifacts.inputs import read_rows, split_rows
from ..artifacts.shapes import ChatRow
from ..artifacts.jsonio import write_json, write_jsonl
from ..artifacts.manifest import write_manifest
from ..config import ConfigError, stage_config
from ..learn.errors import (
    HELDOUT,
    MAP,
    ErrorRoundConfig,
    allocate,
    audit,
    failure_map,
    golden,
    grade_all,
    oracle_rows,
    targeted_tasks,
)
from .val_replay import VAL_POOL

FILES = ("failure_map.json", "tasks.jsonl", "rows.jsonl.gz", "train.jsonl.gz", "stats.json")


def graded(data: Path, actions: Path) -> list[dict]:
    """A val_replay run's answers, graded (ruler 2 for final answers); the tasks are the ones it answered."""
    answers = read_rows(actions, "val_replay", need_rows=True)
    asked = {a["task_id"] for a in answers}
    tasks = [t for t in split_rows(data / "tasks", VAL_POOL) if t["id"] in asked]
    return grade_all({t["id"]: t for t in tasks}, golden(tasks), answers)


def run(params: dict, profile: str | None, data: Path, actions: Path, base: Path, out: Path) -> dict:
    cfg, profile = stage_config(params, "err", ErrorRoundConfig, profile)
    rows = graded(data, actions)
    maps = {half: failure_map(rows, half) for half in (MAP, HELDOUT)}
    try:
        plan, unreachable = allocate(maps[MAP], cfg)
        if not plan:
            raise ValueError(f"no coordinate of the map half has {cfg.min_failures} or more failed decisions "
                             f"reachable by a training template: nothing to target")
        evaluation = {p.stem: split_rows(data / "tasks", p.stem) for p in sorted((data / "tasks").glob("eval_*.jsonl"))}
        blocked = {t["request"] for s in evaluation.values() for t in s}
        blocked |= {t["request"] for t in split_rows(data / "tasks", VAL_POOL)}
        tasks, skipped = targeted_tasks(plan, blocked)
    except ValueError as e:
        raise ConfigError(f"err_data: {e}") from None
    new = oracle_rows(tasks)
    kept = read_rows(base, "build_sft", ChatRow, need_rows=True)[: cfg.replay_slice]
    write_json(out / "failure_map.json", {"map_half": maps[MAP], "heldout_half": maps[HELDOUT],
                                          "targets": sorted(c for c, v in maps[MAP].items()
                                                            if sum(v["failures"].values()) >= cfg.min_failures),
                                          "templates": plan, "unreachable_targets": unreachable})
    write_jsonl(out / "tasks.jsonl", tasks)
    write_jsonl(out / "rows.jsonl.gz", new)
    write_jsonl(out / "train.jsonl.gz", kept + new)
    stats = {"profile": profile, "map_decisions": sum(v["decisions"] for v in maps[MAP].values()),
             "map_passed": sum(v["passed"] for v in maps[MAP].values()),
             "targeted_tasks": len(tasks), "skipped_for_overlap": skipped, "templates": plan,
             "unreachable_targets": unreachable,
             "replay_slice": len(kept), "new_rows": len(new), "train_rows": len(kept) + len(new),
             "leakage_audit": audit(tasks, evaluation)}
    write_json(out / "stats.json", stats)
    write_manifest(out, [out / f for f in FILES], {"stage": "err_data"})
    return stats
