"""Stage rejudge_ruler3: every published run's committed transcripts judged by ruler 3 (issue 57), beside
rulers 1 and 2; nothing regenerated, no published output rewritten.

    python -m scripts.rejudge_ruler3 [--study 1|2]

Study 1 (default): results/runs/<run>/episodes.jsonl.gz, the teacher's passes data/v1/teacher/pass{1,2}
and data/v1/tasks; writes results/ruler3/study1. Study 2: results/study2/runs and data/study2/tasks (no
teacher of its own); writes results/ruler3/study2. Each holds rejudge.json (successes under each ruler per
configuration, pooled and per split, and the episodes rulers 2 and 3 judge differently), changed.jsonl
(those episodes, with calls and answer) and by_run/<run>/{verdicts.jsonl.gz, metrics_ruler3.json}.
"""
from __future__ import annotations

import sys

from ccl.artifacts.boundary import run_stage
from ccl.stages import rejudge_ruler3

from .cli import stage_parser
from .layout import DATA, EVAL_RUNS, RESULTS, STUDY2_DATA, STUDY2_RESULTS

STUDIES = {"1": (DATA, EVAL_RUNS, DATA / "teacher"), "2": (STUDY2_DATA, STUDY2_RESULTS / "runs", None)}


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, params=False, data=False)
    ap.add_argument("--study", choices=sorted(STUDIES), default="1")
    args = ap.parse_args(argv)
    data, runs, teacher = STUDIES[args.study]
    result = rejudge_ruler3.run(data, runs, teacher, RESULTS / "ruler3" / f"study{args.study}")
    for config, r in result["configs"].items():
        t = r["pooled_main"] or next(iter(r["splits"].values()))
        print(f"rejudge_ruler3 {config}: {t['n']} episodes, ruler 1 {t['ruler1']['successes']}, ruler 2 "
              f"{t['ruler2']['successes']}, ruler 3 {t['ruler3']['successes']} (only ruler 2: {t['ruler2_only']}, "
              f"only ruler 3: {t['ruler3_only']})")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("rejudge_ruler3", main))
