"""Stage train: one LoRA run from a run config.

    python scripts/train.py configs/train/B_s0.json          # profile from params.yaml
    python scripts/train.py configs/train/C_s0.json --profile smoke --data DIR --runs DIR

The recipe is params.yaml ``train`` (the write-up's defaults, rescaled per profile) with
the run config's ``recipe`` overrides on top; the student is params ``models``. Writes
runs/<config name>/ (adapter, config, step log, summary, manifest) and a line in
logs/stability.jsonl. Rerunning an interrupted run resumes from runs/<name>/checkpoint.pt.
Exit status 3: the run broke the stability rule and was moved to archive/.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tqdm import tqdm  # noqa: E402

from ccl.config import ConfigError, stage_with_models  # noqa: E402
from ccl.models.registry import ModelError  # noqa: E402
from ccl.models.weights import model_dir  # noqa: E402
from ccl.train.recipe import TrainRecipe, apply_overrides, load_run_config  # noqa: E402
from ccl.train.errors import Diverged, TrainingError  # noqa: E402
from ccl.train.run import train_run  # noqa: E402
from ccl.boundary import run_stage  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", type=Path, help="configs/train/<name>.json")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "v1")
    ap.add_argument("--runs", type=Path, default=ROOT / "runs")
    ap.add_argument("--archive", type=Path, default=ROOT / "archive")
    ap.add_argument("--stability-log", type=Path, default=ROOT / "logs" / "stability.jsonl")
    ap.add_argument("--device", default=None, help="cpu | cuda | mps (default: the best available)")
    ap.add_argument("--model-path", default=None, help="local copy of a hub student")
    args = ap.parse_args(argv)
    try:
        recipe, models, profile = stage_with_models(args.params, "train", TrainRecipe, args.profile)
        run = load_run_config(args.config)
        recipe = apply_overrides(recipe, run.overrides, str(args.config))
    except ConfigError as e:  # one line naming the file and the key, no usage text
        print(f"train: {e}", file=sys.stderr)
        return 2
    try:
        folder = model_dir(models.student, args.model_path)
    except ModelError as e:
        print(f"train: {e}", file=sys.stderr)
        return 2
    print(f"train {run.name}: variant {run.variant}, seed {run.seed}, profile {profile}, {models.student} on "
          f"{models.student_backend}; {recipe.steps} steps x {recipe.episodes_per_step} episodes, lr {recipe.lr}")
    bar = tqdm(total=recipe.steps, unit="step")

    def progress(_: str, done: int, total: int) -> None:
        bar.n = done
        bar.refresh()

    args.stability_log.parent.mkdir(parents=True, exist_ok=True)
    try:
        summary = train_run(run, recipe, models.student, folder, models.student_backend,
                            args.data / "variants" / f"{run.variant}.jsonl", args.data / "sft" / "oracle_val.jsonl",
                            args.runs, args.archive, args.stability_log, args.device, progress)
    except Diverged as e:
        print(f"train: {e}", file=sys.stderr)
        return 3
    except TrainingError as e:  # includes CheckpointError
        print(f"train: {e}", file=sys.stderr)
        return 2
    finally:
        bar.close()
    print(f"train {run.name}: val loss {summary['val_loss']:.4f} on {summary['val_episodes']} oracle validation "
          f"episodes; {summary['train_minutes']:.1f} min; adapter {summary['adapter_sha256'][:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("train", main))
