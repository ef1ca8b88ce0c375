"""Stage rebuild_c: study 2's C, the first study's training set C rebuilt without the teacher.

    python -m scripts.rebuild_c --params study2/params.yaml --data data/v1 --out data/study2/c

Writes --out/C.jsonl, --out/C.json and --out/manifest.json; stops if the rows' SHA-256 differs from the
published C.jsonl's (params study1_c).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import rebuild_c

from .cli import stage_parser
from .layout import STUDY2_DATA


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--out", type=Path, default=STUDY2_DATA / "c")
    args = ap.parse_args(argv)
    r = rebuild_c.run(args.params, args.profile, args.data, args.out)
    check = "the published file's" if r["matches_published"] else "not checked (no published hash in this profile)"
    print(f"rebuild_c: {r['episodes']} episodes from {r['offered']} offered tasks, SHA-256 {r['sha256'][:12]} "
          f"({check}) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("rebuild_c", main))
