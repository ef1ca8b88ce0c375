"""Stage fresh_pool: study 2's evaluation tasks, from seeds no earlier split used (docs/preregistration-2.md).

    python -m scripts.fresh_pool --params study2/params.yaml --data data/v1 --out data/study2
    python -m scripts.fresh_pool --params study2/params.yaml --profile smoke --data DIR --out DIR

Reads every split in --data/tasks (the first study's pools and evaluation splits) and writes
--out/tasks/<split>.jsonl, --out/pool_audit.json and --out/manifest.json. The files are committed
before study 2 runs, and no stage reads them before its evaluation.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import fresh_pool

from .cli import stage_parser
from .layout import STUDY2_DATA


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--out", type=Path, default=STUDY2_DATA)
    args = ap.parse_args(argv)
    cfg, profile = fresh_pool.config(args.params, args.profile)
    audit = fresh_pool.run(cfg, profile, args.data / "tasks", args.out)
    for name, a in audit["splits"].items():
        print(f"fresh_pool {name}: {a['tasks']} tasks, seeds {a['seeds'][0]}-{a['seeds'][1]}, {a['dropped_for_overlap']} "
              f"dropped for verbatim overlap with {audit['existing_tasks']} existing tasks; {a['families']}")
    print(f"fresh_pool: profile {profile} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("fresh_pool", main))
