"""Where the bfloat16 training step's attention time goes (issue 56): one layer's attention, forward and
backward, at the cpu C recipe's shapes, by kernel and precision.

    python -m experiments.bf16_cpu.attention_probe --out experiments/bf16_cpu/attention_probe.json

Shapes: a micro-batch of 4 rows, SmolLM2-135M's 9 query heads of 64 (its 3 key/value heads repeated, as
transformers' sdpa path does), each row's 700 own tokens attending to the shared head's 320 keys and
causally to its own (the training loss of ``ccl.train.shared_head``; the mask the model receives).
Kernels: torch's CPU flash attention with that mask (what training runs), the math kernel, the plain
products and softmax, and, as a bound on what skipping the mask's empty blocks could save, the two
halves a split kernel would run (the head unmasked; the row's own tokens under ``is_causal``). Each is
timed as the best of 3 after a warm-up; rates count the two products of the forward and twice that for
the backward (a lower bound on the work), over the (query, key) pairs each kernel computes: every pair
of the rectangle for the masked kernels, the head's and the causal half of the row's own for the split.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from ccl.artifacts.jsonio import write_json
from ccl.devices import cpu_record

ROWS, HEADS, HEAD_DIM, PREFIX, OWN = 4, 9, 64, 320, 700


def best_of(fn, reps: int = 3) -> float:
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def kernels(dtype: torch.dtype) -> dict[str, float]:
    keys = PREFIX + OWN
    q = torch.randn(ROWS, HEADS, OWN, HEAD_DIM, dtype=dtype, requires_grad=True)
    k = torch.randn(ROWS, HEADS, keys, HEAD_DIM, dtype=dtype, requires_grad=True)
    v = torch.randn(ROWS, HEADS, keys, HEAD_DIM, dtype=dtype, requires_grad=True)
    mask = torch.ones(OWN, keys, dtype=torch.bool).tril(diagonal=PREFIX)[None, None].expand(ROWS, 1, OWN, keys)

    def sdpa(backend: SDPBackend):
        def run() -> None:
            with sdpa_kernel(backend):
                F.scaled_dot_product_attention(q, k, v, attn_mask=mask).float().sum().backward()
        return run

    def plain() -> None:
        s = (q @ k.transpose(-1, -2)) * HEAD_DIM ** -0.5
        (s.masked_fill(~mask, float("-inf")).softmax(-1) @ v).float().sum().backward()

    kh, vh = (t[:, :, :PREFIX].detach().requires_grad_() for t in (k, v))
    ko, vo = (t[:, :, PREFIX:].detach().requires_grad_() for t in (k, v))

    def halves() -> None:
        F.scaled_dot_product_attention(q, kh, vh).float().sum().backward()
        F.scaled_dot_product_attention(q, ko, vo, is_causal=True).float().sum().backward()

    return {"flash_masked": best_of(sdpa(SDPBackend.FLASH_ATTENTION)), "math_masked": best_of(sdpa(SDPBackend.MATH)),
            "plain_products": best_of(plain), "split_bound": best_of(halves)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    torch.manual_seed(0)
    def gflop(pairs: float) -> float:  # 2 products of 2 flops per (query, key) pair and dim; backward 2x forward
        return 3 * 2 * 2 * ROWS * HEADS * pairs * HEAD_DIM / 1e9

    full, split = gflop(OWN * (PREFIX + OWN)), gflop(OWN * PREFIX + OWN * (OWN + 1) / 2)  # split: causal half only
    work = {"flash_masked": full, "math_masked": full, "plain_products": full, "split_bound": split}
    seconds = {p: kernels(d) for p, d in (("float32", torch.float32), ("bfloat16", torch.bfloat16))}
    record = {**cpu_record(), "shape": {"rows": ROWS, "heads": HEADS, "head_dim": HEAD_DIM, "prefix": PREFIX,
                                        "own": OWN}, "gflop_per_pass": {k: round(v, 2) for k, v in work.items()},
              "seconds": {p: {k: round(v, 4) for k, v in s.items()} for p, s in seconds.items()},
              "gflops": {p: {k: round(work[k] / v, 1) for k, v in s.items()} for p, s in seconds.items()},
              "flash_bf16_over_f32": round(seconds["float32"]["flash_masked"] / seconds["bfloat16"]["flash_masked"], 2)}
    print(json.dumps(record, indent=1))
    if args.out:
        write_json(args.out, record)


if __name__ == "__main__":
    main()
