"""This machine's float32 matrix-multiply rate, the limit the benchmarks compare against."""
from __future__ import annotations

import time

import torch


def matmul_gflops(n: int = 1024, reps: int = 10) -> float:
    """GFLOP/s of an n x n float32 matrix product on torch's current threads (best of 3 rounds)."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    best = 0.0
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(reps):
            torch.mm(a, b)
        best = max(best, 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e9)
    return best
