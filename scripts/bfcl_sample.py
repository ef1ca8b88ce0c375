"""Stage bfcl_sample: draw the BFCL questions every configuration answers.

    python -m scripts.bfcl_sample

Reads params.yaml ``bfcl`` (categories, questions per category, seed) and the installed bfcl-eval's
data; writes data/bfcl/sample.json (the drawn ids per category, each category's size, the release).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import bfcl_sample

from .cli import stage_parser
from .layout import BFCL_SAMPLE


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, data=False)
    ap.add_argument("--out", type=Path, default=BFCL_SAMPLE)
    args = ap.parse_args(argv)
    drawn = bfcl_sample.sample(args.params, args.profile, args.out)
    sizes = ", ".join(f"{c} {len(d['ids'])}/{d['total']}" for c, d in drawn["categories"].items())
    print(f"bfcl_sample: bfcl-eval {drawn['bfcl_eval']}, seed {drawn['seed']}: {sizes} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("bfcl_sample", main))
