"""Benchmark: our packed-episode trainer against TRL's SFTTrainer, side by side in one run.

    python -m scripts.bench_train                     # 16 oracle episodes, the embedded student
    python -m scripts.bench_train --episodes 32 --model smollm2-135m-instruct

Both train the same LoRA (the cpu profile's recipe) on the same episodes for one pass
over every assistant turn, so both see exactly the same supervised tokens:
(a) ours: each episode packed into one sequence, every assistant turn supervised, 8
    episodes per optimizer step;
(b) TRL: one prompt-completion example per assistant turn (the usual alternative),
    completion-only loss, 8 examples per optimizer step.
Prints processed and supervised tokens per second, wall time, the speed ratio, and our
achieved FLOP/s against this machine's measured float32 matrix-multiply rate.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import torch

from ccl.config import load_params, stage_config
from ccl.jsonio import read_jsonl
from ccl.models.weights import model_dir
from ccl.train import torch_trainer as T
from ccl.train.recipe import TrainRecipe, adapted_layers, learning_rate

from .gemm import matmul_gflops
from .layout import DATA, PARAMS
from .model_store import model_store


def ours(folder: Path, recipe: TrainRecipe, rows: list[dict]) -> dict:
    tm = T.load_for_training(folder, recipe, 0, "cpu")
    packed = [tm.pack(r["messages"], recipe.max_length) for r in rows]
    opt = T.make_optimizer(tm, recipe)
    per = recipe.episodes_per_step
    t = time.perf_counter()
    for step in range(0, len(packed), per):
        T.train_step(tm, opt, packed[step:step + per], recipe, learning_rate(step // per, recipe))
    wall = time.perf_counter() - t
    return {"wall_s": wall, "tokens": sum(len(p.input_ids) for p in packed),
            "targets": sum(p.n_targets for p in packed), "steps": -(-len(packed) // per),
            "params": sum(p.numel() for n, p in tm.model.named_parameters() if "lora" not in n),
            "layers": tm.model.config.num_hidden_layers}


def trl(folder: Path, recipe: TrainRecipe, rows: list[dict]) -> dict:
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    examples = [{"prompt": r["messages"][:k], "completion": [m]}
                for r in rows for k, m in enumerate(r["messages"]) if m["role"] == "assistant"]
    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    n_layers = model.config.num_hidden_layers
    lora = LoraConfig(r=recipe.rank, lora_alpha=recipe.scale * recipe.rank, lora_dropout=recipe.dropout,
                      target_modules=list(T.LINEAR_NAMES),
                      layers_to_transform=adapted_layers(n_layers, recipe.adapt_fraction), task_type="CAUSAL_LM")
    with tempfile.TemporaryDirectory() as out:
        args = SFTConfig(output_dir=out, per_device_train_batch_size=recipe.batch_size,
                         gradient_accumulation_steps=recipe.grad_accum, num_train_epochs=1,
                         learning_rate=recipe.lr, warmup_steps=recipe.warmup, lr_scheduler_type="cosine",
                         max_grad_norm=recipe.clip, weight_decay=recipe.weight_decay, max_length=recipe.max_length,
                         completion_only_loss=True, packing=False, gradient_checkpointing=False,
                         report_to=[], save_strategy="no", logging_steps=1000, use_cpu=True, bf16=False,
                         dataloader_num_workers=0, seed=0, disable_tqdm=True)
        trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(examples),
                             processing_class=tok, peft_config=lora)
        data = trainer.train_dataset
        tokens = sum(len(x) for x in data["input_ids"])
        # this TRL version turns its completion mask into a "labels" column (-100 = no loss)
        targets = sum(sum(t != -100 for t in lab) for lab in data["labels"])
        t = time.perf_counter()
        trainer.train()
        wall = time.perf_counter() - t
    return {"wall_s": wall, "tokens": tokens, "targets": targets, "examples": len(examples),
            "steps": trainer.state.global_step}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=16)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--train-file", type=Path, default=DATA / "sft" / "oracle_train.jsonl")
    args = ap.parse_args(argv)
    recipe, _ = stage_config(load_params(PARAMS), "train", TrainRecipe, "cpu")
    recipe = dataclasses.replace(recipe, gradient_checkpointing=False)
    rows = list(read_jsonl(args.train_file))[: args.episodes]
    folder = model_dir(model_store(), args.model)
    peak = matmul_gflops()
    a = ours(folder, recipe, rows)
    b = trl(folder, recipe, rows)
    peak2 = matmul_gflops()
    # forward ~2 FLOPs per weight per token; backward through frozen weights ~2 more, but
    # only above the lowest adapted block (LoRA's own weights are negligible)
    frac = len(adapted_layers(a["layers"], recipe.adapt_fraction)) / a["layers"]
    flops = a["tokens"] * a["params"] * (2 + 2 * frac)
    print(f"episodes {len(rows)}, recipe lr {recipe.lr}, {recipe.batch_size} x {recipe.grad_accum} per step")
    for name, r in (("ours (packed episodes)", a), ("TRL SFTTrainer (one example per turn)", b)):
        print(f"{name:40s} wall {r['wall_s']:7.1f} s  steps {r['steps']:3d}  tokens {r['tokens']:6d} "
              f"({r['tokens'] / r['wall_s']:6.1f}/s)  targets {r['targets']}")
    print(f"speed-up end to end (TRL wall / ours): {b['wall_s'] / a['wall_s']:.2f}x (target >= 1.5x)")
    print(f"ours: ~{flops / a['wall_s'] / 1e9:.1f} GFLOP/s achieved vs {min(peak, peak2):.1f}-{max(peak, peak2):.1f} "
          f"GFLOP/s measured float32 matmul (1024^3) = {flops / a['wall_s'] / 1e9 / max(peak, peak2):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
