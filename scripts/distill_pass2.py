"""Stage distill_pass2: one seeded sample for each task the teacher's greedy pass failed.

    python -m scripts.distill_pass2

Judges pass 1 (data/v1/teacher/pass1.jsonl.gz) with the strict validator to find the
rejected tasks, then samples the first ``distill.pass2_max`` of them in pool order (all
with null), at the profile's temperature and top-p with per-episode seeds. Writes
pass2.jsonl.gz and pass2.json. With nothing to sample (pass2_max 0, or no rejection) the
teacher is not loaded and pass2.jsonl.gz is empty. Rejection sampling depends on what
counts as a rejection, so this stage reruns when the validator changes; pass 1 does not.
"""
from __future__ import annotations

import sys
from pathlib import Path

from tqdm import tqdm

from ccl.artifacts.boundary import run_stage
from ccl.stages import distill_pass2

from .cli import stage_parser
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--out", type=Path, default=None, help="default: DATA/teacher")
    ap.add_argument("--model-path", default=None, help="local copy of a hub teacher")
    args = ap.parse_args(argv)
    out = args.out or args.data / "teacher"
    store = model_store()
    plan = distill_pass2.plan(args.params, store, args.profile, args.data, out)
    with tqdm(total=len(plan.todo), desc="pass2", unit="ep") as bar:
        rows = distill_pass2.run(plan, store, out, args.model_path, progress=bar.update)
    judged = plan.pass1_judged
    print(f"distill_pass2: pass 1 rejected {sum(not r['accepted'] for r in judged)} of {len(judged)}; "
          f"{len(rows)} pass-2 samples -> {out / 'pass2.jsonl.gz'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("distill_pass2", main))
