"""Stage val_baseline: the untrained student's loss on the oracle validation episodes, once.

Every run of the matrix reports how far it moved the validation loss from the base model's.
That starting value depends on the base model, the validation set and the packing, not on
the run (LoRA starts as the identity), so it is computed here once and read by every train
stage instead of being recomputed per run (~40 s each on 2 CPU cores).
"""
from __future__ import annotations

from pathlib import Path

from ..artifacts.jsonio import write_json
from ..models.registry import ModelStore
from ..models.weights import model_dir
from ..train.run import validation_baseline
from .train import plan_recipe


def run(params: Path, profile: str | None, store: ModelStore, data: Path, out: Path, device: str | None = None,
        model_path: str | None = None) -> dict:
    recipe, models, _ = plan_recipe(params, profile)
    folder = model_dir(store, models.student, model_path)
    record = validation_baseline(recipe, models.student, folder, models.student_backend,
                                 data / "sft" / "oracle_val.jsonl", device)
    write_json(out, record)
    return record
