"""What a second student's training step costs: the cpu-scale recipe's step (4 episodes, bfloat16 products)
for the embedded students, alternated step by step in one run, so their ratio holds on this machine.

    python -m experiments.c_scale.step_probe [--steps 4] [--out experiments/c_scale/results/step_probe.json]

Each model trains the same episodes of the selected draw (balanced, 512) from its own seed-0 LoRA; the
first step of each (which packs oneDNN's kernels) is left out. PLAN.md's capacity rule fired (the 1,000
cell gained nothing over the 512 one while the targets were missed), and this measures what the next
student, Qwen2.5-Coder-0.5B-Instruct (embedded as the cpu teacher), would cost under the 30-minute cap.
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
from pathlib import Path

from ccl.artifacts.jsonio import write_json
from ccl.devices import cpu_record
from ccl.models.weights import model_dir
from ccl.train import torch_trainer as T
from ccl.train.recipe import learning_rate
from scripts.model_store import model_store

from .pilot import CELLS, RESULTS, draw, oracle_rows, recipe_for

MODELS = ("smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct")
CAP_MINUTES = 30.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=4, help="timed steps per model, after one untimed")
    ap.add_argument("--out", type=Path, default=RESULTS / "step_probe.json")
    args = ap.parse_args()
    cell = CELLS["b512_s256"]
    recipe = recipe_for(cell)
    rows = draw(oracle_rows(), cell.sampler, cell.budget)
    store = model_store()
    trainers = {}
    for name in MODELS:
        tm = T.load_for_training(model_dir(store, name), recipe, 0, "cpu")
        trainers[name] = (tm, T.make_optimizer(tm, recipe), [tm.pack(r["messages"], recipe.max_length) for r in rows[:4 * (args.steps + 1)]])
    seconds: dict[str, list[float]] = {name: [] for name in MODELS}
    for step in range(args.steps + 1):
        for name, (tm, opt, packed) in trainers.items():
            out = T.train_step(tm, opt, packed[4 * step: 4 * step + 4], recipe, learning_rate(step, recipe))
            if step:
                seconds[name].append(round(out["seconds"], 3))
    median = {name: statistics.median(s) for name, s in seconds.items()}
    small, big = MODELS
    record = {"machine": cpu_record(), "recipe": dataclasses.asdict(recipe), "seconds": seconds, "median_s": median,
              "ratio": round(median[big] / median[small], 2),
              "steps_in_cap": {n: int(CAP_MINUTES * 60 // m) for n, m in median.items()},
              "trainable_params": {n: T.count_trainable(tm) for n, (tm, _, _) in trainers.items()}}
    write_json(args.out, record)
    print(record)


if __name__ == "__main__":
    main()
