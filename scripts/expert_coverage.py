"""Stage expert_coverage: from every state scripted deviations reach, does the expert still reach
ruler-2 success, and is every state it loses provably lost? (issue 40)

    python -m scripts.expert_coverage            # writes results/learn/expert_coverage.json
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import expert_coverage

from .layout import RESULTS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=RESULTS / "learn" / "expert_coverage.json")
    args = ap.parse_args(argv)
    t = expert_coverage.run(args.out)
    a = t["all"]
    print(f"expert coverage: {a['states']} deviated states; the expert reached ruler-2 success from {a['recovered']} "
          f"({a['recovered_share']:.1%}); {a['lost']} provably lost, {a['lost_unexplained']} lost without a "
          f"permanent reason; {a['ended']} deviations ended the episode -> {args.out}")
    for family, f in t["by_family"].items():
        print(f"  {family:12s} states {f['states']:4d}  recovered {f['recovered_share']:.1%}  lost {f['lost']:4d} {f['lost_for']}")
    return 0 if a["lost_unexplained"] == 0 else 1


if __name__ == "__main__":
    sys.exit(run_stage("expert_coverage", main))
