"""Stage analyze of study 2 (docs/preregistration-2.md): the primary family (ruler 2), the two secondary
families, success per configuration and split, and the oracle's check of the fresh tasks.

    python -m scripts.analyze_study2 --params study2/params.yaml     # results/study2/runs -> summary.json
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import analyze_study2

from .cli import stage_parser
from .layout import STUDY2_PARAMS, STUDY2_PREREG, STUDY2_RESULTS


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, data=False)
    ap.set_defaults(params=STUDY2_PARAMS)
    ap.add_argument("--runs", type=Path, default=STUDY2_RESULTS / "runs")
    ap.add_argument("--prereg", type=Path, default=STUDY2_PREREG)
    ap.add_argument("--out", type=Path, default=STUDY2_RESULTS / "summary.json")
    args = ap.parse_args(argv)
    r = analyze_study2.run(args.params, args.profile, args.runs, args.prereg, args.out)
    for outcome, fam in r["families"].items():
        for row in fam["rows"]:
            print(f"  [{fam['role']}] {row['contrast']}: {row['diff']:+.1f} points [{row['low']:.1f}, {row['high']:.1f}], "
                  f"p {row['p']:.4g}, Holm p {row['p_holm']:.4g} ({row['n']} tasks)")
    print(f"analyze (study 2): {len(r['configs'])} configurations -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("analyze_study2", main))
