"""A supervised run that starts from a trained adapter (issue 59's learning arms; stage warm_train).

The start is planted as the run's own step-0 checkpoint: the starting adapter's LoRA weights, a fresh
optimizer, a fresh stability monitor and the starting model's validation loss. ``train_run`` (the one
training loop, ``ccl.train.run``) then resumes from it as from any checkpoint. What the run started from is
kept in a log beside the stability log (one line per run, replaced when the run is redone): DVC deletes a
stage's outputs before rerunning it, so a record inside the run folder would not survive to check a
checkpoint a killed run left.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ..artifacts.jsonio import sha256_file
from ..train.errors import TrainingError
from ..train.recipe import TrainRecipe
from ..train.run import RunPaths, Segment, _fingerprint, read_jsonl_tolerant, update_stability_log, validation_set
from ..train.stability import StabilityMonitor
from ..vocabulary import Run


def start_record(init: Path) -> dict:
    """What a first segment starts from: the run folder ``init`` and its adapter's SHA-256."""
    from ..train.torch_trainer import ADAPTER_FILE

    adapter = init / "adapter" / ADAPTER_FILE
    if not adapter.exists():
        raise TrainingError(f"{adapter}: no adapter to start from; train {init.name} first")
    return {"init": init.name, "init_adapter_sha256": sha256_file(adapter)}


def check_start(log: Path, run: str, record: dict) -> None:
    """Refuse to resume a checkpoint that a run from another start left (``log``: the starts log)."""
    found = next(({k: v for k, v in e.items() if k != "run"} for e in read_jsonl_tolerant(log) if e.get("run") == run),
                 None)
    if found != record:
        raise TrainingError(f"run {run}: its checkpoint was left by a run that started from {found}, not {record} "
                            f"({log}); delete the run's folder to start over")


def note_start(log: Path, run: str, record: dict) -> None:
    update_stability_log(log, {"run": run, **record})


def checkpoint_step(path: Path) -> int:
    """The step a checkpoint was written at (read without a model)."""
    import torch

    return int(torch.load(path, map_location="cpu", weights_only=True)["step"])


def plant(run: Run, recipe: TrainRecipe, model_name: str, folder: Path, train_file: Path, val_file: Path,
          segment: Segment, init: Path, root: Path, device: str) -> None:
    """Write ``root``'s step-0 checkpoint from ``init``'s adapter."""
    from ..train import torch_trainer as T

    root.mkdir(parents=True, exist_ok=True)
    tm = T.load_for_training(folder, recipe, run.seed, device)
    load_lora(tm, init / "adapter" / T.ADAPTER_FILE)
    opt = T.make_optimizer(tm, recipe)
    val_before = T.mean_loss(tm, validation_set(tm, val_file, recipe), recipe.batch_size, lambda n: None)
    state = {"fingerprint": _fingerprint(run, recipe, model_name, folder, train_file, segment),
             "monitor": StabilityMonitor(recipe.stability, recipe.warmup).state(),
             "val_loss_before": round(val_before, 6), "val_loss_before_from": f"init {init.name}"}
    T.save_checkpoint(RunPaths(root, T.CHECKPOINT).checkpoint, 0, tm, opt, state)


def load_lora(tm: Any, adapter: Path) -> None:
    """Copy a saved adapter's LoRA weights (peft's file) into ``tm``'s trainable LoRA: the same tensors and
    shapes, or refused. (``torch_trainer.load_adapter_for_training`` loads an adapter as peft's own model,
    without the recipe's precision or a fresh LoRA's layout; a warm start needs the recipe's model.)"""
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
