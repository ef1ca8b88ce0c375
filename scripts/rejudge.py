"""Stage rejudge: every committed transcript judged again by both rulers, nothing regenerated.

    python -m scripts.rejudge

Reads results/runs/<run>/episodes.jsonl.gz (every evaluation run), data/v1/teacher/pass{1,2}.jsonl.gz
(the teacher's training-pool episodes) and the task files. Writes results/ruler2/rejudge.json (per
configuration, pooled over the main splits and per split: episodes, successes and rate under
ruler 1 and ruler 2, and the episodes only one ruler passes, by template and by ruler-2 reason)
and results/ruler2/changed.jsonl (one row per episode whose verdict changed: configuration, run,
split, task, template, ruler 1's verdict, ruler 2's reasons, the final answer).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import rejudge

from .cli import stage_parser
from .layout import EVAL_RUNS, RESULTS


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, params=False)
    ap.add_argument("--runs", type=Path, default=EVAL_RUNS)
    ap.add_argument("--teacher", type=Path, default=None, help="default: DATA/teacher")
    ap.add_argument("--out", type=Path, default=RESULTS / "ruler2")
    args = ap.parse_args(argv)
    result = rejudge.run(args.data, args.runs, args.teacher or args.data / "teacher", args.out)
    for config, r in result["configs"].items():
        t = r["pooled_main"] or next(iter(r["splits"].values()))
        print(f"rejudge {config}: {t['n']} episodes, ruler 1 {t['ruler1']['successes']}, ruler 2 "
              f"{t['ruler2']['successes']} (only ruler 1: {t['ruler1_only']}, only ruler 2: {t['ruler2_only']})")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("rejudge", main))
