"""Stage warm_train: a supervised run that starts from a trained run's adapter (issue 59; ccl.stages.warm_train).

    python -m scripts.warm_train C_plus_s0 --params scale/arms/cplus.yaml --init scale/runs/C_s0 \\
        --train-file data/scale/cplus/C.jsonl --runs scale/runs --keep-half
    python -m scripts.warm_train C_dagger_i1_s0 --params scale/arms/dagger.yaml --init scale/runs/C_s0 \\
        --train-file data/scale/dagger/iter1/train.jsonl.gz --dagger-iteration 1 --runs scale/runs

The recipe is the params file's ``train`` section. A DAgger iteration's run trains its segment of the
schedule params ``dagger_iterations`` splits, the first from --init and each later one from the previous
iteration's state. Rerunning an interrupted run resumes from its checkpoint. Exit status 3: the run broke
the stability rule and was moved to --archive.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import train, warm_train
from ccl.train.run import Segment
from ccl.train.torch_trainer import CUBLAS_CONFIG, CUBLAS_DETERMINISTIC

from .cli import stage_parser
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault(CUBLAS_CONFIG, CUBLAS_DETERMINISTIC)
    ap = stage_parser(__doc__)
    ap.add_argument("run", help=f"{warm_train.C_PLUS}_s<seed>, or a DAgger iteration's run")
    ap.add_argument("--init", type=Path, required=True, help="the run folder whose adapter the first segment starts from")
    ap.add_argument("--train-file", type=Path, required=True)
    ap.add_argument("--dagger-iteration", type=int, default=None,
                    help="train this DAgger iteration's segment (params dagger_iterations)")
    ap.add_argument("--keep-half", action="store_true", help="keep the adapter at half the steps in half/adapter")
    ap.add_argument("--runs", type=Path, required=True)
    ap.add_argument("--archive", type=Path, required=True)
    ap.add_argument("--stability-log", type=Path, required=True)
    ap.add_argument("--device", default=None, help="cpu | cuda | mps (default: the best available)")
    ap.add_argument("--model-path", default=None, help="local copy of a hub student")
    args = ap.parse_args(argv)
    plan = warm_train.plan(args.params, args.profile, args.run)
    segment = (train.dagger_segment(args.params, args.run, args.dagger_iteration, args.runs)
               if args.dagger_iteration is not None else Segment())
    steps = segment.steps(plan.recipe.steps)
    print(f"warm_train {plan.run.name}: from {args.init if segment.index == 1 else segment.previous}, steps "
          f"{steps.start}-{steps.stop - 1} of {plan.recipe.steps}, lr {plan.recipe.lr}, profile {plan.profile}")
    s = warm_train.run(plan, model_store(), args.data, train.Outputs(args.runs, args.archive, args.stability_log),
                       args.init, args.train_file, segment, args.keep_half, args.device, args.model_path)
    print(f"warm_train {plan.run.name}: val loss {s['val_loss']:.4f} (before {s['val_loss_before']:.4f}); "
          f"{s['train_minutes']:.1f} min; adapter {s['adapter_sha256'][:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("warm_train", main))
