"""Stage arm_tasks: the fresh training tasks of the cpu-scale learning arms (issue 59; ccl.stages.arm_tasks).

    python -m scripts.arm_tasks --params scale/params.yaml --data data/v1 --c-rows data/scale/c/C.jsonl \\
        --out data/scale/arms

Writes --out/tasks/train_pool.jsonl (the training pool's tasks outside C's draw, in the draw's order),
--out/tasks/val_pool.jsonl, --out/arm_tasks.json and --out/manifest.json.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import arm_tasks

from .cli import stage_parser


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--c-rows", type=Path, required=True, help="C's rows (stage build_c)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    r = arm_tasks.run(args.params, args.profile, args.data, args.c_rows, args.out)
    print(f"arm_tasks: {r['fresh_tasks']} fresh training tasks past C's {r['c_budget']} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("arm_tasks", main))
