"""Stage judge: score one configuration's stored transcripts with both rulers.

    python -m scripts.judge --name B_s0

Reads results/runs/<name>/episodes.jsonl.gz (transcripts, from evaluate) and
generation.json, and the task files; writes results/runs/<name>/verdicts.jsonl.gz (one
row per episode: task id, split, strata, ruler 1's verdict under both success definitions
and ruler 2's verdict, each labelled with its ruler), metrics.json (ruler 1, the
pre-registered results: per split and pooled over the main splits, both success rates and
every diagnostic, plus the generation record's efficiency) and metrics_ruler2.json (ruler 2,
post hoc: per split and pooled, success and each criterion's pass rate).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.artifacts.jsonio import read_json
from ccl.stages import judge

from .cli import stage_parser
from .layout import EVAL_RUNS


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, params=False)
    ap.add_argument("--name", required=True, help="configuration or run name (a folder under --runs)")
    ap.add_argument("--runs", type=Path, default=EVAL_RUNS)
    args = ap.parse_args(argv)
    pooled = judge.run(args.name, args.data, args.runs)["pooled_main"]
    if pooled:
        second = read_json(args.runs / args.name / judge.RULER2_METRICS)["pooled_main"]
        print(f"judge {args.name}: pooled success {pooled['success']:.3f} strict (ruler 1), "
              f"{pooled['success_writeup']:.3f} by the write-up's definition, {second['success']:.3f} under "
              f"ruler 2, over {pooled['n']} episodes")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("judge", main))
