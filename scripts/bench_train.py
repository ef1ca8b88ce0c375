"""Benchmark of record for training speed: three trainers side by side in one run.

    python -m scripts.bench_train                     # 32 oracle episodes, the embedded student
    python -m scripts.bench_train --episodes 64 --model smollm2-135m-instruct

All train the same LoRA (the cpu profile's recipe) on the same episodes for one pass over
every assistant turn, so all see exactly the same supervised tokens:
(a) round 2 (the trainer in use): each episode packed into one sequence, the shared prompt
    head run once per micro-batch, logits only at each row's targets (ccl.train.shared_head);
(b) round 1: the same packed episodes, every row computed whole, logits at the union of the
    micro-batch's target positions (``torch_trainer.summed_nll_round1``);
(c) TRL's SFTTrainer: one prompt-completion example per assistant turn (the usual
    alternative), completion-only loss, the same examples per optimizer step.
Prints tokens per second (the episodes' tokens, the same count for (a) and (b)), wall time,
the ratios round 2 / round 1 (target >= 1.3x, issue 17) and round 2 / TRL, whether the
loss curves of (a) and (b) agree within float tolerance, and the achieved FLOP/s against
this machine's float32 matrix-multiply rate measured in the same run.

    python -m scripts.bench_train --precision [--episodes 32] [--rounds 2] [--out FILE]

instead times the trainer in use in float32 and in bfloat16 (issue 56), alternating, on the same
episodes from the same start (the cpu C recipe): seconds per step after the first (which packs
oneDNN's kernels), the ratio bfloat16/float32 (targets: 3x with AMX, 1.5x with AVX512-BF16 alone),
the largest relative loss difference, one profiled step per precision grouped by where the time
goes, the share of the matrix units' rate at the student's shapes the step reaches, and the CPU
with its kernel path (``ccl.devices.cpu_record``).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

import torch

from ccl.artifacts.jsonio import read_jsonl
from ccl.config import load_params, stage_config
from ccl.models.weights import model_dir
from ccl.train import torch_trainer as T
from ccl.train.recipe import TrainRecipe, adapted_layers, learning_rate

from .gemm import matmul_gflops
from .layout import DATA, PARAMS
from .model_store import model_store


def ours(folder: Path, recipe: TrainRecipe, rows: list[dict], nll_fn: T.NllFn = T.summed_nll,
         profiled: bool = False) -> dict:
    """One pass over ``rows`` from the seed-0 start (in ``recipe.precision``): wall time, per-step seconds,
    tokens and losses; with ``profiled``, one more step (the first batch again) under the profiler, its
    time by operator group (``profile_s``)."""
    tm = T.load_for_training(folder, recipe, 0, "cpu")
    packed = [tm.pack(r["messages"], recipe.max_length) for r in rows]
    opt = T.make_optimizer(tm, recipe)
    per = recipe.episodes_per_step
    batches = [packed[i:i + per] for i in range(0, len(packed), per)]
    t = time.perf_counter()
    outs = [T.train_step(tm, opt, b, recipe, learning_rate(k, recipe), nll_fn) for k, b in enumerate(batches)]
    wall = time.perf_counter() - t
    extra = {}
    if profiled:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU]) as prof:
            T.train_step(tm, opt, batches[0], recipe, learning_rate(0, recipe), nll_fn)
        extra["profile_s"] = time_groups(prof)
    return {"wall_s": wall, "tokens": sum(len(p.input_ids) for p in packed),
            "targets": sum(p.n_targets for p in packed), "steps": len(batches), "losses": [o["loss"] for o in outs],
            "step_seconds": [o["seconds"] for o in outs], "step_tokens": [o["tokens"] for o in outs],
            "head_tokens": sum(p.head for p in packed),
            "params": sum(p.numel() for n, p in tm.model.named_parameters() if "lora" not in n),
            "layers": tm.model.config.num_hidden_layers, **extra}


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


# where a profiled step's self time goes, by operator name (first match wins; "other" takes the rest)
TIME_GROUPS = (("attention", ("aten::_scaled_dot_product", "aten::scaled_dot_product", "aten::_flash_attention",
                              "aten::_softmax", "aten::softmax")),
               ("matrix products", ("aten::mm", "aten::bmm", "aten::addmm", "aten::baddbmm")),
               ("casts and copies", ("aten::copy_", "aten::_to_copy", "aten::to")),
               ("optimizer", ("aten::_foreach", "aten::lerp", "aten::addcmul", "aten::addcdiv", "aten::sqrt")),
               ("elementwise and norms", ("aten::mul", "aten::add", "aten::silu", "aten::pow", "aten::rsqrt",
                                          "aten::mean", "aten::div", "aten::neg", "aten::cat", "aten::where",
                                          "aten::sum", "aten::fill_", "aten::sub", "aten::zero_")))


def time_groups(prof) -> dict[str, float]:
    """A profiled step's self CPU seconds per group of ``TIME_GROUPS``."""
    out = {name: 0.0 for name, _ in TIME_GROUPS} | {"other": 0.0}
    for e in prof.key_averages():
        group = next((name for name, keys in TIME_GROUPS if any(e.key.startswith(k) for k in keys)), "other")
        out[group] += e.self_cpu_time_total / 1e6
    return {k: round(v, 3) for k, v in out.items()}


