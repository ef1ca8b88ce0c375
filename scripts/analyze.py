"""Stage analyze: every table of the write-up from the evaluation runs, in one JSON file.

    python scripts/analyze.py                       # results/runs -> results/summary.json
    python scripts/analyze.py --out /tmp/summary.json --profile smoke

Reads results/runs/<name>/verdicts.jsonl.gz (the judge stage's; and metrics.json, and trials.jsonl.gz where
present). <config>_s<k> is seed k of a trained configuration; other names are single runs.
Writes success by split, diagnostics, the 84 paired tests with Holm, success by family /
depth / graph seen / fault injection, the catalogue ablation, the post-hoc eval_unseen
table, pass^k and efficiency, plus the settings and the SHA-256 of every file read. The
output depends only on the inputs and params (section ``analyze``), never on the clock.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tqdm import tqdm  # noqa: E402

from ccl.analysis import (AlignmentError, AnalyzeConfig, build_configs, build_summary, load_runs,  # noqa: E402
                          work_units)
from ccl.config import ConfigError, load_params, stage_config  # noqa: E402
from ccl.jsonio import write_json  # noqa: E402
from ccl.boundary import run_stage  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=Path, default=ROOT / "results" / "runs")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "summary.json")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    args = ap.parse_args(argv)
    try:
        params = load_params(args.params)
        cfg, profile = stage_config(params, "analyze", AnalyzeConfig, args.profile, where=str(args.params))
    except (ConfigError, ValueError) as e:  # ValueError: AnalyzeConfig rejected a value
        print(f"analyze: {e}", file=sys.stderr)
        return 2
    runs, inputs = load_runs(args.runs)
    if not runs:
        print(f"analyze: no evaluation run in {args.runs} (expected <name>/verdicts.jsonl.gz from the judge stage); "
              f"run the evaluate stage first", file=sys.stderr)
        return 2
    try:
        configs = build_configs(runs)  # ValueError: runs that do not line up, or malformed rows
    except ValueError as e:
        print(f"analyze: {e}", file=sys.stderr)
        return 2
    print(f"analyze: {len(runs)} runs, configs {', '.join(f'{c} ({d.seeds})' for c, d in configs.items())}; "
          f"profile {profile}, {cfg.n_resamples} resamples, {cfg.n_flips} flips")
    try:
        with tqdm(total=work_units(configs, cfg), unit="cell") as bar:
            summary = build_summary(configs, cfg, inputs, progress=bar.update)
    except AlignmentError as e:  # two configurations evaluated on different tasks
        print(f"analyze: {e}", file=sys.stderr)
        return 2
    summary["profile"] = profile
    write_json(args.out, summary)
    tests = summary["paired"]
    print(f"analyze: wrote {args.out}: {len(configs)} configs, {tests['n_tests']} paired tests "
          f"({sum(r['significant'] for r in tests['rows'])} significant after Holm at {cfg.alpha})")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("analyze", main))
