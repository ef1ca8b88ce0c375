"""Stage analyze (study 3): the pre-registered families, the seeds' agreement, the success tables and the arms'
minutes, in one JSON file (``ccl.analysis.study3``)."""
from __future__ import annotations

from pathlib import Path

from ..analysis.declared import read_design
from ..analysis.runs import AnalyzeConfig
from ..analysis.study3 import Timings, analyze
from ..artifacts.jsonio import sha256_file, write_json
from ..config import load_params, stage_config
from ..errors import InputError


def run(params: Path, profile: str | None, design_file: Path, root: Path, tasks: Path, runs: Path, timings: Timings,
        prereg: Path, out: Path) -> dict:
    """Analyse the evaluated runs under ``runs``; the record quotes the pre-registration's and the design's SHA-256."""
    cfg, profile = stage_config(load_params(params), "analyze", AnalyzeConfig, profile, where=str(params))
    if not prereg.is_file():
        raise InputError(f"{prereg}: the pre-registration is missing")
    design = read_design(design_file)
    try:
        summary = analyze(root, design, tasks, runs, timings, cfg)
    except ValueError as e:  # runs evaluated on different tasks, or malformed rows
        raise InputError(str(e)) from None
    record = {"profile": profile, "preregistration": {"file": prereg.name, "sha256": sha256_file(prereg)},
              "design": {"file": design_file.as_posix(), "sha256": sha256_file(design_file)}, **summary}
    write_json(out, record)
    return record
