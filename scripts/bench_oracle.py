"""Benchmark: tasks generated, and generated + solved + validated by the oracle, per second.

    python -m scripts.bench_oracle [--n 5000]

Target (issue 2): generating and solving 5,000 tasks in under 30 s on 2 cores.
"""
from __future__ import annotations

import argparse
import time

from ccl.episode.oracle import OraclePolicy
from ccl.episode.runtime import run_episode
from ccl.judge.validate import validate
from ccl.world.tasks import TEMPLATES, generate_task


def specs(n: int) -> list[tuple[str, int, str]]:
    names = sorted(TEMPLATES)
    return [(names[i % len(names)], i // len(names),
             "train" if TEMPLATES[names[i % len(names)]].split == "train" else "eval") for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    n = ap.parse_args().n
    todo = specs(n)
    t0 = time.perf_counter()
    tasks = [generate_task(name, seed, pool) for name, seed, pool in todo]
    t_gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    solved = sum(validate(t, run_episode(t, OraclePolicy()).record())["success"] for t in tasks)
    t_solve = time.perf_counter() - t0
    total = t_gen + t_solve
    print(f"tasks: {n}  generated in {t_gen:.2f} s ({n / t_gen:,.0f} tasks/s)")
    print(f"oracle: {solved}/{n} solved, run + validated in {t_solve:.2f} s ({n / t_solve:,.0f} episodes/s)")
    print(f"generate + solve: {total:.2f} s ({n / total:,.0f} tasks/s); target < 30 s: "
          f"{'met' if total < 30 else 'NOT met'}")


if __name__ == "__main__":
    main()
