"""The model store the model-using scripts pass to the library (``ccl.models.registry.ModelStore``)."""
from __future__ import annotations

import os
from pathlib import Path

from ccl.models.registry import ModelStore, load_registry, local_path_variable

from .layout import MODEL_REGISTRY, ROOT


def model_store(registry: Path = MODEL_REGISTRY) -> ModelStore:
    """The registry, the conversion cache (``$CCL_MODEL_CACHE`` or models/) and local copies of
    hub models named by ``$CCL_MODEL_PATH_<NAME>``."""
    local = {name: Path(os.environ[var]) for name in load_registry(registry)
             if (var := local_path_variable(name)) in os.environ}
    return ModelStore(registry, Path(os.environ.get("CCL_MODEL_CACHE", ROOT / "models")), local)
