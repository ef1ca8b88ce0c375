"""Stage accept_teacher: which teacher episodes become configuration B's demonstrations.

    python -m scripts.accept_teacher

Judges every transcript of both passes (data/v1/teacher/pass{1,2}.jsonl.gz) with ruler 2
(ccl.judge.ruler2) and the cleanliness rules of ccl.data.acceptance. Writes acceptance.jsonl
(per episode: task, pass, accepted, rejection reasons, whether ruler 1 and the write-up's
definition would have accepted it, and both rulers' verdicts), summary.json (per pass:
episodes, acceptance, rejection reasons, tokens, wall clock; accepted episodes by family; and
ruler_change: how many episodes ruler 1 and ruler 2 accept, and which ones the change removes
or adds) and manifest.json over the folder.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import accept_teacher

from .cli import stage_parser
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--out", type=Path, default=None, help="default: DATA/teacher")
    args = ap.parse_args(argv)
    done = accept_teacher.run(args.params, model_store(), args.profile, args.data, args.out or args.data / "teacher")
    change = done.summary["ruler_change"]
    print(f"accept_teacher: {done.summary['accepted_episodes']} accepted episodes (ruler 2) from {done.offered} "
          f"tasks; ruler 1 accepted {change['accepted_ruler1']} (removed {len(change['removed'])}, added "
          f"{len(change['added'])}); the write-up's definition would accept {done.summary['accepted_tasks_writeup']} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("accept_teacher", main))
