"""Stage accept_teacher: judge the teacher's transcripts with both rulers; the episodes ruler 2
accepts become B's demonstrations."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..artifacts.inputs import read_rows
from ..artifacts.jsonio import read_json, write_json, write_jsonl
from ..artifacts.manifest import write_manifest
from ..data.acceptance import judge_pass, pass_summary, summary
from ..data.teacher import load_setup
from ..errors import InputError
from ..models.registry import ModelStore

PASSES = (("pass1", "distill"), ("pass2", "distill_pass2"))  # each pass's files and the stage writing them


@dataclass(frozen=True)
class Accepted:
    summary: dict  # data/v1/teacher/summary.json
    offered: int


def run(params: Path, store: ModelStore, profile: str | None, data: Path, out: Path,
        say: Callable[[str], None] = print) -> Accepted:
    """Judge ``out/pass{1,2}.jsonl.gz``; write ``out/acceptance.jsonl``, ``summary.json`` and the manifest."""
    setup = load_setup(params, store, profile, data / "tasks" / "train_pool.jsonl", None,
                       n_from=out / "pass1.jsonl.gz")
    tasks = {t["id"]: t for t in setup.offered}
    judged, passes = [], {}
    for name, stage in PASSES:
        record = out / f"{name}.json"
        if not record.is_file():
            raise InputError(f"{record}: missing; run the {stage} stage first")
        generation = read_json(record)
        if generation["teacher"] != setup.teacher:
            raise InputError(f"{record}: written by teacher {generation['teacher']['model']}, but params name "
                             f"{setup.teacher['model']}; rerun the {stage} stage")
        transcripts = read_rows(out / f"{name}.jsonl.gz", stage)
        rows = judge_pass(tasks, transcripts, str(out / f"{name}.jsonl.gz"))
        passes[name] = pass_summary(rows, transcripts, generation)
        judged += rows
        say(f"  {name}: {passes[name]['accepted']}/{len(rows)} accepted by ruler 2 ({passes[name]['accepted_ruler1']} "
            f"by ruler 1, {passes[name]['accepted_writeup']} under the write-up's definition); rejections "
            f"{passes[name]['rejection_reasons']}")
    if len({r["task_id"] for r in judged if r["accepted"]}) != sum(r["accepted"] for r in judged):
        raise InputError(f"{out}: more than one accepted episode for a task (pass 2 must only rerun rejections)")
    write_jsonl(out / "acceptance.jsonl", judged)
    record = summary(setup.cfg, setup.teacher, setup.offered, passes, judged)
    write_json(out / "summary.json", record)
    files = [out / f"{n}{s}" for n, _ in PASSES for s in (".jsonl.gz", ".json")]
    write_manifest(out, files + [out / "acceptance.jsonl", out / "summary.json"],
                   {"profile": setup.profile, "stage": "accept_teacher"})
    return Accepted(record, len(setup.offered))
