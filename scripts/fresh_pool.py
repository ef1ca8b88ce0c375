"""Stage fresh_pool: a study's evaluation tasks, from seeds no earlier split used (docs/preregistration-2.md, -3.md).

    python -m scripts.fresh_pool --params study2/params.yaml --data data/v1 --out data/study2
    python -m scripts.fresh_pool --params study3/params.yaml --data data/v1 --also data/study2/tasks --out data/study3
    python -m scripts.fresh_pool --params study2/params.yaml --profile smoke --data DIR --out DIR

Reads every split in --data/tasks (the first study's pools and evaluation splits) and in each --also
folder (an earlier study's fresh tasks), and writes --out/tasks/<split>.jsonl, --out/pool_audit.json and
--out/manifest.json. The files are committed before the study runs, and no stage reads them before its
evaluation (its power stage counts them).
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
    ap.add_argument("--also", type=Path, action="append", default=[],
                    help="another folder of existing tasks no fresh request may repeat (repeatable)")
    args = ap.parse_args(argv)
    cfg, profile = fresh_pool.config(args.params, args.profile)
    audit = fresh_pool.run(cfg, profile, args.data / "tasks", args.out, tuple(args.also))
    for name, a in audit["splits"].items():
        print(f"fresh_pool {name}: {a['tasks']} tasks, seeds {a['seeds'][0]}-{a['seeds'][1]}, {a['dropped_for_overlap']} "
              f"dropped for overlap ({'case, spacing and word order ignored' if 'near_duplicates' in audit else 'verbatim'}) with {audit['existing_tasks']} existing tasks; {a['families']}")
    print(f"fresh_pool: profile {profile} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("fresh_pool", main))
