"""Stage bfcl_score: BFCL's own checker on every configuration's answers, and the table.

    python -m scripts.bfcl_score          # the baselines and params.yaml's bfcl_runs
    python -m scripts.bfcl_score --names A_base oracle

Reads data/bfcl/sample.json and results/bfcl/answers/<name>/ (stage bfcl); writes results/bfcl/verdicts.jsonl.gz
(one verdict per configuration and question: valid, BFCL's error type, whether the turn called,
answered or did not parse, whether it hit the token cap) and results/bfcl/summary.json (per
configuration and category: accuracy with its Wilson interval and the turn kinds; paired comparisons
with A_base, Holm-adjusted) and results/bfcl/metrics.json (the accuracies, for dvc metrics show).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.config import load_params
from ccl.stages import bfcl_score
from ccl.vocabulary import BASELINES

from .cli import stage_parser
from .layout import BFCL_ANSWERS, BFCL_RESULTS, BFCL_SAMPLE, PARAMS


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, params=False, data=False)
    ap.add_argument("--names", nargs="+", default=None,
                    help="configurations answered by stage bfcl (default: the baselines and params.yaml's bfcl_runs)")
    ap.add_argument("--params", type=Path, default=PARAMS, help="parameters file (default params.yaml)")
    ap.add_argument("--sample", type=Path, default=BFCL_SAMPLE)
    ap.add_argument("--answers", type=Path, default=BFCL_ANSWERS)
    ap.add_argument("--out", type=Path, default=BFCL_RESULTS)
    args = ap.parse_args(argv)
    names = args.names or [*BASELINES, *load_params(args.params).get("bfcl_runs", [])]
    summary = bfcl_score.score(names, args.sample, args.answers, args.out)
    for name, c in summary["configs"].items():
        cells = ", ".join(f"{scope} {cell['rate']:.0%}" for scope, cell in c["cells"].items())
        print(f"bfcl_score {name}: {cells}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("bfcl_score", main))
