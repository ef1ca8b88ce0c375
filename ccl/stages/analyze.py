"""Stage analyze: every table of the write-up from the judged runs, in one JSON file."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..analysis.runs import AnalyzeConfig, ConfigData, build_configs, load_runs
from ..analysis.summary import build_summary, work_units
from ..artifacts.jsonio import write_json
from ..config import load_params, stage_config
from ..errors import InputError


@dataclass(frozen=True)
class Loaded:
    configs: dict[str, ConfigData]  # configuration -> its runs aligned by task
    inputs: dict  # file -> SHA-256 of every file read
    n_runs: int


def config(params: Path, profile: str | None) -> tuple[AnalyzeConfig, str]:
    return stage_config(load_params(params), "analyze", AnalyzeConfig, profile, where=str(params))


def load(runs: Path) -> Loaded:
    """Every run under ``runs`` (``<name>/verdicts.jsonl.gz`` and ``metrics.json``), grouped by configuration."""
    loaded, inputs = load_runs(runs)
    if not loaded:
        raise InputError(f"no evaluation run in {runs} (expected <name>/verdicts.jsonl.gz from the judge stage); "
                         f"run the evaluate stage first")
    try:
        configs = build_configs(loaded)
    except ValueError as e:  # runs that do not line up, or malformed rows
        raise InputError(str(e)) from None
    return Loaded(configs, inputs, len(loaded))


def work(data: Loaded, cfg: AnalyzeConfig) -> int:
    """Units of ``run``'s progress."""
    return work_units(data.configs, cfg)


def run(cfg: AnalyzeConfig, profile: str, data: Loaded, out: Path,
        progress: Callable[[int], None] = lambda n: None) -> dict:
    """Write the summary of every table to ``out`` and return it."""
    summary = build_summary(data.configs, cfg, data.inputs, progress=progress)
    summary["profile"] = profile
    write_json(out, summary)
    return summary
