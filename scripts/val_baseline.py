"""Stage val_baseline: the untrained student's loss on the oracle validation episodes, computed
once for every training run of the profile (each run's summary reports val_loss_before from it).

    python -m scripts.val_baseline                  # profile from params.yaml
    python -m scripts.val_baseline --profile smoke --data DIR --out FILE
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import val_baseline

from .cli import stage_parser
from .layout import VAL_BASELINE
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--out", type=Path, default=VAL_BASELINE)
    ap.add_argument("--device", default=None, help="cpu | cuda | mps (default: the best available)")
    ap.add_argument("--model-path", default=None, help="local copy of a hub student")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    r = val_baseline.run(args.params, args.profile, model_store(), args.data, args.out, args.device, args.model_path)
    print(f"val_baseline: {r['base_model']} loss {r['val_loss_before']:.4f} on {r['val_episodes_used']} oracle "
          f"validation episodes ({time.perf_counter() - t0:.0f} s) -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("val_baseline", main))
