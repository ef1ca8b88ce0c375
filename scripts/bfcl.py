"""Stage bfcl: one configuration answers the sampled BFCL questions (no checking here).

    python -m scripts.bfcl --name A_base
    python -m scripts.bfcl --name C_s0 --adapter runs/C_s0

Reads data/bfcl/sample.json (stage bfcl_sample) and the configuration's model (and adapter); writes
results/bfcl/answers/<name>/answers.jsonl.gz (per question: the assistant text and token counts) and
generation.json (model, backend, adapter, token cap, speed). Stage bfcl_score checks them.
"""
from __future__ import annotations

import sys
from pathlib import Path

from tqdm import tqdm

from ccl.artifacts.boundary import run_stage
from ccl.external.bfcl_inputs import read_sample
from ccl.stages import bfcl

from .cli import stage_parser
from .layout import BFCL_ANSWERS, BFCL_SAMPLE
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, data=False)
    ap.add_argument("--name", required=True, help="a baseline, or a trained run's name with --adapter")
    ap.add_argument("--adapter", type=Path, default=None)
    ap.add_argument("--sample", type=Path, default=BFCL_SAMPLE)
    ap.add_argument("--out", type=Path, default=BFCL_ANSWERS)
    ap.add_argument("--model-path", default=None, help="local copy of a hub model")
    args = ap.parse_args(argv)
    plan = bfcl.plan(args.params, args.profile, args.name, args.adapter)
    _, qs = read_sample(args.sample)  # before the progress bar and the model: a bad sample fails in one line
    with tqdm(unit="question") as bar:
        r = bfcl.run(plan, model_store(), qs, args.out, args.model_path, progress=bar.update)
    print(f"bfcl {args.name}: {r['questions']} questions answered in {r['wall_s']} s ({r['questions_per_s']}/s)")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("bfcl", main))
