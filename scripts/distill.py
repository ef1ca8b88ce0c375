"""Stage distill: the teacher's greedy pass over the offered training tasks (pass 1).

    python scripts/distill.py                  # profile from params.yaml
    python scripts/distill.py --n 1600         # tasks offered, from the start of the training pool

Writes data/v1/teacher/pass1.jsonl.gz (one transcript per offered task, no verdict) and
pass1.json (teacher, decoding, wall clock). Stage distill_pass2 samples the tasks this
pass failed; stage accept_teacher decides which episodes are demonstrations. A killed
run resumes from the last finished chunk (data/v1/teacher/pass1.partial.jsonl).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tqdm import tqdm  # noqa: E402

from ccl.config import ConfigError  # noqa: E402
from ccl.distill import generate_pass, pass_decoding  # noqa: E402
from ccl.teacher import TeacherSetup, load_setup  # noqa: E402
from ccl.models.registry import ModelError  # noqa: E402
from ccl.policy.base import ModelPolicy  # noqa: E402
from ccl.policy.load import load_backend  # noqa: E402
from ccl.boundary import run_stage  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=None, help="tasks offered (default: the profile's distill.n)")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "v1",
                    help="data root (default data/v1); task splits are read from its tasks/ folder")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "v1" / "teacher")
    ap.add_argument("--model-path", default=None, help="local copy of a hub teacher")
    args = ap.parse_args(argv)
    try:
        setup: TeacherSetup = load_setup(args.params, args.profile, args.data / "tasks" / "train_pool.jsonl", args.n)
        backend = load_backend(setup.models.teacher, setup.models.teacher_backend, model_path=args.model_path)
    except (ConfigError, ModelError) as e:
        print(f"distill: {e}", file=sys.stderr)
        return 2
    gen = pass_decoding(setup.cfg, 1)
    print(f"distill: profile {setup.profile}, teacher {setup.teacher['model']} on {setup.teacher['backend']}, "
          f"{len(setup.offered)} tasks")
    with tqdm(total=len(setup.offered), desc="pass1", unit="ep") as bar:
        rows = generate_pass("pass1", 1, setup.offered, ModelPolicy(backend, gen, name=setup.teacher["model"]), gen,
                             setup.cfg, setup.teacher, setup.pool_sha256, args.out, progress=bar.update)
    print(f"distill: {len(rows)} pass-1 transcripts -> {args.out / 'pass1.jsonl.gz'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("distill", main))
