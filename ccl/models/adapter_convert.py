"""LoRA adapters between PEFT (the torch trainer's format) and mlx-lm (the MLX trainer's).

Both compute ``W x + s * B A x`` on the adapted linear layers of the last blocks; they differ in
names, layout and how the scale is written:

- PEFT: ``base_model.model.model.layers.<i>.<module>.lora_A.weight`` of shape (r, in) and
  ``lora_B.weight`` (out, r); scale ``lora_alpha / r``; ``layers_to_transform``, ``target_modules``.
- mlx-lm: ``model.layers.<i>.<module>.lora_a`` of shape (in, r) and ``lora_b`` (r, out); the scale
  itself; ``num_layers`` counted from the last block; ``keys`` (module paths inside a block).

The conversion copies the numbers (transposed), so both backends compute the same function.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np

from ..errors import InputError

PEFT_KEY = re.compile(r"^base_model\.model\.model\.layers\.(\d+)\.(.+)\.lora_([AB])\.weight$")
MLX_KEY = re.compile(r"^model\.layers\.(\d+)\.(.+)\.lora_([ab])$")


def peft_to_mlx(src: Path, out: Path) -> Path:
    """Write ``out`` (adapter_config.json + adapters.safetensors) from the PEFT adapter folder ``src``."""
    from safetensors.numpy import load_file, save_file

    cfg = json.loads((src / "adapter_config.json").read_text())
    if cfg.get("use_rslora") or cfg.get("use_dora") or cfg.get("peft_type", "LORA") != "LORA":
        raise InputError(f"{src}: only plain LoRA converts (no rsLoRA, DoRA or other PEFT types)")
    weights = load_file(str(src / "adapter_model.safetensors"))
    converted, layers, keys = {}, set(), set()
    for name, w in weights.items():
        m = PEFT_KEY.match(name)
        if m is None:
            raise InputError(f"{src}: unexpected tensor {name!r} (expected PEFT LoRA weights of decoder layers)")
        layer, module, ab = m.groups()
        layers.add(int(layer))
        keys.add(module)
        converted[f"model.layers.{layer}.{module}.lora_{ab.lower()}"] = np.ascontiguousarray(w.T)
    n_total = _n_layers(cfg, layers)
    first = min(layers)
    if sorted(layers) != list(range(first, n_total)):
        raise InputError(f"{src}: LoRA on blocks {sorted(layers)}; mlx-lm adapts the last blocks only "
                         f"(a contiguous run ending at block {n_total - 1})")
    config = {"fine_tune_type": "lora", "num_layers": n_total - first,
              "base_model_name_or_path": cfg.get("base_model_name_or_path"),
              "lora_parameters": {"rank": cfg["r"], "scale": cfg["lora_alpha"] / cfg["r"],
                                  "dropout": cfg.get("lora_dropout", 0.0), "keys": sorted(keys)}}
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save_file(converted, str(tmp / "adapters.safetensors"))
    (tmp / "adapter_config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def _n_layers(cfg: dict, layers: set[int]) -> int:
    """Blocks in the base model: PEFT records the adapted ones; their last is the model's last."""
    listed = cfg.get("layers_to_transform")
    return (max(listed) if listed else max(layers)) + 1


def mlx_to_peft(src: Path, out: Path, n_layers: int) -> Path:
    """Write ``out`` (PEFT's adapter_config.json + adapter_model.safetensors) from the mlx-lm adapter
    folder ``src``; ``n_layers``: blocks in the base model (mlx-lm counts adapted blocks from the end)."""
    from peft import LoraConfig
    from safetensors.numpy import load_file, save_file

    cfg = json.loads((src / "adapter_config.json").read_text())
    lora = cfg["lora_parameters"]
    if cfg.get("fine_tune_type", "lora") != "lora":
        raise InputError(f"{src}: only LoRA converts (fine_tune_type {cfg.get('fine_tune_type')!r})")
    weights, modules = {}, set()
    for name, w in load_file(str(src / "adapters.safetensors")).items():
        m = MLX_KEY.match(name)
        if m is None:
            raise InputError(f"{src}: unexpected tensor {name!r} (expected mlx-lm LoRA weights of decoder layers)")
        layer, module, ab = m.groups()
        modules.add(module.rsplit(".", 1)[-1])
        weights[f"base_model.model.model.layers.{layer}.{module}.lora_{ab.upper()}.weight"] = np.ascontiguousarray(w.T)
    config = LoraConfig(r=lora["rank"], lora_alpha=lora["scale"] * lora["rank"], lora_dropout=lora.get("dropout", 0.0),
                        target_modules=sorted(modules), layers_to_transform=list(range(n_layers - cfg["num_layers"], n_layers)),
                        base_model_name_or_path=cfg.get("base_model_name_or_path"), task_type="CAUSAL_LM")
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    config.save_pretrained(str(tmp))
    save_file(weights, str(tmp / "adapter_model.safetensors"))
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out
