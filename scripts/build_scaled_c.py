"""Stage build_scaled_c: the cpu-scale profile's C, a seeded draw of the training pool's oracle episodes.

    python -m scripts.build_scaled_c --params scale/params.yaml --data data/v1 --out data/scale/c

Writes --out/C.jsonl, --out/C.json (budget, sampler, composition, SHA-256) and --out/manifest.json.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import build_scaled_c

from .cli import stage_parser


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    r = build_scaled_c.run(args.params, args.profile, args.data, args.out)
    print(f"build_scaled_c: {r['episodes']} episodes ({r['sampler']} draw, seed {r['seed']}), "
          f"SHA-256 {r['sha256'][:12]} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("build_scaled_c", main))
