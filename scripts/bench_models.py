"""Measure the registered models available offline: size, load time, prefill and decode speed.

    python -m scripts.bench_models [--models smollm2-135m-instruct qwen2.5-coder-0.5b-instruct]

Prints one Markdown table row per model (used for MODEL_SELECTION.md). Untrained success
comes from the evaluation stage (results/runs/A_base and teacher), not from here.
"""
from __future__ import annotations

import argparse
import json
import time

import torch

from ccl.episode.runtime import Episode
from ccl.models.weights import model_dir, package_file
from ccl.policy.base import GenConfig
from ccl.policy.torch_backend import TorchBackend
from ccl.world.tasks import generate_task

from .model_store import model_store


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="+", default=["smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct"])
    ap.add_argument("--batch", type=int, default=8)
    args = ap.parse_args()
    print("| model | GGUF MB | params (M) | convert s (once) | cached load s | prefill tok/s | decode tok/s (batch %d) |" % args.batch)
    print("| --- | --- | --- | --- | --- | --- | --- |")
    store = model_store()
    for name in args.models:
        spec = store.spec(name)
        gguf_mb = sum(package_file(spec, f["package"], f["path"]).stat().st_size for f in spec.files) / 2**20
        folder = model_dir(store, name)
        convert_s = json.loads((folder / "ccl_source.json").read_text()).get("convert_seconds")
        t0 = time.perf_counter()
        b = TorchBackend(folder)
        load_s = time.perf_counter() - t0
        params = sum(p.numel() for p in b.model.parameters()) / 1e6
        eps = [Episode(generate_task("ch_contact_email", s)) for s in range(args.batch)]
        prompts = [b.render(e.messages) for e in eps]
        n_prompt = sum(len(b.tok(p, add_special_tokens=False).input_ids) for p in prompts)
        t0 = time.perf_counter()
        b.generate([{} for _ in prompts], prompts, GenConfig(max_new_tokens=1), [0] * len(prompts))
        prefill = n_prompt / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        outs = b.generate([{} for _ in prompts], prompts, GenConfig(max_new_tokens=33), [0] * len(prompts))
        total = time.perf_counter() - t0
        new = sum(o.new_tokens for o in outs)
        decode = (new - len(prompts)) / max(total - n_prompt / prefill, 1e-9)
        print(f"| {name} | {gguf_mb:.0f} | {params:.1f} | {convert_s} | {load_s:.1f} | {prefill:.0f} | {decode:.1f} |")
        del b
        torch.cuda.empty_cache() if torch.cuda.is_available() else None


if __name__ == "__main__":
    main()
