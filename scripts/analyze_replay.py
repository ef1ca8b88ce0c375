"""Stage analyze_replay: the replay tables from every graded replay run, in one JSON file.

    python -m scripts.analyze_replay                # results/replay + results/runs -> results/replay_summary.json
    python -m scripts.analyze_replay --profile smoke --replay DIR --runs DIR --out FILE

Reads results/replay/<name>/verdicts.jsonl.gz (stage replay_judge) and, for the correlation
with episode success, results/runs/<name>/verdicts.jsonl.gz (stage judge). Writes replay pass
by split with task-clustered intervals, the paired tests (Holm over their own family), the
failure map (verdict x decision kind, verdict x tool, worst cells) and replay against episode
success, with the settings (params section ``analyze``) and the SHA-256 of every file read.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import analyze, analyze_replay

from .cli import stage_parser
from .layout import EVAL_RUNS, REPLAY_RUNS, RESULTS


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, data=False)
    ap.add_argument("--replay", type=Path, default=REPLAY_RUNS)
    ap.add_argument("--runs", type=Path, default=EVAL_RUNS)
    ap.add_argument("--out", type=Path, default=RESULTS / "replay_summary.json")
    args = ap.parse_args(argv)
    cfg, profile = analyze.config(args.params, args.profile)
    s = analyze_replay.run(cfg, profile, args.replay, args.runs, args.out)
    for row in s["replay_vs_episode"]["rows"]:
        r = "—" if row["pearson"] is None else f"{row['pearson']:+.2f}"
        print(f"analyze_replay: {row['split']}: r(replay, episode) {r} over {row['n_configs']} configs; "
              f"predicts: {row['predicts']}")
    tests = s["replay_paired"]
    print(f"analyze_replay: wrote {args.out}: {len(s['configs'])} configs, {tests['n_tests']} paired tests "
          f"({sum(r['significant'] for r in tests['rows'])} significant after Holm at {cfg.alpha})")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("analyze_replay", main))
