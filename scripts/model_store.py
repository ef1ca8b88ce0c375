"""The model store the model-using scripts pass to the library (``ccl.models.registry.ModelStore``)."""
from __future__ import annotations

import os
from pathlib import Path

from ccl.models.registry import ModelStore, load_registry, local_path_variable

from .layout import MODEL_REGISTRY, ROOT

TRUE = {"1", "ON", "YES", "TRUE"}  # as the hub client reads its boolean variables
OFFLINE = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")  # either one keeps the hub client offline


def model_store(registry: Path = MODEL_REGISTRY) -> ModelStore:
    """The registry, the conversion cache (``$CCL_MODEL_CACHE`` or models/), local copies of hub
    models named by ``$CCL_MODEL_PATH_<NAME>``, the hub cache (``$HF_HUB_CACHE``, else the hub
    client's default) and offline mode (``$HF_HUB_OFFLINE`` or ``$TRANSFORMERS_OFFLINE``)."""
    local = {name: Path(os.environ[var]) for name in load_registry(registry)
             if (var := local_path_variable(name)) in os.environ}
    hf_cache = Path(os.environ["HF_HUB_CACHE"]) if os.environ.get("HF_HUB_CACHE") else None
    offline = any(os.environ.get(var, "").upper() in TRUE for var in OFFLINE)
    return ModelStore(registry, Path(os.environ.get("CCL_MODEL_CACHE", ROOT / "models")), local, hf_cache, offline)
