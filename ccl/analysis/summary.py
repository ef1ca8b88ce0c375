"""The analyze stage's summary: every table, the configurations and their seeds, the statistics'
settings and the inputs' hashes, JSON-ready.
"""
from __future__ import annotations

from typing import Mapping

from .contrasts import paired, paired_plan, primary, rulers
from .intervals import Progress, _noop
from .learned import learned
from .runs import AnalyzeConfig, ConfigData
from .tables import (
    by_stratum,
    catalogue_ablation,
    diagnostics,
    efficiency,
    efficiency_by_run,
    leniency,
    pass_k,
    post_hoc_unseen,
    success_by_split,
)

# ---------------------------------------------------------------- the summary

def work_units(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> int:
    """How many progress steps ``build_summary`` reports (for a progress bar's total)."""
    return 5 * len(configs) + len(paired_plan(configs, cfg))


def build_summary(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig, inputs: Mapping[str, str] | None = None,
                  progress: Progress = _noop) -> dict:
    """Every table, plus configs, seeds per config, stats settings and input hashes; JSON-ready."""
    tables = {
        "primary": primary(configs, cfg),
        "success_by_split": success_by_split(configs, cfg, progress),
        "leniency": leniency(configs, cfg, progress),
        "rulers": rulers(configs, cfg),
        "diagnostics": diagnostics(configs, cfg, progress),
        "paired": paired(configs, cfg, progress),
        "by_family": by_stratum(configs, cfg, "family"),
        "by_depth": by_stratum(configs, cfg, "depth"),
        "by_graph_seen": by_stratum(configs, cfg, "graph_seen"),
        "by_faults": by_stratum(configs, cfg, "faults"),
        "catalogue_ablation": catalogue_ablation(configs, cfg, progress),
        "post_hoc_unseen_excluding": post_hoc_unseen(configs, cfg, progress),
        "pass_k": pass_k(configs, cfg),
        "efficiency": efficiency(configs),
        "efficiency_by_run": efficiency_by_run(configs),
        "learned": learned(configs, cfg),
    }
    return {
        "configs": list(configs),
        "seeds_per_config": {name: data.seeds for name, data in configs.items()},
        "runs_per_config": {name: list(data.runs) for name, data in configs.items()},
        "stats": {"n_resamples": cfg.n_resamples, "n_flips": cfg.n_flips, "alpha": cfg.alpha, "seed": cfg.seed,
                  "ci": "percentile", "main_splits": list(cfg.main_splits),
                  "primary_splits": list(cfg.primary_splits),
                  "flagged_templates": list(cfg.flagged_templates),
                  "cell_seeds": "(seed << 32) | crc32(table, config or comparison, split or metric)"},
        "inputs": dict(sorted((inputs or {}).items())),
        **tables,
    }
