"""This machine's matrix-multiply rate, float32 and bfloat16: the limit the benchmarks compare against.

    python -m scripts.gemm [--reps 5]

Prints, for the student's shapes (SmolLM2-135M: hidden 576, MLP 1,536, vocabulary 49,152, at 2,048
tokens a micro-batch), each precision's GFLOP/s and the ratio bfloat16/float32, with the CPU and the
bfloat16 kernel path its flags allow (``ccl.devices.cpu_record``): on a CPU without bfloat16 units
torch converts and computes in float32, and the ratio falls below 1.
"""
from __future__ import annotations

import argparse
import json
import time

import torch

from ccl.devices import cpu_record

# (tokens, in, out): the attention and MLP projections and the output head at one micro-batch
STUDENT_SHAPES = ((2048, 576, 1536), (2048, 1536, 576), (4096, 576, 576), (2048, 576, 49152))
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def matmul_gflops(n: int = 1024, reps: int = 10, dtype: torch.dtype = torch.float32) -> float:
    """GFLOP/s of an n x n matrix product on torch's current threads (best of 3 rounds)."""
    return product_gflops((n, n, n), reps, dtype)


def product_gflops(shape: tuple[int, int, int], reps: int = 5, dtype: torch.dtype = torch.float32) -> float:
    """GFLOP/s of (m x k) @ (k x n) in ``dtype``, the best of 3 rounds of ``reps`` products after a
    warm-up (the first bfloat16 product also packs oneDNN's kernel)."""
    m, k, n = shape
    a, b = torch.randn(m, k, dtype=dtype), torch.randn(k, n, dtype=dtype)
    torch.mm(a, b)
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(reps):
            torch.mm(a, b)
        best = max(best, 2 * m * k * n * reps / (time.perf_counter() - t) / 1e9)
    return best


def rates(shapes: tuple[tuple[int, int, int], ...] = STUDENT_SHAPES, reps: int = 5) -> list[dict]:
    """Each shape's GFLOP/s in both precisions, measured one after the other, and their ratio."""
    out = []
    for shape in shapes:
        got = {name: round(product_gflops(shape, reps, dtype), 1) for name, dtype in DTYPES.items()}
        out.append({"shape": list(shape), "gflops": got, "bf16_over_f32": round(got["bfloat16"] / got["float32"], 2)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    print(json.dumps({**cpu_record(), "products": rates(reps=args.reps)}, indent=1))


if __name__ == "__main__":
    main()
