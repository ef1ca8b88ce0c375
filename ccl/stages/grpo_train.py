"""Stage grpo_train: C_grpo_<reward>, GRPO from C against one reward design (issue 41; ``ccl.learn.grpo``).

Writes ``runs/<run>/`` as the train stage does: ``adapter/`` (peft format), ``config.json``,
``train_log.jsonl`` (the monitors, one line per step), ``summary.json``, ``manifest.json``; and beside
them ``val_log.jsonl`` (greedy validation readings) and ``samples.jsonl.gz`` (the first and the last
step's sampled episodes in full, to be read). Training runs on torch; sampling too unless
``grpo.sampler`` is openvino (the base graph with the live LoRA loaded after each update,
``ccl.policy.openvino_lora``), whatever ``models.student_engine`` says. Reads the training pool and the
validation pool, never an evaluation split.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..artifacts.inputs import split_rows
from ..artifacts.jsonio import atomic_write_bytes, dumps, sha256_file, write_json, write_jsonl
from ..artifacts.manifest import folder_files, write_manifest
from ..config import ConfigError, ModelsConfig, load_params, stage_config
from ..data.teacher import DistillConfig
from ..devices import pick_device
from ..learn.dagger import DaggerConfig
from ..learn.grpo import GroupSampler, GrpoConfig, Learner, learner_parts, train_grpo
from ..models.registry import ModelStore
from ..models.weights import model_dir
from ..policy.torch_backend import TorchBackend, linear_layers
from ..records import Task
from ..resources import peak_memory_gb
from ..train.torch_trainer import ADAPTER_FILE, TorchModel, save_adapter
from ..vocabulary import GRPO, GRPO_REWARDS, training_run

TRAIN_POOL, VAL_POOL = "train_pool", "val_pool"  # the only splits GRPO reads


@dataclass(frozen=True)
class Plan:
    run: str
    design: str  # the reward the arm trains on
    cfg: GrpoConfig
    models: ModelsConfig
    profile: str
    pool: list[Task]
    val: list[Task]


def plan(params: Path, profile: str | None, run: str, data: Path) -> Plan:
    values = load_params(params)
    cfg, profile = stage_config(values, "grpo", GrpoConfig, profile, where=str(params))
    models, _ = stage_config(values, "models", ModelsConfig, profile, where=str(params))
    try:
        variant = training_run(run).variant
    except ValueError as e:
        raise ConfigError(str(e)) from None
    if variant not in GRPO:  # the stage replaces the run's folder: never let it write over another arm's
        raise ConfigError(f"grpo_train writes GRPO runs ({', '.join(GRPO)}, _s<seed>), not {run!r}")
    _check_fresh(values, profile, cfg, params)
    pool = split_rows(data / "tasks", TRAIN_POOL, need_rows=True)
    try:
        cfg.step_tasks(pool, cfg.steps - 1)
    except ValueError as e:
        raise ConfigError(f"{params}: {e}") from None
    val = split_rows(data / "tasks", VAL_POOL, need_rows=True)[:cfg.val_tasks]
    # the run name's seed offsets params' seed, so C_grpo_<reward>_s1 samples other episodes than _s0
    cfg = dataclasses.replace(cfg, seed=cfg.seed + training_run(run).seed)
    return Plan(run, GRPO_REWARDS[GRPO.index(variant)], cfg, models, profile, pool, val)


def _check_fresh(values: dict, profile: str, cfg: GrpoConfig, params: Path) -> None:
    """GRPO's tasks must be ones no earlier arm saw: past C's (distill.n) and DAgger's slices."""
    offered, _ = stage_config(values, "distill", DistillConfig, profile, where=str(params))
    dagger, _ = stage_config(values, "dagger", DaggerConfig, profile, where=str(params))
    taken = max(offered.n, dagger.task_offset + dagger.tasks_per_iteration * len(dagger.betas))
    if cfg.task_offset < taken:
        raise ConfigError(f"{params}: grpo.task_offset {cfg.task_offset} overlaps the training tasks C and DAgger use "
                          f"(the first {taken} of the pool); set it to {taken} or more")


