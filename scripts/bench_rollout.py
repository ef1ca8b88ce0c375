"""Benchmark of record for evaluation speed: the cpu profile's evaluation episodes through
three engines in one run, on the same tasks, prompts and greedy decoding:

(a) naive: one HF ``generate`` call per episode per turn (full re-prefill, batch 1), on the
    first ``--naive-episodes`` tasks only (it is slow);
(b) round 1: lock-step batches by turn, KV cache kept across turns (``ModelPolicy(continuous=False)``);
(c) round 2: token-level refill with length-bucketed prefill (:mod:`ccl.policy.torch_continuous`).

    python -m scripts.bench_rollout [--model smollm2-135m-instruct] [--config A_base] [--naive-episodes 16] [--mlx]

Prints episodes per second, the ratios round 2 / round 1 and round 2 / naive (per episode),
identical transcripts and identical verdicts against round 1, and round 2's efficiency
record (prefill padding, slot use, decode-only and prefill speeds, executed and useful
FLOPs against this machine's float32 matrix-multiply rate measured in the same run).
Targets (issue 17): round 2 >= 2x round 1; prefill padding < 15%.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import torch

from ccl.devices import cpu_record
from ccl.episode.rollout import rollout
from ccl.judge.judging import verdict_row
from ccl.policy.base import GenConfig, ModelPolicy
from ccl.policy.load import load_backend
from ccl.stages.evaluate import plan
from ccl.vocabulary import STUDENT_BASE, STUDENT_FEWSHOT

from .gemm import matmul_gflops
from .layout import DATA, PARAMS, ROOT
from .model_store import model_store

OPENBLAS = Path("/usr/lib/x86_64-linux-gnu/libopenblas.so.0")


class NaivePolicy:
    """One HF ``generate`` call per episode per turn on the whole conversation."""

    def __init__(self, backend, gen: GenConfig):
        self.b, self.gen = backend, gen

    @torch.inference_mode()
    def act(self, ep, memory=None) -> str:
        ids = self.b.tok(self.b.render(ep.messages), return_tensors="pt", add_special_tokens=False)
        out = self.b.model.generate(**ids, max_new_tokens=self.gen.max_new_tokens, do_sample=False,
                                    pad_token_id=self.b.pad_id)
        return self.b.tok.decode(out[0, ids.input_ids.shape[1]:], skip_special_tokens=True)


def run_engine(tasks, policy, batch_size: int, fewshot: bool) -> tuple[float, dict]:
    """Seconds and {task id: (message contents, strict success)}."""
    t0 = time.perf_counter()
    eps = [(task, ep) for task, ep, _, _ in rollout(tasks, policy, batch_size, fewshot=fewshot)]
    dt = time.perf_counter() - t0
    return dt, {t["id"]: outcome(t, ep) for t, ep in eps}


def outcome(task, ep) -> tuple[list[str], bool]:
    row = {"task_id": task["id"], "record": ep.record()}
    return [m["content"] for m in ep.messages], verdict_row(task, row)["verdict"]["success"]


def compare(a: dict, b: dict) -> tuple[int, int]:
    """(identical transcripts, identical strict verdicts) over the tasks of ``a``."""
    return sum(a[k][0] == b[k][0] for k in a), sum(a[k][1] == b[k][1] for k in a)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--config", default=STUDENT_BASE, help=f"{STUDENT_BASE} or {STUDENT_FEWSHOT} (the worked examples)")
    ap.add_argument("--profile", default="cpu", help="whose evaluation settings and tasks")
    ap.add_argument("--episodes", type=int, default=None, help="first N of the profile's tasks (default all)")
    ap.add_argument("--naive-episodes", type=int, default=16)
    ap.add_argument("--mlx", action="store_true", help="also round 1 on MLX, in a child process")
    ap.add_argument("--mlx-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    p = plan(PARAMS, args.profile, args.config, None, DATA)
    tasks = p.tasks[: args.episodes]
    gen, bs, fewshot = GenConfig(max_new_tokens=p.cfg.max_new_tokens), p.cfg.batch_size, args.config == STUDENT_FEWSHOT
    if args.mlx_only:  # child process: MLX with the system OpenBLAS preloaded
        t, got = run_engine(tasks, ModelPolicy(load_backend(model_store(), args.model, "mlx"), gen), bs, fewshot)
        print(json.dumps({"seconds": t, "outcomes": got}))
        return
    n, limit = len(tasks), matmul_gflops()
    backend = load_backend(model_store(), args.model, "torch")
    print(f"{n} episodes ({args.profile} profile, {args.config}), {args.model}, batch {bs}, "
          f"max {gen.max_new_tokens} new tokens/turn, {torch.get_num_threads()} threads; "
          f"float32 matmul limit {limit:.0f} GFLOP/s")
    naive_tasks = tasks[: args.naive_episodes]
    t_naive, naive = run_engine(naive_tasks, NaivePolicy(backend, gen), 1, fewshot)
    t1, r1 = run_engine(tasks, ModelPolicy(backend, gen, continuous=False), bs, fewshot)
    round2 = ModelPolicy(backend, gen)
    t2, r2 = run_engine(tasks, round2, bs, fewshot)
    e = round2.stats.engine.summary()
    rate = lambda s, k: k / s  # noqa: E731
    print(f"naive (generate per turn, {len(naive_tasks)} episodes): {t_naive:7.1f} s  "
          f"{rate(t_naive, len(naive_tasks)):6.3f} episodes/s")
    print(f"round 1 (lock-step by turn):            {t1:7.1f} s  {rate(t1, n):6.3f} episodes/s")
    print(f"round 2 (token-level refill):           {t2:7.1f} s  {rate(t2, n):6.3f} episodes/s")
    same, verdicts = compare(r1, r2)
    naive_same, _ = compare(naive, r2)
    print(f"round 2 / round 1: {t1 / t2:.2f}x (target >= 2x); identical transcripts {same}/{n}, "
          f"identical strict verdicts {verdicts}/{n}")
    print(f"round 2 / naive: {rate(t2, n) / rate(t_naive, len(naive_tasks)):.2f}x per episode; "
          f"identical transcripts {naive_same}/{len(naive_tasks)}")
    busy = e["prefill_s"] + e["decode_s"]
    print(f"round 2 engine: prefill padding {100 * e['prefill_padding']:.1f}% (target < 15%), "
          f"decode slot use {100 * e['decode_slot_use']:.1f}%, prefill {e['prefill_tok_per_s']} tok/s, "
          f"decode {e['decode_tok_per_s']} tok/s, {e['relayouts']} relayouts")
    print(f"round 2 FLOPs: {e['gflop_executed']:.0f} GFLOP executed, {e['gflop_useful']:.0f} useful; "
          f"executed {e['gflop_executed'] / busy:.1f} GFLOP/s in forward passes = "
          f"{100 * e['gflop_executed'] / busy / limit:.0f}% of the matmul limit; "
          f"useful over the whole run {e['gflop_useful'] / t2:.1f} GFLOP/s = {100 * e['gflop_useful'] / t2 / limit:.0f}%")
    print(json.dumps({"episodes": n, "naive_episodes": len(naive_tasks), "naive_s": round(t_naive, 1),
                      "round1_s": round(t1, 1), "round2_s": round(t2, 1), "identical_transcripts": same,
                      "identical_verdicts": verdicts, "matmul_gflops": round(limit, 1), "engine": e,
                      **cpu_record()}))
    if not args.mlx:
        return
    # MLX in a child process: preloading OpenBLAS for MLX must not touch torch's BLAS here
    env = dict(os.environ)
    if OPENBLAS.exists():
        env["LD_PRELOAD"] = str(OPENBLAS)
    cmd = [sys.executable, "-m", "scripts.bench_rollout", "--mlx-only", "--model", args.model, "--config",
           args.config, "--profile", args.profile] + (["--episodes", str(args.episodes)] if args.episodes else [])
    child = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    res = json.loads(child.stdout.strip().splitlines()[-1])
    same = sum(res["outcomes"][k][0] == r1[k][0] for k in r1)
    print(f"round 1 on MLX: {res['seconds']:7.1f} s  {rate(res['seconds'], n):6.3f} episodes/s; "
          f"MLX time / torch round 1 time {res['seconds'] / t1:.2f}x; identical transcripts {same}/{n}")


if __name__ == "__main__":
    main()
