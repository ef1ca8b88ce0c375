"""Stage distill_pass2: one seeded sample for every task the teacher's greedy pass failed."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..artifacts.inputs import read_rows
from ..data.acceptance import judge_pass, pass2_tasks
from ..data.distill import generate_pass, pass_decoding
from ..data.teacher import TeacherSetup, load_setup
from ..models.registry import ModelStore
from ..policy.base import ModelPolicy
from ..policy.load import load_backend
from ..vocabulary import RULER1


@dataclass(frozen=True)
class Plan:
    setup: TeacherSetup
    pass1_judged: list[dict]  # pass 1's episodes under the current validator
    todo: list[dict]  # the tasks pass 2 samples


def plan(params: Path, store: ModelStore, profile: str | None, data: Path, out: Path) -> Plan:
    """Judge pass 1 (``out/pass1.jsonl.gz``) and choose the tasks to resample."""
    pass1 = out / "pass1.jsonl.gz"
    s = load_setup(params, store, profile, data / "tasks" / "train_pool.jsonl", None, n_from=pass1)
    # pass 2 chooses by ruler 1 (pass2_tasks reads accepted_ruler1): it ran before ruler 2 existed
    judged = judge_pass({t["id"]: t for t in s.offered}, read_rows(pass1, "distill"), str(pass1), RULER1)
    return Plan(s, judged, pass2_tasks(s.offered, judged, s.cfg))


def run(p: Plan, store: ModelStore, out: Path, model_path: str | None = None,
        progress: Callable[[int], None] = lambda n: None) -> list[dict]:
    """Write ``out/pass2.jsonl.gz`` and ``out/pass2.json``; the teacher is loaded only if a task is left."""
    s, gen = p.setup, pass_decoding(p.setup.cfg, 2)
    policy = None
    if p.todo:
        backend = load_backend(store, s.models.teacher, s.models.teacher_backend, model_path=model_path)
        policy = ModelPolicy(backend, gen, name=s.teacher["model"])
    return generate_pass("pass2", 2, p.todo, policy, gen, s.cfg, s.teacher, s.pool_sha256, out, progress)
