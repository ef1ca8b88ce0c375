"""Stage analyze (study 2): the pre-registered families and the success table, in one JSON file."""
from __future__ import annotations

from pathlib import Path

from ..analysis.runs import AnalyzeConfig
from ..analysis.study2 import analyze
from ..artifacts.jsonio import sha256_file, write_json
from ..config import load_params, stage_config
from ..errors import InputError


def run(params: Path, profile: str | None, runs: Path, prereg: Path, out: Path) -> dict:
    """Analyse the judged runs under ``runs``; the record quotes the pre-registration's SHA-256."""
    cfg, profile = stage_config(load_params(params), "analyze", AnalyzeConfig, profile, where=str(params))
    if not prereg.is_file():
        raise InputError(f"{prereg}: the pre-registration is missing")
    try:
        summary = analyze(runs, cfg)
    except ValueError as e:  # runs evaluated on different tasks, or malformed rows
        raise InputError(str(e)) from None
    if not summary["configs"]:
        raise InputError(f"no judged run in {runs}; run the judge stages first")
    record = {"profile": profile, "preregistration": {"file": prereg.name, "sha256": sha256_file(prereg)}, **summary}
    write_json(out, record)
    return record
