"""Stage analyze of study 3 (docs/preregistration-3.md): the primary family (ruler 3), the secondary family,
the ruler-2 sensitivity, the seeds' agreement, success per configuration and split, each arm's minutes and the
oracle's check of the fresh tasks.

    python -m scripts.analyze_study3     # study3/design.yaml, results/study3/runs -> results/study3/summary.json
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.analysis.study3 import Timings
from ccl.stages import analyze_study3

from .cli import stage_parser
from .layout import ROOT
from .layout_study3 import STUDY3_DATA, STUDY3_DESIGN, STUDY3_PARAMS, STUDY3_PREREG, STUDY3_RESULTS


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, data=False)
    ap.set_defaults(params=STUDY3_PARAMS)
    ap.add_argument("--design", type=Path, default=STUDY3_DESIGN)
    ap.add_argument("--root", type=Path, default=ROOT, help="the folder the design's adapter paths start from")
    ap.add_argument("--tasks", type=Path, default=STUDY3_DATA / "tasks")
    ap.add_argument("--runs", type=Path, default=STUDY3_RESULTS / "runs")
    ap.add_argument("--dagger-timings", type=Path, default=STUDY3_RESULTS.relative_to(ROOT) / "arms",
                    help="DAgger's rollout timings (dagger_s<seed>_iter<k>.json), relative to --root")
    ap.add_argument("--dpo-rollout", type=Path, default=Path("results/scale/arms/dpo_rollout.json"),
                    help="the DPO rollout's timing, relative to --root")
    ap.add_argument("--prereg", type=Path, default=STUDY3_PREREG)
    ap.add_argument("--out", type=Path, default=STUDY3_RESULTS / "summary.json")
    args = ap.parse_args(argv)
    timings = Timings(args.dagger_timings, args.dpo_rollout)
    r = analyze_study3.run(args.params, args.profile, args.design, args.root, args.tasks, args.runs, timings,
                           args.prereg, args.out)
    for key, fam in r["families"].items():
        for row in fam["rows"]:
            print(f"  [{key}] {row['contrast']}: {row['diff']:+.1f} points [{row['low']:.1f}, {row['high']:.1f}], "
                  f"p {row['p']:.4g}, Holm p {row['p_holm']:.4g} ({row['n']} tasks)")
    print(f"analyze (study 3): {len(r['configs'])} configurations -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("analyze_study3", main))
