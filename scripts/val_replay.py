"""Stage val_replay: a trained run answers the validation replay set once (issue 40).

    python -m scripts.val_replay --name C_s0 --adapter runs/C_s0

The oracle's decisions on the validation pool (never an evaluation split), each answered once from its
frozen prefix; writes results/learn/val_replay/<name>/actions.jsonl.gz and generation.json. Graded by
the stages that read it (err_data, err_compare).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import val_replay

from .cli import stage_parser
from .layout import VAL_REPLAY
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--name", required=True, help="a trained run's name")
    ap.add_argument("--adapter", type=Path, required=True, help="its run folder")
    ap.add_argument("--out", type=Path, default=VAL_REPLAY)
    ap.add_argument("--model-path", default=None, help="local copy of a hub student")
    args = ap.parse_args(argv)
    plan = val_replay.plan(args.params, args.profile, args.name, args.adapter)
    r = val_replay.run(plan, model_store(), args.data, args.out, args.model_path)
    print(f"val_replay {args.name}: {r['decisions']} decisions on {r['tasks']} validation tasks in {r['wall_s']} s "
          f"({r['backend']})")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("val_replay", main))
