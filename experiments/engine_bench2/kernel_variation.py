"""How far torch's own float32 logits move between CPU kernel paths and batch shapes: the yardstick for
the near-tie threshold of the engine agreement rule (README.md). Run from the repository root:

    python -m experiments.engine_bench2.kernel_variation

Computes the last-position logits of the first prompt of 16 cpu-profile evaluation tasks, unbatched, in
this process (the default kernel path) and in a child process with ATEN_CPU_CAPABILITY=avx2 (another
instruction set), and once more in one left-padded batch of 16; prints the largest absolute differences.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import torch

from ccl.episode.prompt import system_prompt
from ccl.policy.load import load_backend
from ccl.stages.evaluate import plan
from ccl.vocabulary import STUDENT_BASE
from scripts.layout import DATA, PARAMS
from scripts.model_store import model_store


def prompts(n: int = 16) -> list[str]:
    tb = load_backend(model_store(), "smollm2-135m-instruct", "torch")
    tasks = plan(PARAMS, "cpu", STUDENT_BASE, None, DATA).tasks[:n]
    return tb, [tb.render([{"role": "system", "content": system_prompt(t)}, {"role": "user", "content": t["request"]}])
                for t in tasks]


def last_logits(tb, texts: list[str]) -> np.ndarray:
    out = []
    with torch.inference_mode():
        for text in texts:
            ids = tb.tok(text, return_tensors="pt", add_special_tokens=False).input_ids
            out.append(tb.model(input_ids=ids).logits[0, -1].numpy())
    return np.stack(out)


def batched_logits(tb, texts: list[str]) -> np.ndarray:
    tb.tok.padding_side = "left"
    enc = tb.tok(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.inference_mode():
        return tb.model(**enc).logits[:, -1].numpy()


def main() -> None:
    tb, texts = prompts()
    mine = last_logits(tb, texts)
    if "--child" in sys.argv:
        np.save(sys.argv[-1], mine)
        return
    path = "/tmp/ccl_kernel_variation.npy"
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2", "DNNL_MAX_CPU_ISA": "AVX2"}
    subprocess.run([sys.executable, "-m", "experiments.engine_bench2.kernel_variation", "--child", path], env=env,
                   check=True)
    other = np.load(path)
    batch = batched_logits(tb, texts)
    print(json.dumps({"prompts": len(texts), "max_abs_logit_diff_avx2_vs_default": float(np.abs(other - mine).max()),
                      "max_abs_logit_diff_batched_vs_unbatched": float(np.abs(batch - mine).max()),
                      "logit_scale_p99": float(np.percentile(np.abs(mine), 99))}))


if __name__ == "__main__":
    main()
