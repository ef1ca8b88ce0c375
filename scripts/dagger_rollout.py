"""Stage dagger_rollout: one DAgger iteration's rollouts, expert labels and training rows (issue 40).

    python -m scripts.dagger_rollout 1 --policy runs/C_s0 --base data/v1/variants/C.jsonl
    python -m scripts.dagger_rollout 2 --policy runs/C_dagger_i1_s0 --base data/v1/dagger/iter1/train.jsonl.gz

Rolls the policy's adapter out on the iteration's slice of the training pool (params.yaml ``dagger``),
labels every visited state with the expert, and writes data/v1/dagger/iter<k>/ (see
ccl.stages.dagger_rollout). The iteration's run then trains on its train.jsonl.gz (stage dagger_train).
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import dagger_rollout

from .cli import stage_parser
from .layout import DAGGER, RESULTS
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("iteration", type=int, help="1, 2, ...: the entry of params dagger.betas it uses")
    ap.add_argument("--policy", type=Path, required=True, help="the run folder whose adapter drives the rollouts")
    ap.add_argument("--base", type=Path, required=True, help="the rows this iteration's aggregate starts from")
    ap.add_argument("--out", type=Path, default=None, help=f"default: {DAGGER}/iter<iteration>")
    ap.add_argument("--timings", type=Path, default=None,
                    help=f"where the wall time goes (default: {RESULTS}/learn/dagger_iter<iteration>.json)")
    ap.add_argument("--model-path", default=None, help="local copy of a hub student")
    args = ap.parse_args(argv)
    plan = dagger_rollout.plan(args.params, args.profile, args.iteration, args.data)
    out = args.out or DAGGER / f"iter{args.iteration}"
    print(f"dagger iteration {args.iteration}: {len(plan.tasks)} training tasks, beta {plan.cfg.beta(args.iteration)}, "
          f"policy {args.policy}")
    timings = args.timings or RESULTS / "learn" / f"dagger_iter{args.iteration}.json"
    s = dagger_rollout.run(plan, model_store(), args.policy, args.base, out, timings, args.model_path)
    print(f"dagger iteration {args.iteration}: {s['states']} states ({s['states_off_expert_path']} off the expert's "
          f"path, {s['unrecoverable']} unrecoverable), {s['rows']} rows, {s['episodes_ruler2_success']}/{s['tasks']} "
          f"episodes succeeded under ruler 2 -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("dagger_rollout", main))
