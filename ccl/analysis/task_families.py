"""Successes per configuration and task family: the descriptive table studies 2 and 3 both publish.

The pre-registrations test nothing per family; the table shows where a configuration's successes come from.
"""
from __future__ import annotations

from typing import Mapping

import numpy as np

from .intervals import pooled
from .runs import AnalyzeConfig, ConfigData


def family_rows(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig, outcome: str) -> list[dict]:
    """Per configuration and task family, pooled over the primary splits: the tasks and the successes on
    ``outcome`` (a ruler), each task's success averaged over the configuration's seeds, stored under
    ``<outcome>_successes``."""
    rows = []
    for name, data in configs.items():
        mat = pooled(data, cfg.primary_splits)
        families = np.array(mat.strata["family"])
        for family in sorted(set(families)):
            keep = families == family
            rows.append({"config": name, "family": str(family), "tasks": int(keep.sum()),
                         f"{outcome}_successes": float(mat.values[outcome][:, keep].mean(axis=0).sum())})
    return rows
