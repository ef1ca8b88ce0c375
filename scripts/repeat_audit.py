"""Stage repeat_audit (post hoc, issue 41): per evaluated configuration, the ruler-2 successes that call a
tool again with the same arguments in a later turn after it had answered, and the success rate without
them (``ccl/analysis/repeats.py``).

    python -m scripts.repeat_audit          # results/runs -> results/learn/repeat_audit.json
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.analysis.repeats import audit
from ccl.artifacts.boundary import run_stage
from ccl.artifacts.jsonio import write_json

from .cli import stage_parser
from .layout import EVAL_RUNS, RESULTS


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, params=False, data=False)
    ap.add_argument("--runs", type=Path, default=EVAL_RUNS)
    ap.add_argument("--out", type=Path, default=RESULTS / "learn" / "repeat_audit.json")
    args = ap.parse_args(argv)
    result = audit(args.runs)
    write_json(args.out, result)
    for name, r in result["configs"].items():
        print(f"repeat_audit {name}: {r['ruler2_successes']} ruler-2 successes, {r['successes_repeating_an_answered_call']} "
              f"repeat an answered call; {r['ruler2_pct']}% -> {r['without_repeats_pct']}%")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("repeat_audit", main))
