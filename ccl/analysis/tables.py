"""The descriptive tables: success by split, the write-up's definition against strict success,
diagnostics, strata, the catalogue ablation, the post-hoc unseen-template view, pass^k and efficiency.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..stats import pass_hat_k
from ..vocabulary import DIAGNOSTICS
from .intervals import Progress, _cell, _ci_method, _noop, _pct, _success_cell, interval, pooled
from .runs import CATALOG_SPLIT, PASS_K_MAX, POOLED, RATE_DIAGNOSTICS, AnalyzeConfig, ConfigData, cell_seed


def success_by_split(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig, progress: Progress = _noop) -> dict:
    """Table 1: success % [95% CI] per main split and pooled over them (``all``), with n tasks."""
    columns = ["config", "seeds", "ci", *cfg.main_splits, POOLED]
    rows = []
    for name, data in configs.items():
        row: dict[str, Any] = {"config": name, "seeds": data.seeds, "ci": _ci_method(data)}
        for split in cfg.main_splits:
            row[split] = _success_cell(data, split, data.splits.get(split), cfg)
        row[POOLED] = _success_cell(data, POOLED, pooled(data, cfg.main_splits), cfg)
        rows.append(row)
        progress(1)
    return {"columns": columns, "rows": rows,
            "note": ("Strict success (the primary outcome; the write-up's definition is in the leniency table) in "
                     "percent: mean and 95% percentile CI, n = tasks. 'all' pools the main splits "
                     "present. ci=hierarchical: seeds resampled, then tasks (with a single seed this equals the task "
                     "bootstrap); ci=task: task bootstrap only, which excludes training-seed variance and so "
                     "understates uncertainty.")}


def leniency(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig, progress: Progress = _noop) -> dict:
    """Both success definitions per configuration and split (and pooled), and the gap between them.

    The gap (write-up minus strict, in points) is paired by task, with its own task-bootstrap
    interval: the share of episodes the write-up's definition counts as successes although
    the work was not done.
    """
    rows = []
    for name, data in configs.items():
        for split in (*cfg.main_splits, POOLED):
            mat = pooled(data, cfg.main_splits) if split == POOLED else data.splits.get(split)
            if mat is None:
                continue
            cells = {}
            for metric in ("success", "success_writeup"):
                ci, n = interval(mat.values[metric], cfg, cell_seed(cfg.seed, "leniency", metric, name, split))
                cells[metric] = _cell(ci, n)
            gap = mat.values["success_writeup"] - mat.values["success"]
            ci, n = interval(gap, cfg, cell_seed(cfg.seed, "leniency", "gap", name, split))
            rows.append({"config": name, "split": split, "strict": cells["success"],
                         "writeup": cells["success_writeup"], "gap": _cell(ci, n),
                         "episodes_gap": int(round(float(np.nansum(gap))))})
        progress(1)
    return {"columns": ["config", "split", "strict", "writeup", "gap", "episodes_gap"], "rows": rows,
            "note": ("Success in percent under the strict definition (the primary outcome) and under the "
                     "write-up's definition (section 2.3), mean and 95% CI; gap = write-up minus strict, in "
                     "points, with a paired interval; episodes_gap = episodes (summed over seeds) the write-up "
                     "counts as successes and the strict definition does not.")}


def diagnostics(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig, progress: Progress = _noop) -> dict:
    """Table 2: every diagnostic pooled over the main splits, mean [CI]; rates in %, counts raw."""
    rows = []
    for name, data in configs.items():
        mat = pooled(data, cfg.main_splits)
        row: dict[str, Any] = {"config": name, "seeds": data.seeds, "ci": _ci_method(data)}
        for metric in DIAGNOSTICS:
            if mat is None:
                row[metric] = None
                continue
            ci, n = interval(mat.values[metric], cfg, cell_seed(cfg.seed, "diagnostics", name, metric))
            row[metric] = _cell(ci, n, 100.0 if metric in RATE_DIAGNOSTICS else 1.0)
        rows.append(row)
        progress(1)
    return {"columns": ["config", "seeds", "ci", *DIAGNOSTICS], "rows": rows,
            "rates_percent": list(RATE_DIAGNOSTICS),
            "note": (f"Pooled over {', '.join(cfg.main_splits)}. Rates ({', '.join(RATE_DIAGNOSTICS)}) in percent; "
                     "counts and turns are raw means per episode. arg_correct and parallel_ok are means over "
                     "episodes where they are defined (n = tasks with a defined value); with nulls, the CI "
                     "resamples the ratio sum/count of defined cells.")}


def _stratum_label(key: str, value: Any) -> str:
    if key == "faults":
        return "yes" if value else "no"
    return "null" if value is None else str(value)


def _stratum_sort(value: Any) -> tuple:
    return (value is None, str(type(value)), value if value is not None else 0)


STRATUM_NOTES = {
    "family": "Task family.",
    "depth": "Gold workflow depth (longest chain of dependent gold calls).",
    "graph_seen": ("Whether the task's gold dependency graph (its signature) occurs in the training pool "
                   "(null: not tagged)."),
    "faults": ("Fault-injected yes/no only. Episode rows do not mark tasks whose expected status is 'failed' "
               "(not-found), so the write-up's 'fault-injected / not-found' stratum is reported here as "
               "fault-injected only."),
}


def by_stratum(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig, key: str) -> dict:
    """Tables 4: success % per value of task attribute ``key``, pooled main splits, seed-averaged; with n."""
    mats = {name: pooled(data, cfg.main_splits) for name, data in configs.items()}
    values = sorted({v for m in mats.values() if m is not None for v in m.strata[key]}, key=_stratum_sort)
    labels = [_stratum_label(key, v) for v in values]
    rows = []
    for name, mat in mats.items():
        if mat is None:
            continue
        per_task = mat.success.mean(axis=0)
        column = np.array(mat.strata[key], dtype=object)
        row: dict[str, Any] = {"config": name, "seeds": configs[name].seeds}
        for value, label in zip(values, labels):
            keep = np.array([v == value and type(v) is type(value) for v in column], dtype=bool)
            row[label] = {"mean": _pct(per_task[keep].mean()), "n": int(keep.sum())} if keep.any() else None
        rows.append(row)
    return {"columns": ["config", "seeds", *labels], "rows": rows,
            "note": (f"{STRATUM_NOTES.get(key, key)} Success in percent over the pooled main splits, each task "
                     "first averaged over seeds; n = tasks. Descriptive: no CI or test.")}


def catalogue_splits(configs: Mapping[str, ConfigData]) -> list[str]:
    """eval_catalog_<k> splits present in any config, by k."""
    found = {s for d in configs.values() for s in d.splits if CATALOG_SPLIT.match(s)}
    return sorted(found, key=lambda s: int(CATALOG_SPLIT.match(s)["k"]))


def catalogue_ablation(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig, progress: Progress = _noop) -> dict:
    """Table 5: success % [CI] on each eval_catalog_<k> split (k distractor tools)."""
    splits = catalogue_splits(configs)
    rows = []
    for name, data in configs.items():
        if any(s in data.splits for s in splits):
            rows.append({"config": name, "seeds": data.seeds, "ci": _ci_method(data),
                         **{s: _success_cell(data, s, data.splits.get(s), cfg) for s in splits}})
        progress(1)
    note = ("Success in percent [95% CI] on eval_catalog_<k>: the catalogue holds k distractor tools."
            if splits else "No eval_catalog_<k> split was evaluated (the profile's evaluate.splits omit them).")
    return {"columns": ["config", "seeds", "ci", *splits], "rows": rows,
            "k": {s: int(CATALOG_SPLIT.match(s)["k"]) for s in splits}, "note": note}


def post_hoc_unseen(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig, progress: Progress = _noop,
                    split: str = "eval_unseen") -> dict:
    """Table 6 (post hoc): ``split`` without the flagged templates, beside the pre-registered ``split``."""
    flagged = set(cfg.flagged_templates)
    excluded = f"{split}_excluding_flagged"
    rows = []
    for name, data in configs.items():
        if split in data.splits:
            mat = data.splits[split]
            keep = np.array([t not in flagged for t in mat.strata["template"]], dtype=bool)
            ci, n = interval(mat.select(keep).success, cfg, cell_seed(cfg.seed, "post_hoc", name, split)) \
                if keep.any() else (None, 0)
            rows.append({"config": name, "seeds": data.seeds, "ci": _ci_method(data),
                         split: _success_cell(data, split, mat, cfg), excluded: _cell(ci, n),
                         "n_excluded": int((~keep).sum())})
        progress(1)
    return {"columns": ["config", "seeds", "ci", split, excluded, "n_excluded"], "rows": rows,
            "post_hoc": True, "flagged_templates": list(cfg.flagged_templates),
            "note": (f"POST HOC: {split} excluding template(s) {', '.join(cfg.flagged_templates) or '(none)'}, "
                     f"chosen after results were seen. Report it alongside, never instead of, the pre-registered "
                     f"{split} (the column of the same name, identical to success_by_split).")}


def pass_k(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> dict:
    """Table 7: pass^k (k = 1..min(4, trials)) per split and pooled main splits, from repeated trials."""
    rows = []
    for name, data in configs.items():
        if not data.trial_runs:
            continue
        groups = [(s, data.trials[s]) for s in sorted(data.trials)]
        main = [data.trials[s] for s in cfg.main_splits if s in data.trials]
        if main:
            groups.append((POOLED, np.concatenate(main, axis=2)))
        for split, arr in groups:  # arr: (runs, trials, tasks)
            n_trials = arr.shape[1]
            row: dict[str, Any] = {"config": name, "runs": len(data.trial_runs), "trials": n_trials,
                                   "split": split, "n": int(arr.shape[2])}
            for k in range(1, PASS_K_MAX + 1):
                row[f"pass^{k}"] = (_pct(np.mean([pass_hat_k(run, k) for run in arr]))
                                    if k <= n_trials else None)
            rows.append(row)
    note = ("pass^k in percent: the unbiased estimate of the probability that k independent sampled trials of a "
            "task all succeed (tau-bench), averaged over tasks, then over the config's runs with trials; k up to "
            f"min({PASS_K_MAX}, trials). 'all' pools the main splits.")
    if not rows:
        note = "No repeated sampled trials are available (no results/runs/<name>/trials.jsonl.gz); pass^k not computed."
    return {"columns": ["config", "runs", "trials", "split", "n", *(f"pass^{k}" for k in range(1, PASS_K_MAX + 1))],
            "rows": rows, "note": note}


EFFICIENCY_FIELDS = ("peak_mem_gb", "wall_s", "episodes", "mean_turns", "gen_tok_per_s", "mean_latency_s")


def _mean_field(effs: Sequence[dict], key: str) -> float | None:
    vals = [float(e[key]) for e in effs if e.get(key) is not None]
    return round(sum(vals) / len(vals), 4) if vals else None


def efficiency(configs: Mapping[str, ConfigData]) -> dict:
    """Table 8: metrics.json efficiency per config (means over the runs of a trained config)."""
    rows = []
    for name, data in configs.items():
        effs = [e for e in data.efficiency.values() if e is not None]
        row: dict[str, Any] = {"config": name, "runs": len(effs)}
        row.update({key: _mean_field(effs, key) for key in EFFICIENCY_FIELDS})
        row["model"] = sorted({str(e.get("model")) for e in effs}) if effs else None
        row["backend"] = sorted({str(e.get("backend")) for e in effs}) if effs else None
        rows.append(row)
    return {"columns": ["config", "runs", *EFFICIENCY_FIELDS, "model", "backend"], "rows": rows,
            "note": ("From each run's metrics.json; for configs with several runs, the mean over runs that have "
                     "the value (runs = runs with a metrics.json). Not like-for-like: batch sizes, backends and "
                     "machines can differ between configurations, and a resumed evaluation times only the "
                     "episodes it ran.")}


def efficiency_by_run(configs: Mapping[str, ConfigData]) -> dict:
    """Table 8b: the same fields for every run, as the write-up lists them."""
    rows = []
    for name, data in configs.items():
        for run in data.runs:
            eff = data.efficiency.get(run)
            rows.append({"run": run, "config": name,
                         **{k: (eff.get(k) if eff else None) for k in (*EFFICIENCY_FIELDS, "model", "backend")}})
    return {"columns": ["run", "config", *EFFICIENCY_FIELDS, "model", "backend"], "rows": rows,
            "note": "Per evaluation run, from metrics.json (null: no metrics.json or value not recorded)."}
