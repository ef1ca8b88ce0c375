"""Stage distill: the teacher's greedy pass over the offered training tasks (pass 1).

    python -m scripts.distill                  # profile from params.yaml
    python -m scripts.distill --n 1600         # tasks offered, from the start of the training pool

Writes data/v1/teacher/pass1.jsonl.gz (one transcript per offered task, no verdict) and
pass1.json (teacher, decoding, wall clock). Stage distill_pass2 samples the tasks this
pass failed; stage accept_teacher decides which episodes are demonstrations. A killed
run resumes from the last finished chunk (data/v1/teacher/pass1.partial.jsonl).
"""
from __future__ import annotations

import sys
from pathlib import Path

from tqdm import tqdm

from ccl.artifacts.boundary import run_stage
from ccl.stages import distill

from .cli import stage_parser
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--n", type=int, default=None, help="tasks offered (default: the profile's distill.n)")
    ap.add_argument("--out", type=Path, default=None, help="default: DATA/teacher")
    ap.add_argument("--model-path", default=None, help="local copy of a hub teacher")
    args = ap.parse_args(argv)
    out = args.out or args.data / "teacher"
    store = model_store()
    setup = distill.setup(args.params, store, args.profile, args.data, args.n)
    print(f"distill: profile {setup.profile}, teacher {setup.teacher['model']} on {setup.teacher['backend']}, "
          f"{len(setup.offered)} tasks")
    with tqdm(total=len(setup.offered), desc="pass1", unit="ep") as bar:
        rows = distill.run(setup, store, out, args.model_path, progress=bar.update)
    print(f"distill: {len(rows)} pass-1 transcripts -> {out / 'pass1.jsonl.gz'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("distill", main))
