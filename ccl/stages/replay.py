"""Stage replay: one configuration answers every golden decision once (no grading here).

The configuration is chosen as for evaluation (a baseline, or a trained run with its
adapter) and decodes with the same settings; A+ sees its few-shot system prompt in place
of the standard one. Writes ``<name>/actions.jsonl.gz`` (per decision: the model's text and
token counts; no timing, so the same decoding gives the same bytes) and ``generation.json``
(model, splits, speed). Grading is stage replay_judge, so a validator change never reruns this.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from ..artifacts.jsonio import write_json, write_jsonl
from ..episode.evaluate_config import replay_cap
from ..episode.prompt import system_prompt
from ..policy.base import GenConfig
from ..policy.load import load_policy
from ..replay.decisions import answer_decisions, golden_rows
from ..resources import peak_memory_gb
from ..vocabulary import ORACLE, STUDENT_FEWSHOT, precision_fields
from .evaluate import Plan


def replayed_tasks(p: Plan) -> dict[str, dict]:
    """The evaluated tasks whose decisions build_replay froze: of each split's evaluated tasks (in
    file order), the first ``replay_cap`` -- fewer than evaluation runs when
    ``replay_tasks_per_split`` is set, so ``p.tasks`` itself would ask for decisions never frozen."""
    kept: dict[str, dict] = {}
    for split in p.cfg.splits:
        of_split = [t for t in p.tasks if t["dataset"] == split]
        kept.update((t["id"], t) for t in of_split[: replay_cap(p.cfg, split)])
    return kept


def run(p: Plan, store, golden: Path, out: Path, model_path: str | None = None,
        progress: Callable[[int, int], None] = lambda done, total: None) -> dict:
    """Answer the golden decisions of ``p``'s tasks with ``p``'s configuration; return the generation record."""
    tasks = replayed_tasks(p)
    rows = golden_rows(golden, p.cfg.splits, tasks)
    gen = GenConfig(max_new_tokens=p.cfg.max_new_tokens)
    policy = load_policy(store, ORACLE if p.model is None else p.model, p.backend, p.adapter, gen, model_path,
                         p.precision)  # the evaluation's precision (models.student_precision for the student)
    system = None
    if p.name == STUDENT_FEWSHOT:  # the few-shot variant's own system prompt, per task
        system = {t: system_prompt(task, fewshot=True) for t, task in tasks.items()}
    start = time.perf_counter()
    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        progress(done[0], len(rows))

    answers = answer_decisions(tasks, rows, policy, p.cfg.batch_size, system=system, oracle=p.model is None,
                               progress=tick)
    seconds = time.perf_counter() - start
    folder = out / p.name
    write_jsonl(folder / "actions.jsonl.gz", answers)
    stats = getattr(policy, "stats", None)
    record = {"name": p.name, "profile": p.profile, "model": p.model, "backend": p.backend,
              **precision_fields(p.precision), "adapter": str(p.adapter) if p.adapter else None,
              "splits": list(p.cfg.splits), "efficiency": {"decisions": len(answers), "wall_s": round(seconds, 2),
                             "decisions_per_s": round(len(answers) / seconds, 3) if seconds else None,
                             "gen_tokens": getattr(stats, "new_tokens", 0),
                             "prompt_tokens": getattr(stats, "prompt_tokens", 0),
                             "peak_mem_gb": peak_memory_gb()}}
    write_json(folder / "generation.json", record)
    return record
