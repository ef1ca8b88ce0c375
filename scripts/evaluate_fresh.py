"""Stage evaluate_fresh: a run (or the oracle) plays every task of a study's fresh splits, judged by rulers 1, 2 and 3.

    python -m scripts.evaluate_fresh --params study3/params.yaml --data data/study3 --name C_plus_s0 --adapter study3/runs/C_plus_s0 --out results/study3/runs
    python -m scripts.evaluate_fresh --params study3/params.yaml --data data/study3 --name oracle --out results/study3/runs

Writes <out>/<name>/episodes.jsonl.gz (each task's split, verdicts and transcript), results.json (successes per
ruler, split, family and renaming) and generation.json (seconds and machine).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import evaluate_fresh

from .cli import stage_parser
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--name", required=True, help="a trained run's name, or oracle")
    ap.add_argument("--adapter", type=Path, default=None, help="the run's folder (none for the oracle)")
    ap.add_argument("--out", type=Path, required=True, help="the folder of the runs' folders")
    ap.add_argument("--model-path", default=None, help="local copy of a hub student")
    args = ap.parse_args(argv)
    plan = evaluate_fresh.plan(args.params, args.profile, args.name, args.adapter)
    r = evaluate_fresh.run(plan, model_store(), args.data, args.out, args.model_path)
    shares = ", ".join(f"{ruler} {r['pooled'][ruler]['success']}/{r['tasks']}" for ruler in ("ruler1", "ruler2", "ruler3"))
    print(f"evaluate_fresh {args.name}: {shares} ({r['backend']}, {r['seconds']} s) -> {args.out / args.name}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("evaluate_fresh", main))
