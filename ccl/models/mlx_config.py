"""Model-config fixes MLX needs, shared by the MLX backend and the MLX trainer."""
from __future__ import annotations

import json
from pathlib import Path


def mlx_config_overrides(model_dir: Path) -> dict:
    """transformers 5 writes rope_theta under rope_parameters; mlx-lm reads only the top-level
    key and silently falls back to 10,000, which changes every output. Pass it through."""
    cfg = json.loads((model_dir / "config.json").read_text())
    rope = cfg.get("rope_parameters") or {}
    if "rope_theta" not in cfg and "rope_theta" in rope:
        return {"rope_theta": rope["rope_theta"]}
    return {}
