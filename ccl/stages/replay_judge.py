"""Stage replay_judge: grade one configuration's stored replay actions and summarise them."""
from __future__ import annotations

from pathlib import Path

from ..artifacts.inputs import read_record, read_rows, split_rows
from ..artifacts.jsonio import write_json, write_jsonl
from ..replay.decisions import golden_rows
from ..replay.grading import grade_rows
from ..replay.metrics import summarise
from ..vocabulary import MAIN_SPLITS


def run(name: str, data: Path, golden: Path, runs: Path) -> dict:
    """Grade ``runs/<name>/actions.jsonl.gz``; write ``verdicts.jsonl.gz`` and ``metrics.json`` beside it."""
    folder = runs / name
    gen = read_record(folder / "generation.json", f"replay for {name}")
    answers = read_rows(folder / "actions.jsonl.gz", f"replay for {name}")
    tasks = {}
    for split in gen["splits"]:
        tasks.update((t["id"], t) for t in split_rows(data / "tasks", split))
    asked = {a["task_id"] for a in answers}
    rows = grade_rows(tasks, golden_rows(golden, gen["splits"], {t: tasks[t] for t in asked}), answers)
    write_jsonl(folder / "verdicts.jsonl.gz", rows)
    pooled = [r for r in rows if r["dataset"] in MAIN_SPLITS]
    result = {k: gen[k] for k in ("name", "profile", "model", "backend", "adapter")}
    result |= {"splits": {s: summarise([r for r in rows if r["dataset"] == s]) for s in gen["splits"]},
               "pooled_main": summarise(pooled) if pooled else None, "efficiency": gen["efficiency"]}
    write_json(folder / "metrics.json", result)
    return result
