"""Probe (issue 56): does torch.compile of each decoder layer help the bfloat16 training step?

    python -m experiments.bf16_cpu.compile_probe bfloat16 compile
    python -m experiments.bf16_cpu.compile_probe bfloat16 eager

Eight steps of the cpu C recipe on C's first 32 episodes, from the seed-0 start; prints each step's
seconds (the first includes compilation). Timing only: the result (compile_probe.json) decided that
compilation is not used."""
from __future__ import annotations

import dataclasses
import json
import sys
import time

from ccl.artifacts.jsonio import read_jsonl
from ccl.config import load_params, stage_config
from ccl.models.weights import model_dir
from ccl.train import torch_trainer as T
from ccl.train.recipe import TrainRecipe
from scripts.model_store import model_store
from scripts.layout import DATA, PARAMS


def main() -> None:
    precision, compiled = sys.argv[1], sys.argv[2] == "compile"
    recipe, _ = stage_config(load_params(PARAMS), "train", TrainRecipe, "cpu")
    recipe = dataclasses.replace(recipe, precision=precision)
    rows = list(read_jsonl(DATA / "variants" / "C.jsonl"))[:32]
    folder = model_dir(model_store(), "smollm2-135m-instruct")
    tm = T.load_for_training(folder, recipe, 0, "cpu")
    if compiled:
        base = tm.model.get_base_model().model
        for layer in base.layers:
            layer.compile(dynamic=True)
    packed = [tm.pack(r["messages"], recipe.max_length) for r in rows]
    opt = T.make_optimizer(tm, recipe)
    times = []
    t0 = time.perf_counter()
    for step in range(8):
        out = T.train_step(tm, opt, packed[step*4:(step+1)*4], recipe, 1e-3)
        times.append(out["seconds"])
    print(json.dumps({"precision": precision, "compiled": compiled, "seconds": times, "total": time.perf_counter() - t0}))


if __name__ == "__main__":
    main()
