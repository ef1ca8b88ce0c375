"""Stage accept_teacher: which teacher episodes become configuration B's demonstrations.

    python -m scripts.accept_teacher                                    # the profile's ruler (study 1: ruler1)
    python -m scripts.accept_teacher --ruler ruler2 --out data/v1/teacher/ruler2   # stage accept_teacher_ruler2

Judges every transcript of both passes (data/v1/teacher/pass{1,2}.jsonl.gz) with both rulers
(ruler 1, ccl.judge.validate; ruler 2, ccl.judge.ruler2) and the cleanliness rules of
ccl.data.acceptance, and accepts by the acceptance ruler: params.yaml's accept_teacher.ruler, or
--ruler for a named output of its own. Writes acceptance.jsonl (per episode: task, pass, the ruler,
accepted, rejection reasons, whether ruler 1, ruler 2 and the write-up's definition accept it, and
both rulers' verdicts), summary.json (the ruler; per pass: episodes, acceptance, rejection reasons,
tokens, wall clock; accepted episodes by family; and ruler_change: how many episodes ruler 1 and
ruler 2 accept, and which ones moving to ruler 2 removes or adds) and manifest.json (with the ruler).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import accept_teacher
from ccl.data.acceptance import ACCEPTANCE_RULERS

from .cli import stage_parser
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--teacher", type=Path, default=None, help="the transcripts' folder; default: DATA/teacher")
    ap.add_argument("--out", type=Path, default=None, help="default: the transcripts' folder")
    ap.add_argument("--ruler", choices=ACCEPTANCE_RULERS, default=None, help="default: params accept_teacher.ruler")
    args = ap.parse_args(argv)
    teacher = args.teacher or args.data / "teacher"
    done = accept_teacher.run(args.params, model_store(), args.profile, args.data, teacher, args.out, args.ruler)
    s, change = done.summary, done.summary["ruler_change"]
    print(f"accept_teacher: {s['accepted_episodes']} accepted episodes ({s['ruler']}) from {done.offered} tasks; "
          f"ruler 1 accepts {change['accepted_ruler1']}, ruler 2 {change['accepted_ruler2']} (moving to ruler 2 "
          f"removes {len(change['removed'])}, adds {len(change['added'])}); the write-up's definition would accept "
          f"{s['accepted_tasks_writeup']} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("accept_teacher", main))
