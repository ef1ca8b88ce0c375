"""Stage replay_judge: grade a configuration's stored replay actions by code.

    python -m scripts.replay_judge --name A_base

Reads results/replay/<name>/actions.jsonl.gz and generation.json (stage replay), the golden
decisions and the task files; writes results/replay/<name>/verdicts.jsonl.gz (one verdict per
decision) and metrics.json (per split and pooled: pass rates, argument quality, recovery,
stop precision and recall, format validity, routing per tool, pass by kind and depth).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import replay_judge

from .cli import stage_parser
from .layout import REPLAY_GOLDEN, REPLAY_RUNS


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, params=False)
    ap.add_argument("--name", required=True, help="configuration or run name (a folder under --runs)")
    ap.add_argument("--golden", type=Path, default=REPLAY_GOLDEN)
    ap.add_argument("--runs", type=Path, default=REPLAY_RUNS)
    args = ap.parse_args(argv)
    m = replay_judge.run(args.name, args.data, args.golden, args.runs)
    pooled = m["pooled_main"]
    if pooled:
        print(f"replay_judge {args.name}: pass {pooled['pass']:.3f} (strict {pooled['pass_strict']:.3f}) over "
              f"{pooled['decisions']} decisions of {pooled['tasks']} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("replay_judge", main))
