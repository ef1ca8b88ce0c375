"""Stage warm_train: supervised training that starts from a trained run's adapter (issue 59).

The learning arms of the cpu-scale profile spend a fixed budget *after* C, so their supervised runs
continue C instead of drawing a fresh LoRA:

- **C+** (``C_plus_s<seed>``), the comparator: more oracle imitation, C's recipe on a larger draw;
- **DAgger**'s iterations (``C_dagger_i<k>_s<seed>``, ``C_dagger_s<seed>``): the schedule's segments,
  the first starting from C and each later one from the previous iteration (``ccl.train.run.Segment``).

The start is planted as the run's own step-0 checkpoint (``ccl.learn.warm_start``), and the one training loop
resumes from it, so a killed run resumes from its last real checkpoint. ``init.json`` in the run folder
names the start (the starting run and its adapter's SHA-256 for the first segment, the run it continues for
a later one); the same record goes to ``warm_starts.jsonl`` beside the stability log, which a rerun reads to
refuse a checkpoint left by a run from another start. ``keep_half``: the adapter at half the recipe's steps
(a checkpoint step) is kept in ``half/adapter``, a point on the arm's success-against-minutes curve; a run
resumed past that step without it is refused (DVC deletes ``half/`` before rerunning the stage).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..artifacts.jsonio import write_json
from ..config import ConfigError, stage_with_models
from ..models.registry import ModelStore
from ..models.weights import model_dir
from ..train.recipe import TrainRecipe
from ..train.run import RunPaths, Segment, resolve_device, train_run, variant_rows
from ..learn.warm_start import check_start, checkpoint_step, note_start, plant, start_record
from ..vocabulary import Run, parse_run_name, training_run
from .train import Outputs, Plan  # the train stage's plan: a run, its recipe, models and profile

# The comparator arm's name. It is not in ccl.vocabulary: adding it there would change a dependency of every
# published stage; it is named here, where the one stage that trains it reads it.
C_PLUS = "C_plus"
INIT_RECORD = "init.json"
STARTS = "warm_starts.jsonl"  # beside the stability log
HALF = "half"  # the run folder's sub-folder holding the adapter kept at half the steps


def warm_run(name: str) -> Run:
    """``C_plus_s<k>`` or a learning arm's run (``ccl.vocabulary.training_run``)."""
    config, seed = parse_run_name(name)
    if config == C_PLUS and seed is not None:
        return Run(C_PLUS, seed)
    try:
        return training_run(name)
    except ValueError as e:
        raise ConfigError(f"{e}; or the comparator {C_PLUS}_s<seed>") from None


def plan(params: Path, profile: str | None, name: str) -> Plan:
    recipe, models, profile = stage_with_models(params, "train", TrainRecipe, profile)
    if models.student_backend != "torch":
        raise ConfigError(f"{params}: warm_train continues a torch adapter; models.student_backend is "
                          f"{models.student_backend!r}")
    return Plan(warm_run(name), recipe, models, profile)


def run(p: Plan, store: ModelStore, data: Path, out: Outputs, init: Path, train_file: Path,
        segment: Segment = Segment(), keep_half: bool = False, device: str | None = None,
        model_path: str | None = None, progress: Callable[[str, int, int], None] = lambda *a: None) -> dict:
    """Train ``out.runs/<run>`` on ``train_file`` starting from ``init``'s adapter (the first segment) or the
    previous segment's state; returns the run's summary."""
    variant_rows(train_file, "build_scaled_c / dagger_rollout")  # a bad file fails before any model loads
    keep_at = p.recipe.steps // 2 if keep_half else None
    if keep_at is not None and keep_at % p.recipe.checkpoint_every:
        raise ConfigError(f"keeping the adapter at half the steps ({keep_at}): not a checkpoint step "
                          f"(train.checkpoint_every {p.recipe.checkpoint_every})")
    folder = model_dir(store, p.models.student, model_path)
    device = resolve_device("torch", device)
    val_file = data / "sft" / "oracle_val.jsonl"
    root = out.runs / p.run.name
    record = start_record(init) if segment.index == 1 else {"continues": segment.previous.name}
    starts = out.stability_log.with_name(STARTS)
    from ..train.torch_trainer import CHECKPOINT

    checkpoint = RunPaths(root, CHECKPOINT).checkpoint
    if checkpoint.exists():
        check_start(starts, p.run.name, record)
        if keep_at is not None and checkpoint_step(checkpoint) >= keep_at and not (root / HALF / "adapter").exists():
            raise ConfigError(f"{checkpoint}: the run is past step {keep_at}, whose adapter ({root / HALF}) is gone "
                              f"(DVC deletes it before a rerun); delete {root} to start over")
    elif segment.index == 1:
        plant(p.run, p.recipe, p.models.student, folder, train_file, val_file, segment, init, root, device)
    note_start(starts, p.run.name, record)
    root.mkdir(parents=True, exist_ok=True)
    write_json(root / INIT_RECORD, record)
    out.stability_log.parent.mkdir(parents=True, exist_ok=True)
    return train_run(p.run, p.recipe, p.models.student, folder, "torch", train_file, val_file, out.runs,
                     out.archive, out.stability_log, device, progress, None, segment, keeper(root, keep_at))


def keeper(root: Path, keep_at: int | None) -> Callable[[int, object], None]:
    """The checkpoint hook that keeps the adapter of step ``keep_at`` (none when it is None)."""
    from ..train import torch_trainer as T

    def keep(step: int, tm: object) -> None:
        if step == keep_at:
            T.save_adapter(tm, root / HALF / "adapter")
    return keep
