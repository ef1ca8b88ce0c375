"""Stage validate_run: a trained run plays every validation-pool task, judged by rulers 1, 2 and 3.

    python -m scripts.validate_run --params scale/params.yaml --name C_s0 --adapter scale/runs/C_s0 --out results/scale/validation

Writes <out>/<name>.jsonl.gz (each task's transcript and verdicts), <out>/<name>.json (success pooled,
per family and on renamed catalogues, per ruler) and <out>/<name>.generation.json (seconds and machine).
Validation only: no evaluation split is read.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import validate_run

from .cli import stage_parser
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--name", required=True, help="a trained run's name")
    ap.add_argument("--adapter", type=Path, required=True, help="its run folder")
    ap.add_argument("--out", type=Path, required=True, help="the folder the two files go to")
    ap.add_argument("--model-path", default=None, help="local copy of a hub student")
    args = ap.parse_args(argv)
    plan = validate_run.plan(args.params, args.profile, args.name, args.adapter)
    r = validate_run.run(plan, model_store(), args.data, args.out, args.model_path)
    shares = ", ".join(f"{ruler} {r[ruler]['success']}/{r['tasks']}" for ruler in validate_run.RULERS)
    print(f"validate_run {args.name}: {shares} ({r['backend']}, {r['seconds']} s) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("validate_run", main))
