"""Stage build_datasets: seeded task pools and splits, oracle SFT data, leakage audit, manifest.

    python -m scripts.build_datasets                         # profile from params.yaml, into data/v1
    python -m scripts.build_datasets --profile paper --out DIR

Writes tasks/<split>.jsonl, sft/oracle_train.jsonl, sft/oracle_val.jsonl,
leakage_audit.json and manifest.json. Every file is written to a temporary name and
renamed, so an interrupted run never leaves a partial artifact behind.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import build_datasets

from .cli import stage_parser
from .layout import DATA


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, data=False)
    ap.add_argument("--out", type=Path, default=DATA)
    args = ap.parse_args(argv)
    cfg, profile = build_datasets.config(args.params, args.profile)
    print(f"build_datasets: profile {profile} -> {args.out}")
    built = build_datasets.run(cfg, profile, args.out)
    for name, families in built.split_families.items():
        print(f"  {name}: {families}")
    print(f"build_datasets: {len(built.files)} files in {built.seconds:.1f} s (tasks {built.seconds_tasks:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("build_datasets", main))
