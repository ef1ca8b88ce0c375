"""Stage judge: score one configuration's stored transcripts with both rulers."""
from __future__ import annotations

from pathlib import Path

from ..artifacts.inputs import read_record, read_rows, split_rows
from ..artifacts.jsonio import write_json, write_jsonl
from ..errors import InputError
from ..judge.judging import judge_rows, metrics, ruler2_metrics

RULER2_METRICS = "metrics_ruler2.json"  # beside metrics.json
GENERATION_KEYS = ("name", "profile", "model", "backend", "adapter", "splits", "efficiency")


def run(name: str, data: Path, runs: Path) -> dict:
    """Judge ``runs/<name>/episodes.jsonl.gz`` against ``data/tasks``; write ``verdicts.jsonl.gz``
    (one row per episode, with ruler 1's verdict and ruler 2's), ``metrics.json`` (ruler 1's) and
    ``metrics_ruler2.json`` beside it, and return ruler 1's metrics."""
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
    write_jsonl(folder / "verdicts.jsonl.gz", rows)
    # metrics.json (which the adapter cards and the compact table read) keeps ruler 1's outcomes
    # alone, byte for byte as pre-registered; ruler 2's, post hoc, go to a file of their own
    head = {k: gen[k] for k in ("name", "profile", "model", "backend", "adapter")}
    result = {**head, **metrics(rows, gen["splits"]), "efficiency": gen["efficiency"]}
    write_json(folder / "metrics.json", result)
    write_json(folder / RULER2_METRICS, {**head, **ruler2_metrics(rows, gen["splits"])})
    return result
