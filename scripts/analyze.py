"""Stage analyze: every table of the write-up from the evaluation runs, in one JSON file.

    python -m scripts.analyze                       # results/runs -> results/summary.json
    python -m scripts.analyze --out /tmp/summary.json --profile smoke

Reads results/runs/<name>/verdicts.jsonl.gz (the judge stage's; and metrics.json, and trials.jsonl.gz where
present). <config>_s<k> is seed k of a trained configuration; other names are single runs.
Writes success by split, diagnostics, the 84 paired tests with Holm, success by family /
depth / graph seen / fault injection, the catalogue ablation, the post-hoc eval_unseen
table, pass^k and efficiency, plus the settings and the SHA-256 of every file read. The
output depends only on the inputs and params (section ``analyze``), never on the clock.
"""
from __future__ import annotations

import sys
from pathlib import Path

from tqdm import tqdm

from ccl.artifacts.boundary import run_stage
from ccl.stages import analyze

from .cli import stage_parser
from .layout import EVAL_RUNS, RESULTS


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, data=False)
    ap.add_argument("--runs", type=Path, default=EVAL_RUNS)
    ap.add_argument("--out", type=Path, default=RESULTS / "summary.json")
    args = ap.parse_args(argv)
    cfg, profile = analyze.config(args.params, args.profile)
    data = analyze.load(args.runs)
    print(f"analyze: {data.n_runs} runs, configs {', '.join(f'{c} ({d.seeds})' for c, d in data.configs.items())}; "
          f"profile {profile}, {cfg.n_resamples} resamples, {cfg.n_flips} flips")
    with tqdm(total=analyze.work(data, cfg), unit="cell") as bar:
        summary = analyze.run(cfg, profile, data, args.out, progress=bar.update)
    tests = summary["paired"]
    print(f"analyze: wrote {args.out}: {len(summary['configs'])} configs, {tests['n_tests']} paired tests "
          f"({sum(r['significant'] for r in tests['rows'])} significant after Holm at {cfg.alpha})")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("analyze", main))
