"""Stage dvc_views: the files DVC's metrics and plots commands read, from the analysis and the step logs.

    python -m scripts.dvc_views      # results/summary.json, runs/*/train_log.jsonl -> results/metrics, results/plots

Then `dvc metrics show` prints one row per configuration (strict success in percent by split,
pooled, and pooled under the write-up's definition) and `dvc plots show` draws the training
loss of every run and strict success per split.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ccl.artifacts import dvc_views
from ccl.artifacts.boundary import run_stage

from .layout import RESULTS, TRAIN_RUNS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--summary", type=Path, default=RESULTS / "summary.json")
    ap.add_argument("--runs", type=Path, default=TRAIN_RUNS)
    ap.add_argument("--metrics", type=Path, default=RESULTS / "metrics")
    ap.add_argument("--plots", type=Path, default=RESULTS / "plots")
    args = ap.parse_args(argv)
    n = dvc_views.write(args.summary, args.runs, args.metrics, args.plots)
    print(f"dvc_views: {n['configs']} configurations -> {args.metrics}; loss curves of {n['runs']} runs and "
          f"success by split -> {args.plots}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("dvc_views", main))
