"""Stage bfcl_sample: draw the BFCL questions every configuration answers (params ``bfcl``:
categories, questions per category, seed) and write their ids with the bfcl-eval release they come
from (ccl.external)."""
from __future__ import annotations

from pathlib import Path

from ..artifacts.jsonio import write_json
from ..config import load_params, stage_config
from ..external.bfcl_config import BfclConfig
from ..external.bfcl_questions import draw


def sample(params: Path, profile: str | None, out: Path) -> dict:
    """Draw the questions and write them to ``out``."""
    cfg, _ = stage_config(load_params(params), "bfcl", BfclConfig, profile, where=str(params))
    drawn = draw(cfg)
    write_json(out, drawn)
    return drawn