def run(p: Plan, store: ModelStore, init: Path, runs: Path, device: str | None = None,
        model_path: str | None = None, progress=lambda rec: None) -> dict:
    """Train ``runs/<run>`` from the adapter in ``init`` (C's run folder)."""
    folder = model_dir(store, p.models.student, model_path)
    device = pick_device(device)
    tm, ref, gen, opt = learner_parts(folder, init / "adapter", device, p.cfg)
    if any(linear_layers(tm.model.config)):  # refused before any episode (or export) is paid for
        raise ConfigError(f"{p.models.student}: a hybrid (linear-attention) model has no continuous decoder, which "
                          "GRPO's group sampling needs; train a full-attention student")
    sampler = GroupSampler(_sampler_backend(p, store, tm, folder, device), gen, name=p.run)
    root = runs / p.run
    root.mkdir(parents=True, exist_ok=True)
    result = train_grpo(Learner(tm, ref, sampler, opt, p.cfg), p.pool, p.val, p.design, progress,
                        lambda: save_adapter(tm, root / "half" / "adapter"))
    save_adapter(tm, root / "adapter")
    for name, rows in (("train_log.jsonl", result.log), ("val_log.jsonl", result.val_log)):
        atomic_write_bytes(root / name, "".join(dumps(e) + "\n" for e in rows).encode())
    write_jsonl(root / "samples.jsonl.gz", result.first_samples + result.last_samples)
    write_json(root / "config.json", {"run": p.run, "reward": p.design, "grpo": p.cfg.record(),
                                      "base_model": p.models.student, "device": device,
                                      "init_adapter_sha256": sha256_file(init / "adapter" / ADAPTER_FILE),
                                      "tasks": [t["id"] for s in range(p.cfg.steps) for t in p.cfg.step_tasks(p.pool, s)],
                                      "val_tasks": [t["id"] for t in p.val]})
    out = summary(p, init, root, result)
    loads = getattr(sampler.backend, "loads", None)  # the OpenVINO sampler's weight loads, seconds each
    if loads is not None:
        out.update(sampler=p.cfg.sampler, sampler_loads=len(loads), sampler_load_seconds=round(sum(loads), 2))
    write_json(root / "summary.json", out)
    write_manifest(root, folder_files(root), {"run": p.run, "stage": "grpo_train"})
    return out


def _sampler_backend(p: Plan, store: ModelStore, tm: TorchModel, folder: Path, device: str) -> Any:
    """The engine GRPO samples with (``grpo.sampler``): torch over the live model, or OpenVINO over the
    base graph with the live model's LoRA loaded after each update."""
    if p.cfg.sampler == "torch":
        return TorchBackend.around(tm.model, tm.tok)
    if device != "cpu":  # off the CPU the trainer's base is bfloat16, and OpenVINO's float32 graph would not be it
        raise ConfigError(f"grpo.sampler openvino samples a float32 graph on the CPU; this run trains on {device}, "
                          "whose model differs from it: sample with torch, or train with --device cpu")
    spec = store.spec(p.models.student)
    if spec.source != "pypi-gguf":
        raise ConfigError(f"grpo.sampler openvino: {p.models.student} comes from the {spec.source}, and the "
                          "OpenVINO export reuses a GGUF package's metadata; sample with torch")
    from ..policy.openvino_lora import OpenVINOLoraBackend
    tm.model.eval()  # dropout off through the updates, as TorchBackend.around leaves it on the torch path
    return OpenVINOLoraBackend.around(tm.model, tm.tok, folder, spec)


def summary(p: Plan, init: Path, root: Path, result) -> dict:
    first, last = result.log[0], result.log[-1]
    val0, val1 = result.val_log[0], result.val_log[-1]
    return {"run": p.run, "method": "grpo", "reward": p.design, "init": init.name, "steps": len(result.log),
            "episodes": sum(r["episodes"] for r in result.log), "train_minutes": round(result.seconds / 60, 2),
            "peak_mem_gb": peak_memory_gb(),
            "reward_first": first["reward"], "reward_last": last["reward"],
            "success_first": first["success"], "success_last": last["success"],
            "kl_last": last["kl"], "zero_spread_groups_mean": round(sum(r["zero_spread_groups"] for r in result.log)
                                                                   / len(result.log), 6),
            "val_success_before": val0["val_success"], "val_success_after": val1["val_success"],
            "val_flagged_before": val0["val_flagged"], "val_flagged_after": val1["val_flagged"],
            "val_flagged_and_passed_after": val1["val_flagged_and_passed"],
            "adapter_sha256": sha256_file(root / "adapter" / ADAPTER_FILE)}

