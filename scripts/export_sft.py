"""Stage export_sft: the SFT files in the tool-call chat format, one mlx-lm folder per training set.

    python -m scripts.export_sft           # data/v1/variants, data/v1/sft/oracle_val.jsonl -> data/v1/export

Writes data/v1/export/<variant>/{train,valid}.jsonl and the dataset card README.md. Every row is
converted back and must give the study's training messages exactly (ccl/data/sft_export.py).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.data import sft_export

from .cli import stage_parser


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, params=False)
    ap.add_argument("--out", type=Path, default=None, help="default: DATA/export")
    args = ap.parse_args(argv)
    out = args.out or args.data / "export"
    counts = sft_export.export(args.data / "variants", args.data / "sft" / "oracle_val.jsonl", out)
    print(f"export_sft: {', '.join(f'{v} {n}' for v, n in counts.items())} episodes -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("export_sft", main))
