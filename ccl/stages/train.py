"""Stage train: one LoRA run of ``ccl.vocabulary.RUNS`` (or of a learning arm, on the training file its
data stage wrote) on the recipe of params.yaml ``train``.

DAgger's iterations share one schedule: the K iterations of params ``dagger_iterations`` split C's steps
into K segments, and iteration k's run continues iteration k-1's (``dagger_segment``), so the arm costs
one training and ends at C's number of optimizer steps."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..artifacts.inputs import read_record
from ..config import ConfigError, ModelsConfig, load_params, stage_with_models
from ..models.registry import ModelStore
from ..models.weights import model_dir
from ..train.recipe import TrainRecipe
from ..train.run import LEARNING_DATA, Segment, train_run, variant_rows
from ..vocabulary import VARIANTS, Run, training_run


@dataclass(frozen=True)
class Plan:
    run: Run
    recipe: TrainRecipe
    models: ModelsConfig
    profile: str


@dataclass(frozen=True)
class Outputs:
    runs: Path  # the run folder is runs/<run name>
    archive: Path  # where a run that broke the stability rule is moved
    stability_log: Path  # one line per run: passed, or broken and why
    baseline: Path | None = None  # stage val_baseline's record (absent or stale: computed here)


def plan_recipe(params: Path, profile: str | None) -> tuple[TrainRecipe, ModelsConfig, str]:
    """The profile's training recipe and models (shared with stage val_baseline)."""
    return stage_with_models(params, "train", TrainRecipe, profile)


def plan(params: Path, profile: str | None, name: str) -> Plan:
    recipe, models, profile = plan_recipe(params, profile)
    try:
        run = training_run(name)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return Plan(run, recipe, models, profile)


def dagger_segment(params: Path, name: str, iteration: int, runs: Path) -> Segment:
    """The segment of the schedule DAgger iteration ``iteration``'s run ``name`` trains: k of the K
    iterations of params ``dagger_iterations`` (load_params checked their chain), continuing the run of
    iteration k-1."""
    chain = load_params(params).get("dagger_iterations") or []
    if not 1 <= iteration <= len(chain):
        raise ConfigError(f"{params}: DAgger iteration {iteration}: dagger_iterations lists {len(chain)}")
    if chain[iteration - 1]["run"] != name:
        raise ConfigError(f"{params}: dagger_iterations[{iteration - 1}] trains {chain[iteration - 1]['run']!r}, "
                          f"not {name!r}")
    previous = runs / chain[iteration - 2]["run"] if iteration > 1 else None
    return Segment(iteration, len(chain), previous, leave_state=True)


def training_file(p: Plan, data: Path, train_file: Path | None) -> Path:
    """The run's training file (``train_file``, else its variant's), its rows checked: a bad file fails
    here, before the model store converts or loads anything (the script calls this before its progress bar)."""
    if train_file is None and p.run.variant not in VARIANTS:
        raise ConfigError(f"run {p.run.name}: a learning arm trains on the file its data stage wrote; pass --train-file")
    path = train_file or data / "variants" / f"{p.run.variant}.jsonl"
    variant_rows(path, LEARNING_DATA if train_file else "build_sft")
    return path


def run(p: Plan, store: ModelStore, data: Path, out: Outputs, device: str | None = None,
        model_path: str | None = None, progress: Callable[[str, int, int], None] = lambda *a: None,
        train_file: Path | None = None, segment: Segment = Segment()) -> dict:
    """Train on ``train_file`` (default ``data/variants/<variant>.jsonl``), validate on
    ``data/sft/oracle_val.jsonl``; returns the run's summary (also in ``runs/<name>/summary.json``).
    Rerunning resumes from the checkpoint. ``segment``: the part of the schedule to train (default all)."""
    train_file = training_file(p, data, train_file)
    folder = model_dir(store, p.models.student, model_path)
    out.stability_log.parent.mkdir(parents=True, exist_ok=True)
    baseline = read_record(out.baseline, "val_baseline") if out.baseline and out.baseline.exists() else None
    return train_run(p.run, p.recipe, p.models.student, folder, p.models.student_backend,
                     train_file, data / "sft" / "oracle_val.jsonl",
                     out.runs, out.archive, out.stability_log, device, progress, baseline, segment)
