"""Stage distill_pass2: one seeded sample for each task the teacher's greedy pass failed.

    python scripts/distill_pass2.py

Judges pass 1 (data/v1/teacher/pass1.jsonl.gz) with the strict validator to find the
rejected tasks, then samples the first ``distill.pass2_max`` of them in pool order (all
with null), at the profile's temperature and top-p with per-episode seeds. Writes
pass2.jsonl.gz and pass2.json. With nothing to sample (pass2_max 0, or no rejection) the
teacher is not loaded and pass2.jsonl.gz is empty. Rejection sampling depends on what
counts as a rejection, so this stage reruns when the validator changes; pass 1 does not.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tqdm import tqdm  # noqa: E402

from ccl.acceptance import judge_pass, pass2_tasks  # noqa: E402
from ccl.config import ConfigError  # noqa: E402
from ccl.distill import generate_pass, pass_decoding  # noqa: E402
from ccl.teacher import load_setup  # noqa: E402
from ccl.jsonio import read_jsonl  # noqa: E402
from ccl.judging import JudgeError  # noqa: E402
from ccl.models.registry import ModelError  # noqa: E402
from ccl.policy.base import ModelPolicy  # noqa: E402
from ccl.policy.load import load_backend  # noqa: E402
from ccl.boundary import run_stage  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--profile", default=None)
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "v1",
                    help="data root (default data/v1); task splits are read from its tasks/ folder")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "v1" / "teacher")
    ap.add_argument("--model-path", default=None, help="local copy of a hub teacher")
    args = ap.parse_args(argv)
    pass1 = args.out / "pass1.jsonl.gz"
    try:
        setup = load_setup(args.params, args.profile, args.data / "tasks" / "train_pool.jsonl", None,
                           n_from=pass1)
        judged = judge_pass({t["id"]: t for t in setup.offered}, read_jsonl(pass1), str(pass1))
        todo = pass2_tasks(setup.offered, judged, setup.cfg)
        gen = pass_decoding(setup.cfg, 2)
        policy = None
        if todo:
            backend = load_backend(setup.models.teacher, setup.models.teacher_backend, model_path=args.model_path)
            policy = ModelPolicy(backend, gen, name=setup.teacher["model"])
    except (ConfigError, ModelError, JudgeError, OSError, EOFError, ValueError) as e:
        print(f"distill_pass2: {e}", file=sys.stderr)
        return 2
    with tqdm(total=len(todo), desc="pass2", unit="ep") as bar:
        rows = generate_pass("pass2", 2, todo, policy, gen, setup.cfg, setup.teacher, setup.pool_sha256,
                             args.out, progress=bar.update)
    print(f"distill_pass2: pass 1 rejected {sum(not r['accepted'] for r in judged)} of {len(judged)}; "
          f"{len(rows)} pass-2 samples -> {args.out / 'pass2.jsonl.gz'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("distill_pass2", main))
