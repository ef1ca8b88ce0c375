"""Stage judge: score one configuration's stored transcripts with the validator."""
from __future__ import annotations

from pathlib import Path

from ..artifacts.inputs import read_record, read_rows, split_rows
from ..artifacts.jsonio import write_json, write_jsonl
from ..errors import InputError
from ..judge.audit_checks import audited
from ..judge.judging import judge_rows, metrics

GENERATION_KEYS = ("name", "profile", "model", "backend", "adapter", "splits", "efficiency")


def run(name: str, data: Path, runs: Path) -> dict:
    """Judge ``runs/<name>/episodes.jsonl.gz`` against ``data/tasks``; write ``verdicts.jsonl.gz``
    (one row per episode, with the transcript audit's reasons, ``ccl.judge.audit``) and ``metrics.json``
    beside it, and return the metrics."""
    folder = runs / name
    episodes, generation = folder / "episodes.jsonl.gz", folder / "generation.json"
    for path in (episodes, generation):
        if not path.is_file():
            raise InputError(f"{path}: missing; run the evaluate stage for {name} first")
    gen = read_record(generation, "evaluate")
    missing = [k for k in GENERATION_KEYS if k not in gen]
    if missing:
        raise InputError(f"{generation}: lacks {', '.join(missing)}; rerun the evaluate stage for {name}")
    tasks = {}
    for split in gen["splits"]:
        tasks.update((t["id"], t) for t in split_rows(data / "tasks", split))
    transcripts = read_rows(episodes, "evaluate")
    rows = judge_rows(tasks, transcripts, str(episodes))
    # the post-hoc audit rides along in the verdict rows only: metrics.json (which the adapter
    # cards read) keeps the pre-registered outcomes alone
    write_jsonl(folder / "verdicts.jsonl.gz",
                [audited(row, tasks[t["task_id"]], t["record"]) for row, t in zip(rows, transcripts)])
    result = {k: gen[k] for k in ("name", "profile", "model", "backend", "adapter")}
    result |= {**metrics(rows, gen["splits"]), "efficiency": gen["efficiency"]}
    write_json(folder / "metrics.json", result)
    return result
