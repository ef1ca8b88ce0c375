"""Stage dpo_pairs: DPO's preference pairs from the student's own mistakes (issue 41; ``ccl.learn.pairs``).

Reads one DAgger iteration's folder (the first: the states C itself visits on fresh training tasks,
with the grade of C's turn at each) and writes ``pairs.jsonl.gz`` (TRL's conversational preference
format plus where each pair came from), ``stats.json`` and ``manifest.json``, all byte-stable. Reads no
model and no evaluation split: the tasks are the training-pool tasks the rollout played.
"""
from __future__ import annotations

from pathlib import Path

from ..artifacts.inputs import read_rows, split_rows
from ..artifacts.jsonio import write_json, write_jsonl
from ..artifacts.manifest import write_manifest
from ..errors import StageError
from ..learn.pairs import episode_pairs, pair_stats

TRAIN_POOL = "train_pool"  # the split DAgger's rollouts play (ccl.stages.dagger_rollout; importing it loads models)
FILES = ("pairs.jsonl.gz", "stats.json")


def run(data: Path, source: Path, out: Path, keep_unrecoverable: bool = False, source_label: str | None = None) -> dict:
    """Pairs from the iteration folder ``source`` into ``out``; returns the statistics. ``source_label``: how
    the records name the source (the caller's repository-relative path, so every clone writes the same
    bytes); default the path as given."""
    label = str(source) if source_label is None else source_label
    transcripts = read_rows(source / "episodes.jsonl.gz", "dagger_rollout", need_rows=True)
    visits = read_rows(source / "visits.jsonl.gz", "dagger_rollout", need_rows=True)
    if visits and "student_passes" not in visits[0]:
        raise StageError(f"{source / 'visits.jsonl.gz'}: visits carry no grade of the student's turn "
                         f"(written before ccl.learn.turn_grade); rerun that dagger_rollout stage")
    tasks = {t["id"]: t for t in split_rows(data / "tasks", TRAIN_POOL, need_rows=True)}
    by_task: dict[str, list[dict]] = {}
    for v in visits:
        by_task.setdefault(v["task_id"], []).append(v)
    pairs = []
    for row in transcripts:
        task_id = row["task_id"]
        if task_id not in tasks:
            raise StageError(f"{source / 'episodes.jsonl.gz'}: task {task_id} is not in the training pool")
        mine = sorted(by_task.get(task_id, []), key=lambda v: v["turn"])
        pairs += episode_pairs(tasks[task_id], row["record"]["messages"], mine, keep_unrecoverable)
    write_jsonl(out / "pairs.jsonl.gz", pairs)
    stats = {**pair_stats(pairs, visits), "source": label, "keep_unrecoverable": keep_unrecoverable}
    write_json(out / "stats.json", stats)
    write_manifest(out, [out / f for f in FILES], {"stage": "dpo_pairs", "source": label})
    return stats