def precision_main(args: argparse.Namespace, recipe: TrainRecipe, rows: list[dict], folder: Path) -> int:
    import json

    from ccl.devices import cpu_record

    from .gemm import rates

    runs: dict[str, list[dict]] = {"float32": [], "bfloat16": []}
    for _ in range(args.rounds):  # alternated, so a drift of the machine falls on both
        for precision in runs:
            runs[precision].append(ours(folder, dataclasses.replace(recipe, precision=precision), rows, profiled=True))
    products = rates()
    per_step = {p: sum(sum(r["step_seconds"][1:]) for r in rs) / sum(len(r["step_seconds"]) - 1 for r in rs)
                for p, rs in runs.items()}
    first = {p: rs[0] for p, rs in runs.items()}
    gap = max(abs(a - b) / abs(b) for a, b in zip(first["bfloat16"]["losses"], first["float32"]["losses"]))
    frac = len(adapted_layers(first["float32"]["layers"], recipe.adapt_fraction)) / first["float32"]["layers"]
    tokens = sum(first["float32"]["step_tokens"][1:]) / (len(first["float32"]["step_tokens"]) - 1)
    flops = tokens * first["float32"]["params"] * (2 + 2 * frac)  # as above: forward, and backward above the LoRA
    peak = {p: max(r["gflops"][p] for r in products) for p in runs}
    ratio = per_step["float32"] / per_step["bfloat16"]
    record = {**cpu_record(), "episodes": len(rows), "rounds": args.rounds, "steps_timed": len(first["float32"]["step_seconds"]) - 1,
              "seconds_per_step": {p: round(v, 3) for p, v in per_step.items()}, "bf16_over_f32": round(ratio, 2),
              "target": {"amx-bf16": 3.0, "avx512-bf16": 1.5}.get(cpu_record()["kernel_path"]),
              "largest_relative_loss_difference": round(gap, 5),
              "losses": {p: [round(x, 5) for x in r["losses"]] for p, r in first.items()},
              "profiled_step_s": {p: r["profile_s"] for p, r in first.items()},
              "share_of_product_peak": {p: round(flops / per_step[p] / 1e9 / peak[p], 3) for p in runs},
              "product_peak_gflops": peak, "products": products,
              "steps": {p: [r["step_seconds"] for r in rs] for p, rs in runs.items()}}
    text = json.dumps(record, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--episodes", type=int, default=32)
    ap.add_argument("--model", default="smollm2-135m-instruct")
    ap.add_argument("--train-file", type=Path, default=DATA / "sft" / "oracle_train.jsonl")
    ap.add_argument("--precision", action="store_true", help="float32 against bfloat16 (issue 56) instead")
    ap.add_argument("--rounds", type=int, default=2, help="with --precision: passes per precision, alternated")
    ap.add_argument("--out", default=None, help="with --precision: also write the JSON record here")
    args = ap.parse_args(argv)
    recipe, _ = stage_config(load_params(PARAMS), "train", TrainRecipe, "cpu")
    recipe = dataclasses.replace(recipe, gradient_checkpointing=False)
    rows = list(read_jsonl(args.train_file))[: args.episodes]
    folder = model_dir(model_store(), args.model)
    if args.precision:
        return precision_main(args, recipe, rows, folder)
    peak = matmul_gflops()
    # round 2 first: whatever the process warms up (allocator, kernels) favours the round after it
    a = ours(folder, recipe, rows, T.summed_nll)
    r1 = ours(folder, recipe, rows, T.summed_nll_round1)
    b = trl(folder, recipe, rows)
    peak2 = matmul_gflops()
    # forward ~2 FLOPs per weight per token; backward through frozen weights ~2 more, but
    # only above the lowest adapted block (LoRA's own weights are negligible)
    frac = len(adapted_layers(a["layers"], recipe.adapt_fraction)) / a["layers"]
    flops = a["tokens"] * a["params"] * (2 + 2 * frac)
    print(f"episodes {len(rows)}, recipe lr {recipe.lr}, {recipe.batch_size} x {recipe.grad_accum} per step, "
          f"{torch.get_num_threads()} threads; shared head {a['head_tokens'] / a['tokens']:.0%} of the episodes' tokens")
    for name, r in (("round 2 (shared head, own targets)", a), ("round 1 (every row whole)", r1),
                    ("TRL SFTTrainer (one example per turn)", b)):
        print(f"{name:40s} wall {r['wall_s']:7.1f} s  steps {r['steps']:3d}  tokens {r['tokens']:6d} "
              f"({r['tokens'] / r['wall_s']:6.1f}/s)  targets {r['targets']}")
    print(f"round 2 / round 1: {r1['wall_s'] / a['wall_s']:.2f}x tokens per second (target >= 1.3x)")
    print(f"round 2 / TRL: {b['wall_s'] / a['wall_s']:.2f}x end to end (the same supervised tokens)")
    gap = max(abs(x - y) / abs(y) for x, y in zip(a["losses"], r1["losses"]))
    print(f"loss curves (round 2 vs round 1, {len(a['losses'])} steps): largest relative difference {gap:.1e} "
          f"({'equal within float tolerance' if gap < 1e-4 else 'DIFFERENT'}); "
          f"round 2 {[round(x, 5) for x in a['losses']]}")
    print(f"round 2: ~{flops / a['wall_s'] / 1e9:.1f} GFLOP/s of the episodes' nominal work vs "
          f"{min(peak, peak2):.1f}-{max(peak, peak2):.1f} GFLOP/s measured float32 matmul (1024^3) = "
          f"{flops / a['wall_s'] / 1e9 / max(peak, peak2):.0%}; round 1 "
          f"{flops / r1['wall_s'] / 1e9 / max(peak, peak2):.0%}")
    return 0 if gap < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
