"""Benchmark: every CI and paired test of a result set the size of the paper's.

    python scripts/bench_stats.py [--seed 0]

Synthetic results: 20 configurations x 1,008 evaluation tasks, 12 of them trained
with 3 seeds (hierarchical bootstrap) and 8 single runs (task bootstrap), 4,000
resamples per CI; 84 paired tests (4,000 resamples + 5,000 sign flips each);
Holm over the 84. Target: under 30 s in total on 2 cores.
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ccl.stats import hierarchical_bootstrap, holm, paired_difference, task_bootstrap  # noqa: E402

N_CONFIGS, N_TRAINED, N_SEEDS, N_TASKS, N_TESTS = 20, 12, 3, 1008, 84
TARGET_S = 30.0


def synthetic_results(seed: int) -> list[np.ndarray]:
    """(seeds, tasks) 0/1 outcomes per configuration: config level + task difficulty + seed shift."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, 1.5, N_TASKS)
    results = []
    for c in range(N_CONFIGS):
        n_seeds = N_SEEDS if c < N_TRAINED else 1
        level = rng.normal(0.0, 1.0)
        shift = rng.normal(0.0, 0.2, (n_seeds, 1))
        prob = 1.0 / (1.0 + np.exp(-(level + difficulty + shift)))
        results.append(rng.random((n_seeds, N_TASKS)) < prob)
    return results


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    results = synthetic_results(args.seed)
    pairs = list(itertools.combinations(range(N_CONFIGS), 2))[:N_TESTS]
    timings: dict[str, float] = {}

    t0 = time.perf_counter()
    cis = [hierarchical_bootstrap(x, 4000, seed=args.seed + i) if x.shape[0] > 1
           else task_bootstrap(x, 4000, seed=args.seed + i) for i, x in enumerate(results)]
    timings[f"{N_CONFIGS} CIs (4,000 resamples; {N_TRAINED} hierarchical)"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    tests = [paired_difference(results[i], results[j], n_resamples=4000, n_flips=5000, seed=args.seed + k)
             for k, (i, j) in enumerate(pairs)]
    timings[f"{N_TESTS} paired tests (4,000 resamples + 5,000 flips)"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    adjusted = holm([t.p for t in tests])
    timings[f"Holm over {N_TESTS}"] = time.perf_counter() - t0

    total = sum(timings.values())
    for name, seconds in timings.items():
        print(f"{name:<55s} {seconds:8.3f} s")
    print(f"{'total':<55s} {total:8.3f} s  (target < {TARGET_S:.0f} s: {'met' if total < TARGET_S else 'MISSED'})")
    widths = [ci.high - ci.low for ci in cis]
    print(f"CI width: trained mean {np.mean(widths[:N_TRAINED]):.4f}, single-run mean {np.mean(widths[N_TRAINED:]):.4f}; "
          f"significant after Holm (0.05): {int((adjusted <= 0.05).sum())}/{N_TESTS}")


if __name__ == "__main__":
    main()
