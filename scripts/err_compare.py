"""Stage err_compare: each val_replay run against C's, per coordinate, on the map half and the held-out
half (issue 40).

    python -m scripts.err_compare --names C_err_s0 C_dagger_s0
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import err_compare

from .cli import stage_parser
from .layout import DATA, RESULTS, VAL_REPLAY


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--reference", default="C_s0")
    ap.add_argument("--names", nargs="+", required=True)
    ap.add_argument("--runs", type=Path, default=VAL_REPLAY)
    ap.add_argument("--failure-map", type=Path, default=DATA / "err" / "failure_map.json")
    ap.add_argument("--out", type=Path, default=RESULTS / "learn" / "err_clusters.json")
    args = ap.parse_args(argv)
    r = err_compare.run(args.data, args.runs, args.reference, args.names, args.failure_map, args.out)
    for name, halves in r["overall"].items():
        print(f"err_compare {name}: " + ", ".join(f"{h} {v['passed']}/{v['decisions']}" for h, v in halves.items()))
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("err_compare", main))
