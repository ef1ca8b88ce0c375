"""Stage accept_teacher: judge the teacher's transcripts with both rulers; the episodes the
acceptance ruler (params ``accept_teacher.ruler``, or ``--ruler``) accepts become B's
demonstrations. Study 1 names ruler 1 and writes beside the transcripts (``data/v1/teacher``); the
ruler-2 acceptance is a stage of its own writing ``data/v1/teacher/ruler2``, an input of no published
study."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..artifacts.inputs import read_rows
from ..artifacts.jsonio import read_json, write_json, write_jsonl
from ..artifacts.manifest import write_manifest
from ..config import load_params, stage_config
from ..data.acceptance import AcceptanceConfig, judge_pass, pass_summary, summary
from ..data.teacher import load_setup
from ..errors import InputError
from ..models.registry import ModelStore

PASSES = (("pass1", "distill"), ("pass2", "distill_pass2"))  # each pass's files and the stage writing them


@dataclass(frozen=True)
class Accepted:
    summary: dict  # acceptance's summary.json
    offered: int


def acceptance_config(params: Path, profile: str | None, ruler: str | None) -> AcceptanceConfig:
    """The profile's acceptance ruler, or ``ruler`` where the stage names its own (a named output, which
    then reads no ``accept_teacher`` section: study 1's choice does not make it stale)."""
    if ruler is not None:
        return AcceptanceConfig(ruler)
    cfg, _ = stage_config(load_params(params), "accept_teacher", AcceptanceConfig, profile, where=str(params))
    return cfg


def run(params: Path, store: ModelStore, profile: str | None, data: Path, teacher: Path, out: Path | None = None,
        ruler: str | None = None, say: Callable[[str], None] = print) -> Accepted:
    """Judge ``teacher/pass{1,2}.jsonl.gz``; write ``acceptance.jsonl``, ``summary.json`` and the manifest
    to ``out`` (default: ``teacher``, beside the transcripts), each naming the ruler that accepted."""
    out = teacher if out is None else out
    cfg = acceptance_config(params, profile, ruler)
    setup = load_setup(params, store, profile, data / "tasks" / "train_pool.jsonl", None,
                       n_from=teacher / "pass1.jsonl.gz")
    tasks = {t["id"]: t for t in setup.offered}
    judged, passes, wrote = [], {}, None
    for name, stage in PASSES:
        record = teacher / f"{name}.json"
        if not record.is_file():
            raise InputError(f"{record}: missing; run the {stage} stage first")
        generation = read_json(record)
        if _model(generation["teacher"]) != _model(setup.teacher):
            raise InputError(f"{record}: written by teacher {generation['teacher']['model']} (revision "
                             f"{generation['teacher']['revision']}), but params name {setup.teacher['model']} (revision "
                             f"{setup.teacher['revision']}); rerun the {stage} stage")
        wrote = wrote or generation["teacher"]  # pass 1's record: the engine that generated the transcripts
        transcripts = read_rows(teacher / f"{name}.jsonl.gz", stage)
        rows = judge_pass(tasks, transcripts, str(teacher / f"{name}.jsonl.gz"), cfg.ruler)
        passes[name] = pass_summary(rows, transcripts, generation)
        judged += rows
        say(f"  {name}: {passes[name]['accepted']}/{len(rows)} accepted by {cfg.ruler} (ruler 1 "
            f"{passes[name]['accepted_ruler1']}, ruler 2 {passes[name]['accepted_ruler2']}, the write-up's definition "
            f"{passes[name]['accepted_writeup']}); rejections {passes[name]['rejection_reasons']}")
    if len({r["task_id"] for r in judged if r["accepted"]}) != sum(r["accepted"] for r in judged):
        raise InputError(f"{teacher}: more than one accepted episode for a task (pass 2 must only rerun rejections)")
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(out / "acceptance.jsonl", judged)
    record = summary(setup.cfg, wrote, setup.offered, passes, judged, cfg.ruler)
    write_json(out / "summary.json", record)
    write_manifest(out, _manifest_files(teacher, out), {"profile": setup.profile, "stage": "accept_teacher",
                                                       "ruler": cfg.ruler})
    return Accepted(record, len(setup.offered))


def _model(teacher: dict) -> dict:
    """Which model wrote the transcripts, whatever engine ran it: the cpu profile's teacher moved from
    torch to OpenVINO after its pass 1, whose transcripts OpenVINO reproduces byte for byte
    (params.yaml, models.cpu), so the backend alone is no reason to regenerate them."""
    return {k: v for k, v in teacher.items() if k != "backend"}


def _manifest_files(teacher: Path, out: Path) -> list[Path]:
    """The acceptance's files; beside the transcripts the manifest lists those too (build_sft checks
    them against it), a folder of its own lists only what it holds."""
    own = [out / "acceptance.jsonl", out / "summary.json"]
    if out.resolve() != teacher.resolve():
        return own
    return [teacher / f"{n}{s}" for n, _ in PASSES for s in (".jsonl.gz", ".json")] + own
