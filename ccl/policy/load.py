"""Build a policy by name: ``oracle``, or a registered model on a backend (torch | mlx)."""
from __future__ import annotations

from pathlib import Path

from ..models.registry import ModelError, ModelStore
from ..models.weights import model_dir
from ..oracle import OraclePolicy
from .base import GenConfig, ModelPolicy

BACKENDS = ("torch", "mlx")


def load_backend(store: ModelStore, model: str, backend: str = "torch", adapter: str | Path | None = None,
                 model_path: str | Path | None = None):
    if backend not in BACKENDS:
        raise ModelError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    folder = model_dir(store, model, model_path)  # an unknown name fails here, naming the registry
    if backend == "torch":
        from .torch_backend import TorchBackend
        return TorchBackend(folder, adapter)
    from .mlx_backend import MLXBackend
    return MLXBackend(folder, adapter)


def load_policy(store: ModelStore, name: str, backend: str = "torch", adapter: str | Path | None = None,
                gen: GenConfig | None = None, model_path: str | Path | None = None):
    if name == "oracle":
        return OraclePolicy()
    return ModelPolicy(load_backend(store, name, backend, adapter, model_path), gen or GenConfig(), name=name)
