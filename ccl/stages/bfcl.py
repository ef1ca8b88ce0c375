"""Stage bfcl (and bfcl_run): one configuration answers the sampled BFCL questions through the study's
prompt path (ccl.external.bfcl), chosen as for evaluation: a baseline, or a trained run with its adapter;
A_fewshot with its worked examples; the oracle with each question's first possible answer. Writes each
answer's text and token counts, no verdict (stage bfcl_score checks)."""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..artifacts.jsonio import write_json, write_jsonl
from ..config import stage_with_models
from ..external import bfcl_lib
from ..external.bfcl import answer
from ..external.bfcl_config import BfclConfig
from ..external.bfcl_questions import Question, gold_text
from ..policy.base import GenConfig
from ..policy.load import load_policy
from ..resources import peak_memory_gb
from ..vocabulary import STUDENT_FEWSHOT
from .evaluate import who_plays


@dataclass(frozen=True)
class Plan:
    name: str
    cfg: BfclConfig
    profile: str
    model: str | None  # None for the oracle
    backend: str | None
    adapter: Path | None


def plan(params: Path, profile: str | None, name: str, adapter: Path | None) -> Plan:
    cfg, models, profile = stage_with_models(params, "bfcl", BfclConfig, profile)
    model, backend = who_plays(name, models, adapter)
    return Plan(name, cfg, profile, model, backend, adapter)


def _oracle_rows(qs: list[Question]) -> list[dict]:
    return [{"id": q.id, "category": q.category, "text": gold_text(q), "new_tokens": 0, "prompt_tokens": 0}
            for q in qs]


def run(p: Plan, store, qs: list[Question], out: Path, model_path: str | None = None,
        progress: Callable[[int], None] = lambda n: None) -> dict:
    """Answer the sample's questions ``qs`` (``bfcl_inputs.read_sample``, read before this is called so that
    a bad sample fails before the model loads) with ``p``'s configuration; write answers and the record."""
    stats = None
    if p.model is None:
        start = time.perf_counter()
        rows = _oracle_rows(qs)
    else:
        gen = GenConfig(max_new_tokens=p.cfg.max_new_tokens)
        policy = load_policy(store, p.model, p.backend, p.adapter, gen, model_path)
        start = time.perf_counter()  # answering only: loading and converting the model is not timed
        rows = answer(policy, qs, p.cfg.batch_size, fewshot=p.name == STUDENT_FEWSHOT, progress=progress)
        stats = policy.stats
    seconds = time.perf_counter() - start
    folder = out / p.name
    write_jsonl(folder / "answers.jsonl.gz", rows)
    record = {"name": p.name, "profile": p.profile, "model": p.model, "backend": p.backend,
              "adapter": str(p.adapter) if p.adapter else None, "bfcl_eval": bfcl_lib.version(),
              "max_new_tokens": p.cfg.max_new_tokens, "questions": len(rows), "wall_s": round(seconds, 2),
              "questions_per_s": round(len(rows) / seconds, 3) if seconds else None,
              "gen_tokens": getattr(stats, "new_tokens", 0), "prompt_tokens": getattr(stats, "prompt_tokens", 0),
              "peak_mem_gb": peak_memory_gb()}
    write_json(folder / "generation.json", record)
    return record
