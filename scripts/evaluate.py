"""Stage evaluate: run one configuration over the profile's evaluation splits.

    python -m scripts.evaluate --name A_base            # student, no adapter
    python -m scripts.evaluate --name A_fewshot         # student + two worked examples (A+)
    python -m scripts.evaluate --name teacher
    python -m scripts.evaluate --name oracle
    python -m scripts.evaluate --name B_s0 --adapter runs/B_s0/adapter

Writes results/runs/<name>/episodes.jsonl.gz (every episode's full transcript, no verdict:
the judge stage scores them) and generation.json (model, backend, adapter, profile,
splits, efficiency and each episode's latency). Interrupted runs resume from
results/runs/<name>/episodes.partial.jsonl, unless it was written for another model,
adapter, decoding or task list.
"""
from __future__ import annotations

import sys
from pathlib import Path

from tqdm import tqdm

from ccl.artifacts.boundary import run_stage
from ccl.stages import evaluate
from ccl.vocabulary import BASELINES

from .cli import stage_parser
from .layout import EVAL_RUNS
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--name", required=True, help=f"{', '.join(BASELINES)}, or a run name with --adapter")
    ap.add_argument("--adapter", type=Path, default=None, help="LoRA adapter folder for a trained run")
    ap.add_argument("--out", type=Path, default=EVAL_RUNS)
    ap.add_argument("--model-path", default=None, help="local copy of a hub model")
    args = ap.parse_args(argv)
    plan = evaluate.plan(args.params, args.profile, args.name, args.adapter, args.data)
    print(f"evaluate {plan.name}: {len(plan.tasks)} tasks, profile {plan.profile}, {plan.label}")
    with tqdm(total=len(plan.tasks), unit="ep") as bar:
        path = evaluate.run(plan, model_store(), args.out, args.model_path, progress=bar.update)
    print(f"evaluate {plan.name}: {len(plan.tasks)} transcripts -> {path} (scored by the judge stage)")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("evaluate", main))
