"""Stage warm_train: supervised training that starts from a trained run's adapter (issue 59).

The learning arms of the cpu-scale profile spend a fixed budget *after* C, so their supervised runs
continue C instead of drawing a fresh LoRA:

- **C+** (``C_plus_s<seed>``), the comparator: more oracle imitation, C's recipe on a larger draw;
- **DAgger**'s iterations (``C_dagger_i<k>_s<seed>``, ``C_dagger_s<seed>``): the schedule's segments,
  the first starting from C and each later one from the previous iteration (``ccl.train.run.Segment``).

The start is planted as the run's own step-0 checkpoint: C's LoRA weights, a fresh optimizer, a fresh
stability monitor and the validation loss of C itself (the loss the run must not lose). The one training
loop (``ccl.train.run.train_run``) then resumes from it as from any checkpoint, so a killed run resumes
from its last real checkpoint and a finished one is bit-identical to an uninterrupted one. The run folder
also gets ``init.json``: the starting run and its adapter's SHA-256 for the first segment, the run it
continues for a later one; a checkpoint left by a run from another start is refused. ``keep_half``: the adapter at half the recipe's steps (a checkpoint step) is kept in ``half/adapter``,
a point on the arm's success-against-minutes curve.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..artifacts.jsonio import read_json, sha256_file, write_json
from ..config import ConfigError, ModelsConfig, stage_with_models
from ..models.registry import ModelStore
from ..models.weights import model_dir
from ..train.errors import TrainingError
from ..train.recipe import TrainRecipe
from ..train.run import RunPaths, Segment, _fingerprint, resolve_device, train_run, validation_set, variant_rows
from ..train.stability import StabilityMonitor
from ..vocabulary import Run, parse_run_name, training_run
from .train import Outputs

# The comparator arm's name. It is not in ccl.vocabulary: adding it there would change a dependency of every
# published stage; it is named here, where the one stage that trains it reads it.
C_PLUS = "C_plus"
INIT_RECORD = "init.json"
HALF = "half"  # the run folder's sub-folder holding the adapter kept at ``keep_at``


@dataclass(frozen=True)
class Plan:
    run: Run
    recipe: TrainRecipe
    models: ModelsConfig
    profile: str


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
    if segment.index == 1:
        plant_start(p, folder, train_file, val_file, segment, init, root, device)
    else:
        root.mkdir(parents=True, exist_ok=True)
        write_json(root / INIT_RECORD, {"continues": segment.previous.name})
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


def plant_start(p: Plan, folder: Path, train_file: Path, val_file: Path, segment: Segment, init: Path,
                root: Path, device: str) -> None:
    """Write the run's step-0 checkpoint from ``init``'s adapter, unless the run already has a checkpoint
    (then it resumes, after checking that the checkpoint came from the same start)."""
    from ..train import torch_trainer as T

    adapter = init / "adapter" / T.ADAPTER_FILE
    if not adapter.exists():
        raise TrainingError(f"{adapter}: no adapter to start from; train {init.name} first")
    record = {"init": init.name, "init_adapter_sha256": sha256_file(adapter)}
    paths = RunPaths(root, T.CHECKPOINT)
    if paths.checkpoint.exists():
        found = read_json(root / INIT_RECORD) if (root / INIT_RECORD).exists() else None
        if found != record:
            raise TrainingError(f"{paths.checkpoint}: left by a run that started from {found}, not {record}; "
                                f"delete {root} to start over")
        return
    root.mkdir(parents=True, exist_ok=True)
    tm = T.load_for_training(folder, p.recipe, p.run.seed, device)
    load_lora(tm, adapter)
    opt = T.make_optimizer(tm, p.recipe)
    val_before = T.mean_loss(tm, validation_set(tm, val_file, p.recipe), p.recipe.batch_size, lambda n: None)
    state = {"fingerprint": _fingerprint(p.run, p.recipe, p.models.student, folder, train_file, segment),
             "monitor": StabilityMonitor(p.recipe.stability, p.recipe.warmup).state(),
             "val_loss_before": round(val_before, 6), "val_loss_before_from": f"init {init.name}"}
    write_json(root / INIT_RECORD, record)
    T.save_checkpoint(paths.checkpoint, 0, tm, opt, state)


def load_lora(tm, adapter: Path) -> None:
    """Copy a saved adapter's LoRA weights into the model's trainable LoRA (the same shape, or refused)."""
    import torch
    from safetensors.torch import load_file

    from ..train.torch_trainer import trainable

    weights = load_file(adapter)
    params = trainable(tm.model)
    names = {n: n.replace(".default.", ".") for n in params}  # peft's saved names drop the adapter's name
    missing = sorted(set(names.values()) - set(weights))
    extra = sorted(set(weights) - set(names.values()))
    if missing or extra:
        raise TrainingError(f"{adapter}: its LoRA does not match the recipe's ({len(missing)} tensors missing, "
                            f"e.g. {missing[:1]}; {len(extra)} unexpected, e.g. {extra[:1]})")
    with torch.no_grad():
        for n, q in params.items():
            w = weights[names[n]]
            if w.shape != q.shape:
                raise TrainingError(f"{adapter}: {names[n]} has shape {tuple(w.shape)}, the recipe's {tuple(q.shape)}")
            q.copy_(w.to(q.dtype))
