"""Study 2's analysis (docs/preregistration-2.md): the primary family on ruler 2, two secondary families,
success per configuration and split, and the check that the oracle passes every fresh task.

The contrasts are ``vocabulary.STUDY2_CONTRASTS``, computed by the first study's machinery
(``contrasts.contrast_family``: exact sign-flip p, task-bootstrap CI, Holm) on three outcomes:

- ruler 2's strict success (primary);
- ruler 1's strict success (secondary family A);
- ruler 2's success that also fails an episode repeating an answered call in a later turn
  (``repeats.repeats_after_answer``; secondary family B).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Mapping

import numpy as np

from ..artifacts.inputs import read_rows
from ..artifacts.jsonio import sha256_file
from ..vocabulary import ORACLE, RULER2, STUDY2_CONTRASTS
from .contrasts import contrast_family
from .intervals import _cell, interval, pooled
from .repeats import repeats_after_answer
from .runs import POOLED, AnalyzeConfig, ConfigData, Matrix, build_configs, cell_seed, load_runs
from .task_families import family_rows

NO_REPEATS = "ruler2_no_repeats"  # ruler 2's success, failed when the episode repeats an answered call
# The three families in the pre-registration's order: outcome key -> (role, label). The label is the one
# wording study 2's page uses for the family (report_study2 --check holds the page to it).
FAMILIES = {
    RULER2: ("primary", "primary: ruler-2 strict success, Holm over the 3 contrasts, fixed in advance"),
    "success": ("secondary A", "secondary A: ruler-1 strict success, Holm over the 3 contrasts, fixed in advance"),
    NO_REPEATS: ("secondary B", "secondary B: ruler 2 failing repeats of answered calls, Holm over the 3 contrasts, "
                                "fixed in advance"),
}


EPISODES = "episodes.jsonl.gz"  # the evaluate stage's transcripts of a run, beside its verdicts


def repeat_flags(run_dir: Path) -> dict[str, bool]:
    """task id -> whether the run's episode repeats an answered call (``repeats_after_answer``)."""
    return {e["task_id"]: repeats_after_answer(e["record"]) > 0 for e in read_rows(run_dir / EPISODES, "evaluate")}


def with_no_repeats(data: ConfigData, flags: Mapping[str, Mapping[str, bool]]) -> ConfigData:
    """``data`` with the ``NO_REPEATS`` outcome added to every split: ruler 2's success and no repeat."""
    splits = {}
    for split, mat in data.splits.items():
        repeated = np.array([[flags[run][t] for t in mat.task_ids] for run in data.runs], dtype=float)
        values = {**mat.values, NO_REPEATS: mat.values[RULER2] * (1.0 - repeated)}
        splits[split] = Matrix(mat.task_ids, values, mat.strata)
    return dataclasses.replace(data, splits=splits)


def success_rows(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> list[dict]:
    """Per configuration, split and pooled: each outcome's mean and 95% interval (percent)."""
    rows = []
    for name, data in configs.items():
        for split in (*cfg.primary_splits, POOLED):
            mat = pooled(data, cfg.primary_splits) if split == POOLED else data.splits[split]
            seed = cell_seed(cfg.seed, "study2", name, split)
            rows.append({"config": name, "split": split, "tasks": mat.n_tasks,
                         **{o: _cell(*interval(mat.values[o], cfg, seed)) for o in FAMILIES}})
    return rows


def oracle_check(data: ConfigData | None) -> dict:
    """The oracle's failures on the fresh tasks under each ruler: both must be empty for the tasks to be sound."""
    if data is None:
        return {"evaluated": False}
    out: dict = {"evaluated": True}
    for outcome in (RULER2, "success"):
        failed = [t for mat in data.splits.values() for t, v in zip(mat.task_ids, mat.values[outcome][0]) if v < 1]
        out[outcome] = {"tasks": sum(m.n_tasks for m in data.splits.values()), "failed": failed}
    return out


class FreshTaskError(ValueError):
    """The oracle fails a fresh task under ruler 2: a defect of the task or the ruler, not a result."""


def analyze(runs_dir: Path, cfg: AnalyzeConfig) -> dict:
    """The study-2 summary from every judged run under ``runs_dir`` (results/study2/runs). Stops when the
    oracle fails any fresh task under ruler 2 (docs/preregistration-2.md: the tasks are then unsound)."""
    runs, inputs = load_runs(runs_dir)
    configs = build_configs(runs)
    oracle = configs.pop(ORACLE, None)
    check = oracle_check(oracle)
    if check.get("evaluated") and check[RULER2]["failed"]:
        failed = check[RULER2]["failed"]
        raise FreshTaskError(f"the oracle fails {len(failed)} fresh task(s) under ruler 2 (e.g. {failed[0]}): a defect "
                             "of the tasks or the ruler; fix it and rerun the study (docs/preregistration-2.md)")
    flags = {run: repeat_flags(runs_dir / run) for data in configs.values() for run in data.runs}
    inputs.update({f"{run}/{EPISODES}": sha256_file(runs_dir / run / EPISODES) for run in flags})
    configs = {name: with_no_repeats(data, flags) for name, data in configs.items()}
    families = {outcome: {"role": role, "label": label,
                          **contrast_family(configs, cfg, STUDY2_CONTRASTS, outcome)}
                for outcome, (role, label) in FAMILIES.items()}
    return {"splits": list(cfg.primary_splits), "alpha": cfg.alpha, "n_resamples": cfg.n_resamples,
            "configs": {n: list(d.runs) for n, d in configs.items()}, "families": families,
            "success": success_rows(configs, cfg), "families_of_tasks": family_rows(configs, cfg, RULER2),
            "oracle": check, "inputs": inputs,
            "note": (f"Contrasts pooled over {', '.join(cfg.primary_splits)}: a - b in percentage points with an "
                     f"unadjusted {100 * (1 - cfg.alpha):.0f}% task-bootstrap CI ({cfg.n_resamples} resamples) and "
                     "an exact two-sided sign-flip p (McNemar's exact test with one seed per side); p_holm: Holm "
                     "within each family of 3 (a contrast not computed counts as p = 1). The tests treat the "
                     "trained adapters as fixed: they cover task sampling, not training-seed variance.")}
