"""Stage dpo_train: C_dpo, DPO on C's own mistakes starting from C (issue 41; ``ccl.learn.dpo``).

Writes ``runs/<run>/`` as the train stage does: ``adapter/`` (peft format, the trained adapter only),
``config.json`` (what determined the run), ``train_log.jsonl`` (TRL's metrics per optimizer step),
``summary.json`` and ``manifest.json``. TRL trains on torch whatever ``models.student_backend`` says (the
adapter is peft's format, which every backend loads).
"""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ..artifacts.inputs import read_rows
from ..artifacts.shapes import PreferencePair
from ..artifacts.jsonio import atomic_write_bytes, dumps, sha256_file, write_json
from ..artifacts.manifest import folder_files, write_manifest
from ..config import ConfigError, ModelsConfig, load_params, stage_config
from ..devices import pick_device
from ..learn.dpo import DpoConfig, train_dpo
from ..models.registry import ModelStore
from ..models.weights import model_dir
from ..resources import peak_memory_gb
from ..train.torch_trainer import ADAPTER_FILE, load_adapter_for_training, save_adapter
from ..vocabulary import C_DPO, training_run


@dataclass(frozen=True)
class Plan:
    run: str
    cfg: DpoConfig
    models: ModelsConfig
    profile: str


def plan(params: Path, profile: str | None, run: str) -> Plan:
    values = load_params(params)
    cfg, profile = stage_config(values, "dpo", DpoConfig, profile, where=str(params))
    models, _ = stage_config(values, "models", ModelsConfig, profile, where=str(params))
    try:
        variant = training_run(run).variant
    except ValueError as e:
        raise ConfigError(str(e)) from None
    if variant != C_DPO:  # the stage replaces the run's folder: never let it write over another arm's
        raise ConfigError(f"dpo_train writes {C_DPO} runs ({C_DPO}_s<seed>), not {run!r}")
    return Plan(run, cfg, models, profile)


def run(p: Plan, store: ModelStore, pairs: Path, init: Path, runs: Path, device: str | None = None,
        model_path: str | None = None) -> dict:
    """Train ``runs/<run>`` from the adapter in ``init`` (C's run folder) on the pairs file."""
    rows = read_rows(pairs, "dpo_pairs", PreferencePair, need_rows=True)
    folder = model_dir(store, p.models.student, model_path)
    device = pick_device(device)
    tm = load_adapter_for_training(folder, init / "adapter", device)
    root = runs / p.run
    work = root.with_name(root.name + ".work")
    shutil.rmtree(work, ignore_errors=True)
    result = train_dpo(tm.model, tm.tok, rows, p.cfg, work)
    shutil.rmtree(work, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    save_adapter(tm, root / "adapter")
    atomic_write_bytes(root / "train_log.jsonl", "".join(dumps(e) + "\n" for e in result.log).encode())
    write_json(root / "config.json", {"run": p.run, "dpo": p.cfg.record(), "base_model": p.models.student,
                                      "init_adapter_sha256": sha256_file(init / "adapter" / ADAPTER_FILE),
                                      "pairs_sha256": sha256_file(pairs), "device": device})
    last = result.log[-1]
    summary = {"run": p.run, "method": "dpo", "init": init.name, "steps": len(result.log), "pairs": len(rows),
               "pairs_used": result.pairs_used, "pairs_too_long": result.pairs_too_long,
               "train_minutes": round(result.seconds / 60, 2), "peak_mem_gb": peak_memory_gb(),
               "final_loss": last["loss"], "final_reward_accuracy": last["reward_accuracy"],
               "final_reward_margin": last["reward_margin"],
               "adapter_sha256": sha256_file(root / "adapter" / ADAPTER_FILE)}
    write_json(root / "summary.json", summary)
    write_manifest(root, folder_files(root), {"run": p.run, "stage": "dpo_train"})
    return summary
