"""Benchmark: the same evaluation episodes through (a) a naive loop, one ``generate`` call
per episode per turn (full re-prefill, batch 1), and (b) the rollout engine (lock-step
batches, KV cache kept across turns); then the engine on torch versus MLX.

    python -m scripts.bench_rollout [--episodes 32] [--model smollm2-135m-instruct] [--skip-mlx]

Prints episodes per second for each and the ratios, all measured in this one run.
Target (issue 4): engine / naive >= 4x.
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

from ccl.jsonio import read_jsonl
from ccl.policy.base import GenConfig, ModelPolicy
from ccl.policy.load import load_backend
from ccl.rollout import rollout
from ccl.runtime import run_episode

from .layout import DATA, ROOT
from .model_store import model_store


class NaivePolicy:
    """One HF ``generate`` call per episode per turn on the whole conversation."""

    def __init__(self, backend, gen: GenConfig):
        self.b, self.gen = backend, gen

    @torch.inference_mode()
    def act(self, ep) -> str:
        ids = self.b.tok(self.b.render(ep.messages), return_tensors="pt", add_special_tokens=False)
        out = self.b.model.generate(**ids, max_new_tokens=self.gen.max_new_tokens, do_sample=False,
                                    pad_token_id=self.b.pad_id)
        return self.b.tok.decode(out[0, ids.input_ids.shape[1]:], skip_special_tokens=True)


def timed(fn) -> tuple[float, dict]:
    t0 = time.perf_counter()
    texts = fn()
    dt = time.perf_counter() - t0
    return dt, texts


OPENBLAS = Path("/usr/lib/x86_64-linux-gnu/libopenblas.so.0")


def transcripts(eps) -> dict[str, list[str]]:
    return {e.task["id"]: [m["content"] for m in e.messages] for e in eps}


def engine_run(tasks, backend, gen, batch_size) -> tuple[float, dict]:
    policy = ModelPolicy(backend, gen)
    return timed(lambda: transcripts(ep for _, ep, _ in rollout(tasks, policy, batch_size)))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=32)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--split", default="eval_id")
    ap.add_argument("--skip-mlx", action="store_true")
    ap.add_argument("--mlx-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    tasks = list(read_jsonl(DATA / "tasks" / f"{args.split}.jsonl"))[: args.episodes]
    gen = GenConfig(max_new_tokens=args.max_new_tokens)
    n = len(tasks)
    if args.mlx_only:  # child process: MLX with the system OpenBLAS preloaded
        t, got = engine_run(tasks, load_backend(model_store(), args.model, "mlx"), gen, args.batch_size)
        print(json.dumps({"seconds": t, "transcripts": got}))
        return
    torch_backend = load_backend(model_store(), args.model, "torch")
    t_naive, naive = timed(lambda: transcripts(run_episode(t, NaivePolicy(torch_backend, gen)) for t in tasks))
    t_engine, engine = engine_run(tasks, torch_backend, gen, args.batch_size)
    same = sum(naive[k] == engine[k] for k in naive)
    print(f"{n} episodes of {args.split}, {args.model}, max {args.max_new_tokens} new tokens/turn, "
          f"{torch.get_num_threads()} threads")
    print(f"naive loop (generate per episode per turn): {t_naive:7.1f} s  {n / t_naive:6.3f} episodes/s")
    print(f"rollout engine (batch {args.batch_size}, KV reuse):  {t_engine:7.1f} s  {n / t_engine:6.3f} episodes/s")
    print(f"engine / naive: {t_naive / t_engine:.2f}x  (target >= 4x); identical transcripts: {same}/{n}")
    if args.skip_mlx:
        return
    # MLX in a child process: preloading OpenBLAS for MLX must not touch torch's BLAS here
    env = dict(os.environ)
    if OPENBLAS.exists():
        env["LD_PRELOAD"] = str(OPENBLAS)
    child = subprocess.run([sys.executable, "-m", "scripts.bench_rollout", "--mlx-only", "--episodes", str(args.episodes),
                            "--model", args.model, "--batch-size", str(args.batch_size),
                            "--max-new-tokens", str(args.max_new_tokens), "--split", args.split],
                           env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    res = json.loads(child.stdout.strip().splitlines()[-1])
    same = sum(res["transcripts"][k] == engine[k] for k in engine)
    blas = "OpenBLAS preloaded" if OPENBLAS.exists() else "bundled BLAS (install libopenblas0-pthread)"
    print(f"rollout engine on MLX ({blas}): {res['seconds']:7.1f} s  {n / res['seconds']:6.3f} episodes/s")
    print(f"MLX time / torch time: {res['seconds'] / t_engine:.2f}x; identical transcripts: {same}/{n}")


if __name__ == "__main__":
    main()
