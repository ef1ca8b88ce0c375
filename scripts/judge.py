"""Stage judge: score one configuration's stored transcripts with the validator.

    python -m scripts.judge --name B_s0

Reads results/runs/<name>/episodes.jsonl.gz (transcripts, from evaluate) and
generation.json, and the task files; writes results/runs/<name>/verdicts.jsonl.gz (one
row per episode: task id, split, strata and the verdict under both success definitions)
and metrics.json (per split and pooled over the main splits: both success rates and
every diagnostic, plus the generation record's efficiency).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
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
        print(f"judge {args.name}: pooled success {pooled['success']:.3f} strict, "
              f"{pooled['success_writeup']:.3f} by the write-up's definition, over {pooled['n']} episodes")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("judge", main))
