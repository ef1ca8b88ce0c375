"""Stage build_sft: the training sets B, C, C_matched, C_25, C_50, C_full, Dmix and Dseq.

    python -m scripts.build_sft                   # profile from params.yaml

Reads the training pool and its oracle episodes (build_datasets), the teacher's
transcripts (distill, distill_pass2) and which of them were accepted (accept_teacher); writes data/v1/variants/<variant>.jsonl, variants.json (episodes,
SFT rows, SHA-256 and per-family composition of each) and manifest.json. Dseq's rows
carry ``phase`` 0 (B) then 1 (C); the trainer runs the phases in that order.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import build_sft

from .cli import stage_parser


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--out", type=Path, default=None, help="default: DATA/variants")
    args = ap.parse_args(argv)
    out = args.out or args.data / "variants"
    cfg, profile = build_sft.config(args.params, args.profile)
    built = build_sft.run(cfg, profile, args.data, out)
    for name, v in built.listing.items():
        print(f"  {name}: {v['episodes']} episodes, {v['sft_rows']} SFT rows, {v['families']}")
    if "shortfall" in built.notes:
        print(f"build_sft: note: {built.notes['shortfall']}")
    print(f"build_sft: {len(built.listing)} variants -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("build_sft", main))
