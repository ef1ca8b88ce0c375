"""Stage distill: the teacher's greedy pass over the offered training tasks (pass 1)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..data.distill import generate_pass, pass_decoding
from ..data.teacher import TeacherSetup, load_setup
from ..models.registry import ModelStore
from ..policy.base import ModelPolicy
from ..policy.load import load_backend

Progress = Callable[[int], None]


def setup(params: Path, store: ModelStore, profile: str | None, data: Path, n: int | None) -> TeacherSetup:
    """The distill config and the offered tasks: the first ``n`` of ``data``'s training pool."""
    return load_setup(params, store, profile, data / "tasks" / "train_pool.jsonl", n)


def run(s: TeacherSetup, store: ModelStore, out: Path, model_path: str | None = None,
        progress: Progress = lambda n: None) -> list[dict]:
    """Write ``out/pass1.jsonl.gz`` (one transcript per offered task) and ``out/pass1.json``."""
    backend = load_backend(store, s.models.teacher, s.models.teacher_backend, model_path=model_path)
    gen = pass_decoding(s.cfg, 1)
    policy = ModelPolicy(backend, gen, name=s.teacher["model"])
    return generate_pass("pass1", 1, s.offered, policy, gen, s.cfg, s.teacher, s.pool_sha256, out, progress)
