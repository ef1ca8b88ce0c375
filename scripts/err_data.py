"""Stage err_data: the error-driven round's training set, from C's failures on the validation replay
set's map half (issue 40).

    python -m scripts.err_data            # reads results/learn/val_replay/C_s0, writes data/v1/err/
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.config import load_params
from ccl.stages import err_data

from .cli import stage_parser
from .layout import DATA, VAL_REPLAY


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--reference", default="C_s0", help="the run whose failures are mapped")
    ap.add_argument("--runs", type=Path, default=VAL_REPLAY, help="val_replay's output folder")
    ap.add_argument("--base", type=Path, default=None, help="the rows the replay slice comes from (default: C's)")
    ap.add_argument("--out", type=Path, default=DATA / "err")
    args = ap.parse_args(argv)
    base = args.base or args.data / "variants" / "C.jsonl"
    s = err_data.run(load_params(args.params), args.profile, args.data, args.runs / args.reference / "actions.jsonl.gz",
                     base, args.out)
    print(f"err_data: {args.reference} passed {s['map_passed']}/{s['map_decisions']} map-half decisions; "
          f"{s['targeted_tasks']} targeted tasks over {len(s['templates'])} templates, {s['replay_slice']} of C's rows "
          f"kept -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("err_data", main))
