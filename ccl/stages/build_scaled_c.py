"""Stage build_scaled_c: C at the cpu-scale profile's size, drawn from the training pool's oracle episodes.

The draw is ``ccl.data.scaled`` with params ``scaled_c`` (budget, sampler, seed): the competent-student
pilot (experiments/c_scale) chose the family-balanced sampler after reading its first run's failures and
the budget by its selection rule. No teacher is involved; only the first study's build_datasets outputs
(the training pool and its oracle episodes) are read.
"""
from __future__ import annotations

from pathlib import Path

from ..artifacts.inputs import read_rows
from ..artifacts.jsonio import sha256_file, write_json, write_jsonl
from ..artifacts.manifest import write_manifest
from ..config import load_params, stage_config
from ..data.scaled import ScaledCConfig, draw
from ..data.variants import describe_variant


def run(params: Path, profile: str | None, data: Path, out: Path) -> dict:
    """Write ``out/C.jsonl``, ``out/C.json`` (draw, composition, hash) and the manifest; returns the record."""
    cfg, profile = stage_config(load_params(params), "scaled_c", ScaledCConfig, profile, where=str(params))
    rows = draw(read_rows(data / "sft" / "oracle_train.jsonl", "build_datasets"), cfg)
    path = out / "C.jsonl"
    write_jsonl(path, rows)
    record = {"profile": profile, "budget": cfg.budget, "sampler": cfg.sampler, "seed": cfg.seed,
              "sha256": sha256_file(path), **describe_variant(rows)}
    write_json(out / "C.json", record)
    write_manifest(out, [path, out / "C.json"], {"profile": profile, "stage": "build_scaled_c"})
    return record
