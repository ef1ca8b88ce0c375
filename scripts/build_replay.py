"""Stage build_replay: freeze the golden decision points of the profile's evaluation tasks.

    python -m scripts.build_replay                 # profile from params.yaml
    python -m scripts.build_replay --profile smoke --data DIR --out DIR [--refreeze]

Writes data/v1/replay/<split>.jsonl (one line per decision: the exact message prefix, the
oracle's action, the ready gold nodes, the decision's kind) and manifest.json. Stops when a
golden file changes although its task file did not, unless --refreeze.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import build_replay

from .cli import stage_parser
from .layout import REPLAY_GOLDEN


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--out", type=Path, default=REPLAY_GOLDEN)
    ap.add_argument("--refreeze", action="store_true", help="accept golden files that changed under unchanged tasks")
    args = ap.parse_args(argv)
    manifest = build_replay.run(args.params, args.profile, args.data, args.out, args.refreeze)
    for split, e in manifest["splits"].items():
        print(f"build_replay: {split}: {e['decisions']} decisions from {e['tasks']} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("build_replay", main))
