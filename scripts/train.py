"""Stage train: one LoRA run of the study's run matrix (ccl.vocabulary.RUNS).

    python -m scripts.train B_s0                 # profile from params.yaml
    python -m scripts.train C_s0 --profile smoke --data DIR --runs DIR
    python -m scripts.train C_err_s0 --train-file data/v1/err/train.jsonl.gz    # a learning arm
    python -m scripts.train C_dagger_s0 --train-file data/v1/dagger/iter2/train.jsonl.gz --dagger-iteration 2

A run is a training set and a seed (``B_s0``: variant B, seed 0); a learning arm's run
(``C_dagger_s0``, ``C_err_s0``) names its training file, which its data stage wrote. The recipe is params.yaml
``train`` (the write-up's defaults, rescaled per profile), the same for every run; the
student is params ``models``. Writes runs/<run>/ (adapter, config, step log, summary,
manifest) and a line in logs/stability.jsonl. Rerunning an interrupted run resumes from
runs/<run>/checkpoint.pt. A DAgger iteration's run (``--dagger-iteration k``) trains the k-th of the
K segments of the schedule (K: the iterations params dagger_iterations lists), continuing from
iteration k-1's runs/<run>/continuation/, and leaves its own for the next. Exit status 3: the run broke the stability rule and was moved to
archive/.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from tqdm import tqdm

from ccl.artifacts.boundary import run_stage
from ccl.stages import train
from ccl.train.run import Segment
from ccl.train.torch_trainer import CUBLAS_CONFIG, CUBLAS_DETERMINISTIC
from ccl.vocabulary import LEARNED, RUNS

from .cli import stage_parser
from .layout import ARCHIVE, STABILITY_LOG, TRAIN_RUNS, VAL_BASELINE
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    # deterministic cuBLAS for the trainer's CUDA path (ccl.train.torch_trainer.reproducible); a user's value is kept
    os.environ.setdefault(CUBLAS_CONFIG, CUBLAS_DETERMINISTIC)
    ap = stage_parser(__doc__)
    ap.add_argument("run", help=f"a run of ccl.vocabulary.RUNS ({', '.join(RUNS)}) or of a learning arm "
                                f"({', '.join(LEARNED)}, with --train-file)")
    ap.add_argument("--train-file", type=Path, default=None,
                    help="the training rows (default: the run's variant in --data/variants); a learning arm needs it")
    ap.add_argument("--dagger-iteration", type=int, default=None,
                    help="train this DAgger iteration's segment of the shared schedule (params dagger_iterations)")
    ap.add_argument("--runs", type=Path, default=TRAIN_RUNS)
    ap.add_argument("--archive", type=Path, default=ARCHIVE)
    ap.add_argument("--stability-log", type=Path, default=STABILITY_LOG)
    ap.add_argument("--baseline", type=Path, default=None,
                    help=f"stage val_baseline's record (default: {VAL_BASELINE.name} in --runs); "
                         "used when it matches this run, else the run computes the value itself")
    ap.add_argument("--device", default=None, help="cpu | cuda | mps (default: the best available)")
    ap.add_argument("--model-path", default=None, help="local copy of a hub student")
    args = ap.parse_args(argv)
    plan = train.plan(args.params, args.profile, args.run)
    r, recipe = plan.run, plan.recipe
    segment = (train.dagger_segment(args.params, args.run, args.dagger_iteration, args.runs)
               if args.dagger_iteration is not None else Segment())
    part = "" if segment.count == 1 else f" (segment {segment.index} of {segment.count}: steps {segment.steps(recipe.steps)})"
    print(f"train {r.name}: variant {r.variant}, seed {r.seed}, profile {plan.profile}, {plan.models.student} on "
          f"{plan.models.student_backend}; {recipe.steps} steps x {recipe.episodes_per_step} episodes, lr {recipe.lr}{part}")
    train_file = train.training_file(plan, args.data, args.train_file)  # checked before the bar and the model
    with tqdm(total=recipe.steps, unit="step") as bar:
        def progress(_: str, done: int, total: int) -> None:
            bar.n = done
            bar.refresh()

        summary = train.run(plan, model_store(), args.data, train.Outputs(args.runs, args.archive, args.stability_log,
                                                                 args.baseline or args.runs / VAL_BASELINE.name),
                            args.device, args.model_path, progress, train_file, segment)
    print(f"train {r.name}: val loss {summary['val_loss']:.4f} on {summary['val_episodes']} oracle validation "
          f"episodes; {summary['train_minutes']:.1f} min; adapter {summary['adapter_sha256'][:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("train", main))
