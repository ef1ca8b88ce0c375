"""Benchmark: graded decisions per second (replay) against graded episodes per second, in one run.

    python -m scripts.bench_replay [--config A_base] [--profile cpu] [--tasks N]

The same configuration, model and decoding settings grade the same tasks twice: as whole
episodes (the evaluate stage's rollout, then the validator) and as the tasks' golden decisions
(answer each once from its frozen prefix, then the replay grader). Both use the token-level
engine with the shared head cached. Prints seconds, episodes/s, decisions/s and the ratio of
graded units per second. The golden decisions are built here from the task files, exactly as
stage build_replay builds them.
"""
from __future__ import annotations

import argparse
import time

import torch

from ccl.episode.prompt import system_prompt
from ccl.episode.rollout import rollout
from ccl.judge.judging import verdict_row
from ccl.policy.base import GenConfig, ModelPolicy
from ccl.policy.load import load_backend
from ccl.replay.decisions import answer_decisions, decisions
from ccl.replay.grading import grade_rows
from ccl.stages.evaluate import plan
from ccl.vocabulary import STUDENT_BASE, STUDENT_FEWSHOT

from .layout import DATA, PARAMS
from .model_store import model_store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=STUDENT_BASE, help=f"{STUDENT_BASE} or {STUDENT_FEWSHOT}")
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--tasks", type=int, default=None, help="first N of the profile's tasks (default all)")
    args = ap.parse_args()
    p = plan(PARAMS, args.profile, args.config, None, DATA)
    tasks = p.tasks[: args.tasks]
    by_id = {t["id"]: t for t in tasks}
    fewshot = args.config == STUDENT_FEWSHOT
    gen, bs = GenConfig(max_new_tokens=p.cfg.max_new_tokens), p.cfg.batch_size
    backend = load_backend(model_store(), args.model, "torch")
    golden = [d for t in tasks for d in decisions(t)]
    print(f"{len(tasks)} tasks ({args.profile} profile, {args.config}), {len(golden)} golden decisions, {args.model}, "
          f"batch {bs}, max {gen.max_new_tokens} new tokens/turn, {torch.get_num_threads()} threads")

    policy = ModelPolicy(backend, gen)
    t0 = time.perf_counter()
    episodes = [verdict_row(task, {"task_id": task["id"], "record": ep.record()})
                for task, ep, _, _ in rollout(tasks, policy, bs, fewshot=fewshot)]
    t_ep = time.perf_counter() - t0

    policy = ModelPolicy(backend, gen)
    system = {t: system_prompt(task, fewshot=True) for t, task in by_id.items()} if fewshot else None
    t0 = time.perf_counter()
    rows = grade_rows(by_id, golden, answer_decisions(by_id, golden, policy, bs, system=system))
    t_dec = time.perf_counter() - t0

    ep_rate, dec_rate = len(episodes) / t_ep, len(rows) / t_dec
    print(f"episodes:  {t_ep:7.1f} s  {ep_rate:6.3f} graded episodes/s  "
          f"(strict success {sum(r['verdict']['success'] for r in episodes)}/{len(episodes)})")
    print(f"decisions: {t_dec:7.1f} s  {dec_rate:6.3f} graded decisions/s  "
          f"(pass {sum(r['verdict'] == 'pass' for r in rows)}/{len(rows)})")
    print(f"graded units per second, decisions / episodes: {dec_rate / ep_rate:.2f}x; "
          f"{len(rows) / len(episodes):.2f} decisions per task; the whole set: {t_dec / t_ep:.2f}x the episodes' time")


if __name__ == "__main__":
    main()
