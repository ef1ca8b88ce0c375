"""Build a policy by name: ``oracle``, or a registered model on a backend (torch | mlx)."""
from __future__ import annotations

import json
from pathlib import Path

from ..episode.oracle import OraclePolicy
from ..models.registry import ModelError, ModelStore
from ..models.weights import model_dir
from ..vocabulary import DEFAULT_PRECISION, PRECISIONS
from .base import GenConfig, ModelPolicy

BACKENDS = ("torch", "mlx", "openvino")


def load_backend(store: ModelStore, model: str, backend: str = "torch", adapter: str | Path | None = None,
                 model_path: str | Path | None = None, precision: str = DEFAULT_PRECISION):
    """``precision``: float32, or bfloat16 on the CPU's matrix units (torch and OpenVINO; issue 56)."""
    if backend not in BACKENDS:
        raise ModelError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    if precision not in PRECISIONS:
        raise ModelError(f"unknown precision {precision!r}; valid: {', '.join(PRECISIONS)}")
    if backend == "mlx" and precision != DEFAULT_PRECISION:
        raise ModelError(f"precision {precision!r}: the mlx backend generates in {DEFAULT_PRECISION} only; "
                         "choose torch or openvino for bfloat16")
    folder = model_dir(store, model, model_path)  # an unknown name fails here, naming the registry
    if backend == "torch":
        check_torch_loadable(model, folder)
        from .torch_backend import TorchBackend
        return TorchBackend(folder, adapter, precision=precision)
    if backend == "openvino":
        spec = store.spec(model)
        if spec.source != "pypi-gguf":
            raise ModelError(f"{model}: the openvino backend runs models registered from a GGUF package "
                             f"(source pypi-gguf), whose metadata its export reuses; {model} comes from the "
                             f"{spec.source}: run it on torch")
        from .openvino_backend import OpenVINOBackend
        return OpenVINOBackend(folder, spec, adapter, precision=precision)
    from .mlx_backend import MLXBackend
    return MLXBackend(folder, adapter)


def check_torch_loadable(model: str, folder: Path) -> None:
    """Refuse, with the fix, a checkpoint that transformers cannot load: MLX-quantised weights (an
    mlx-community conversion) otherwise fail deep inside transformers with "no quant_method attribute"."""
    config = json.loads((Path(folder) / "config.json").read_text())
    quant = config.get("quantization_config") or config.get("quantization")
    if isinstance(quant, dict) and "quant_method" not in quant:
        raise ModelError(f"{model}: {folder} holds MLX-quantised weights (config.json 'quantization' "
                         f"{ {k: quant[k] for k in sorted(quant) if k in ('bits', 'group_size')} }), which the torch "
                         "backend cannot load; run it on the mlx backend (Apple silicon, or mlx[cpu]), or choose "
                         "a bf16 checkpoint: the paper-cuda profile's teacher qwen3.5-4b (dvc exp run -S "
                         "profile=paper-cuda)")


def load_policy(store: ModelStore, name: str, backend: str = "torch", adapter: str | Path | None = None,
                gen: GenConfig | None = None, model_path: str | Path | None = None, precision: str = DEFAULT_PRECISION):
    if name == "oracle":
        return OraclePolicy()
    return ModelPolicy(load_backend(store, name, backend, adapter, model_path, precision), gen or GenConfig(), name=name)
