"""Attach a LoRA adapter to a base model, refusing adapters trained on another base."""
from __future__ import annotations

import json
from pathlib import Path

from ..models.registry import ADAPTER_FILES, ModelError

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")


def resolve_adapter(path: str | Path) -> Path:
    """A run folder (runs/<name>) stands for its adapter/ subfolder."""
    path = Path(path)
    return path / "adapter" if (path / "adapter" / "adapter_config.json").exists() else path


def check_weights(adapter: Path) -> None:
    """Adapters load from safetensors only. A pickle can run code when it is read, so a folder that
    holds only pickled weights is refused by name, before any library opens it."""
    if any((adapter / name).is_file() for name in ADAPTER_FILES):
        return
    try:
        pickles = sorted(f.name for f in adapter.iterdir() if f.suffix.lower() in PICKLE_SUFFIXES)
    except OSError:
        pickles = []
    found = f"holds only pickled weights ({', '.join(pickles)}), which are never loaded" if pickles else "has no weights"
    raise ModelError(f"{adapter}: {found}; an adapter must be {' or '.join(ADAPTER_FILES)} (what the "
                     f"trainers write; peft's save_pretrained writes safetensors by default)")


def adapter_base(adapter: Path) -> str | None:
    cfg = Path(adapter) / "adapter_config.json"
    if not cfg.exists():
        raise ModelError(f"{adapter}: no adapter_config.json; pass the folder a training run wrote "
                         f"(runs/<config>_s<seed>/adapter). A published run's adapter lives in the DVC cache: "
                         f"`dvc pull train@<run>` fetches it, `dvc repro train@<run>` trains it")
    return json.loads(cfg.read_text()).get("base_model_name_or_path")


def attach_adapter(model, model_dir: str | Path, adapter: str | Path):
    """``model`` with the LoRA adapter merged in: PEFT's format, or mlx-lm's (an MLX run), converted
    first (ccl/models/adapter_convert.py: the same numbers)."""
    import tempfile

    from peft import PeftModel

    adapter = resolve_adapter(adapter)
    base = adapter_base(adapter)
    ours = Path(model_dir).name
    if base and Path(base).name != ours:
        raise ModelError(f"{adapter}: adapter was trained on {base}, not {ours}; evaluate it with "
                         f"the model it was trained on")
    check_weights(adapter)
    if (adapter / "adapters.safetensors").is_file() and not (adapter / "adapter_model.safetensors").is_file():
        from ..models.adapter_convert import mlx_to_peft
        with tempfile.TemporaryDirectory(prefix="ccl-peft-adapter-") as tmp:
            converted = mlx_to_peft(adapter, Path(tmp) / "adapter", model.config.get_text_config().num_hidden_layers)
            return PeftModel.from_pretrained(model, str(converted)).merge_and_unload()
    return PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
