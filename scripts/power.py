"""Stage power: the minimum detectable effect of each pre-registered primary contrast.

    python -m scripts.power                      # params.yaml's design -> results/power.json
    python -m scripts.power --profile smoke --out /tmp/power.json

Reads only the design (params.yaml: evaluate, analyze, power, runs; the task split files for
their sizes), never a result, so it can run, and be committed, before any evaluation. Prints
the MDE of each contrast at the planned reverse share and whether it meets the target.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.artifacts.jsonio import write_json
from ccl.stages import power

from .cli import stage_parser
from .layout import RESULTS


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--out", type=Path, default=RESULTS / "power.json")
    args = ap.parse_args(argv)
    record = power.run(args.params, args.profile, args.data / "tasks")
    write_json(args.out, record)
    print(f"power: profile {record['profile']}, {record['n']} paired tasks over {', '.join(record['primary_splits'])}, "
          f"{record['family_size']} contrasts at alpha {record['alpha']} (Holm), power {record['power']}, "
          f"planned reverse share {record['reverse_share']}")
    for r in record["contrasts"]:
        mde = "none" if r["mde"] is None else f"{100 * r['mde']:.1f} points"
        print(f"  {r['contrast']}: MDE {mde} (alpha {r['alpha']}, component power {r['component_power']}; "
              f"seeds {r['seeds']}) -> {'meets' if r['meets_target'] else 'MISSES'} the "
              f"{100 * record['mde_target']:.0f}-point target")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("power", main))
