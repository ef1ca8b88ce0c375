"""Analysis: turn evaluation episodes into the write-up's tables (stage ``analyze``).

Everything here is a pure function of its inputs and ``AnalyzeConfig``: rows are
grouped into one ``ConfigData`` per configuration holding, per split, a ``Matrix``
of (seeds, tasks) outcomes with task ids as column labels; one builder per table
turns those into a JSON-ready dict with ``columns``, ``rows`` and usually a
``note``. Only ``read_run`` touches the file system.

Run names: ``<config>_s<k>`` is seed k of a trained configuration (B, C, Dmix, ...);
any other name is a single-run configuration (A_base, A_fewshot, teacher, oracle).
Every random number comes from a seed derived from the base seed and the cell's
names (``cell_seed``), so a cell's value does not depend on which other
configurations are present.
"""
from __future__ import annotations

import math
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .audit import AUDIT_METRICS, AUDIT_REASONS, AUDITED, audit_values
from .errors import StageError
from .inputs import read_record, read_rows
from .jsonio import sha256_file
from .stats import (Interval, hierarchical_bootstrap, holm, paired_difference, pass_hat_k, sign_flip_lattice,
                    task_bootstrap)
from .stats._common import SEED_STREAM, TASK_STREAM, chunks, stream
from .vocabulary import (COMPARISONS, CONFIG_ORDER, DIAGNOSTICS, MAIN_SPLITS, OUTCOMES, PRIMARY_CONTRASTS, Contrast,
                         parse_run_name)

METRICS = OUTCOMES + DIAGNOSTICS
# Diagnostics that are per-episode rates (reported in percent); the rest are counts or turns (raw means).
RATE_DIAGNOSTICS = ("tool_selection", "arg_correct", "dependency_safe", "strict_schema", "parallel_ok")
STRATA = ("template", "family", "depth", "graph_seen", "faults")
VERDICTS = "verdicts.jsonl.gz"  # the judge stage's per-episode verdicts of a run
POOLED = "all"
PASS_K_MAX = 4
CATALOG_SPLIT = re.compile(r"^eval_catalog_(?P<k>\d+)$")


class AlignmentError(StageError, ValueError):
    """Runs or configurations that should share a task set do not; the message names them."""


@dataclass(frozen=True)
class AnalyzeConfig:
    """Settings of the analysis; defaults are the paper profile's (the write-up's)."""

    n_resamples: int = 4000  # bootstrap resamples per CI
    n_flips: int = 5000  # sign flips per paired test
    alpha: float = 0.05  # 1 - CI level, and the Holm threshold for "significant"
    seed: int = 0  # base seed; each cell derives its own from it (cell_seed)
    flagged_templates: tuple[str, ...] = ("un_timezone",)  # excluded in the post-hoc eval_unseen table
    main_splits: tuple[str, ...] = MAIN_SPLITS
    # docs/preregistration.md: the splits the primary contrasts pool (training templates: new tasks,
    # and the same templates with every name from the held-out vocabulary)
    primary_splits: tuple[str, ...] = ("eval_id", "eval_renamed")

    def __post_init__(self) -> None:
        # params.yaml gives lists; keep the dataclass hashable and its values canonical.
        object.__setattr__(self, "flagged_templates", tuple(self.flagged_templates))
        object.__setattr__(self, "main_splits", tuple(self.main_splits))
        object.__setattr__(self, "primary_splits", tuple(self.primary_splits))
        if not self.primary_splits:
            raise ValueError("primary_splits must name at least one split")
        for name in ("n_resamples", "n_flips"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative int, got {self.seed!r}")
        if not 0.0 < self.alpha < 1.0:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha!r}")
        if not self.main_splits:
            raise ValueError("main_splits must name at least one split")


@dataclass(frozen=True)
class Matrix:
    """One configuration on one set of tasks.

    task_ids: (tasks,) column labels, sorted within a split. values[m] for m in
    ``METRICS`` (and ``AUDIT_METRICS`` when every row was judged with the post-hoc audit):
    (seeds, tasks) float64, NaN where the verdict held null (e.g. arg_correct). strata[s]
    for s in ``STRATA``: (tasks,) per-task attributes.
    """

    task_ids: tuple[str, ...]
    values: Mapping[str, np.ndarray]
    strata: Mapping[str, tuple]

    @property
    def success(self) -> np.ndarray:
        """(seeds, tasks) 0/1 success."""
        return self.values["success"]

    @property
    def n_tasks(self) -> int:
        return len(self.task_ids)

    def select(self, keep: np.ndarray) -> Matrix:
        """The columns where ``keep`` ((tasks,) bool) is true."""
        idx = np.flatnonzero(keep)
        return Matrix(tuple(self.task_ids[i] for i in idx), {m: v[:, idx] for m, v in self.values.items()},
                      {s: tuple(v[i] for i in idx) for s, v in self.strata.items()})


@dataclass(frozen=True)
class ConfigData:
    """Every run of one configuration, aligned.

    runs: run names in row order (by seed). splits: split -> Matrix with one row per run.
    trial_runs / trials: the runs that have repeated trials, and split -> (runs, trials, tasks)
    0/1 array with task ids ``trial_ids[split]``. efficiency: run -> metrics.json's
    ``efficiency`` dict plus model/backend/adapter (None if the run had no metrics.json).
    """

    name: str
    runs: tuple[str, ...]
    trained: bool
    splits: Mapping[str, Matrix]
    trial_runs: tuple[str, ...] = ()
    trials: Mapping[str, np.ndarray] = field(default_factory=dict)
    trial_ids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    efficiency: Mapping[str, dict | None] = field(default_factory=dict)

    @property
    def seeds(self) -> int:
        return len(self.runs)


@dataclass(frozen=True)
class RunInput:
    """What one run directory holds: episode rows, optional trial rows, optional metrics.json."""

    rows: list[dict]
    trials: list[dict] | None = None
    metrics: dict | None = None


# ---------------------------------------------------------------- seeds and numbers

def cell_seed(base: int, *names: str) -> int:
    """A seed for one table cell: the base seed and the CRC-32 of the cell's names.

    Injective in ``base`` for fixed names, and independent of which other cells exist.
    """
    return (int(base) << 32) | zlib.crc32("\x1f".join(names).encode("utf-8"))


def _pct(x: float) -> float:
    return round(float(x) * 100.0, 4)


def _cell(ci: Interval | None, n: int, scale: float = 100.0) -> dict | None:
    """A JSON cell {mean, low, high, n}; ``scale`` 100 for percentages, 1 for raw means."""
    if ci is None:
        return None
    return {"mean": round(ci.mean * scale, 4), "low": round(ci.low * scale, 4),
            "high": round(ci.high * scale, 4), "n": int(n)}


# ---------------------------------------------------------------- loading

def group_runs(names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """config -> its run names ordered by seed. Raises if a config has both seeded and unseeded runs."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for name in names:
        config, seed = parse_run_name(name)
        groups.setdefault(config, []).append((-1 if seed is None else seed, name))
    out = {}
    for config, members in groups.items():
        if len(members) > 1 and any(seed < 0 for seed, _ in members):
            raise AlignmentError(f"configuration {config}: runs {sorted(n for _, n in members)} mix an unseeded "
                                 f"run with seeded ones (<config>_s<k>); keep one naming scheme")
        out[config] = tuple(name for _, name in sorted(members))
    return out


def config_order(configs: Iterable[str]) -> list[str]:
    """The write-up's order for known configurations, then any others alphabetically."""
    present = set(configs)
    return [c for c in CONFIG_ORDER if c in present] + sorted(present - set(CONFIG_ORDER))


def slim_row(row: dict) -> dict:
    """The fields the analysis uses (drops the transcript)."""
    out = {k: row.get(k) for k in ("task_id", "dataset", *STRATA)}
    out["verdict"] = {m: row["verdict"].get(m) for m in METRICS}
    if "audit" in row:
        out["audit"] = row["audit"]
    if "trial" in row:
        out["trial"] = row["trial"]
    return out


def read_run(run_dir: Path) -> tuple[RunInput, dict[str, str]]:
    """Read one run directory; returns its inputs and {file name: SHA-256} of the files read."""
    hashes = {}
    episodes = run_dir / VERDICTS
    rows = [slim_row(r) for r in read_rows(episodes, "judge")]
    hashes[episodes.name] = sha256_file(episodes)
    trials = None
    if (path := run_dir / "trials.jsonl.gz").exists():
        trials = [slim_row(r) for r in read_rows(path, "judge")]
        hashes[path.name] = sha256_file(path)
    metrics = None
    if (path := run_dir / "metrics.json").exists():
        metrics = read_record(path, "judge")
        hashes[path.name] = sha256_file(path)
    return RunInput(rows, trials, metrics), hashes


def _index(rows: Sequence[dict], run: str, what: str) -> dict[str, dict[str, dict]]:
    """split -> task_id -> row; raises on a duplicate (split, task_id)."""
    out: dict[str, dict[str, dict]] = {}
    for row in rows:
        by_task = out.setdefault(row["dataset"], {})
        if row["task_id"] in by_task:
            raise AlignmentError(f"run {run}: task {row['task_id']} appears twice in split {row['dataset']} "
                                 f"of its {what}")
        by_task[row["task_id"]] = row
    return out


def _check_same_tasks(config: str, split: str, ids_by_run: Mapping[str, set[str] | None]) -> tuple[str, ...]:
    """The shared sorted task ids of ``split`` over runs; raises naming the runs and split if they differ."""
    runs = list(ids_by_run)
    first = ids_by_run[runs[0]]
    for run in runs[1:]:
        ids = ids_by_run[run]
        if ids != first:
            if first is None or ids is None:
                has, lacks = (runs[0], run) if ids is None else (run, runs[0])
                raise AlignmentError(f"configuration {config}: run {has} has split {split} but run {lacks} "
                                     f"does not; every run of a configuration needs the same task set per split")
            only_a, only_b = sorted(first - ids), sorted(ids - first)
            raise AlignmentError(f"configuration {config}: runs {runs[0]} and {run} differ on split {split}: "
                                 f"{len(only_a)} task(s) only in {runs[0]} (e.g. {only_a[:3]}), "
                                 f"{len(only_b)} only in {run} (e.g. {only_b[:3]})")
    return tuple(sorted(first or ()))


def _value(v: Any) -> float:
    return np.nan if v is None else float(v)


def _split_matrix(config: str, split: str, indexed: Mapping[str, Mapping[str, dict]],
                  ids: tuple[str, ...]) -> Matrix:
    runs = list(indexed)
    values = {m: np.array([[_value(indexed[r][t]["verdict"].get(m)) for t in ids] for r in runs])
              for m in METRICS}
    audits = [[audit_values(indexed[r][t]) for t in ids] for r in runs]
    values |= {m: np.array([[_value(a[m]) for a in per_run] for per_run in audits]) for m in AUDIT_METRICS}
    if np.isnan(values["success"]).any():
        raise ValueError(f"configuration {config}, split {split}: an episode has no success verdict")
    if np.isnan(values[AUDITED]).any():  # judged before the audit existed: no audited outcome
        for m in AUDIT_METRICS:
            del values[m]
    strata = {s: tuple(indexed[runs[0]][t].get(s) for t in ids) for s in STRATA}
    for run in runs[1:]:
        for s in STRATA:
            if tuple(indexed[run][t].get(s) for t in ids) != strata[s]:
                raise AlignmentError(f"configuration {config}: runs {runs[0]} and {run} disagree on the task "
                                     f"attribute {s!r} in split {split} (different task files?)")
    return Matrix(ids, values, strata)


def _trial_array(run: str, split: str, by_task: Mapping[str, list[dict]], ids: tuple[str, ...]) -> np.ndarray:
    """(trials, tasks) 0/1 for one run and split; every task must have the same trial indices."""
    trial_sets = {t: sorted(int(r["trial"]) for r in by_task[t]) for t in ids}
    expected = trial_sets[ids[0]]
    for t, trials in trial_sets.items():
        if trials != expected or len(set(trials)) != len(trials):
            raise AlignmentError(f"run {run}, split {split}: task {t} has trials {trials} but task {ids[0]} has "
                                 f"{expected}; every task needs the same distinct trial indices")
    order = {k: i for i, k in enumerate(expected)}
    out = np.zeros((len(expected), len(ids)))
    for j, t in enumerate(ids):
        for r in by_task[t]:
            out[order[int(r["trial"])], j] = float(bool(r["verdict"]["success"]))
    return out


def _trials(config: str, runs: Mapping[str, RunInput]) -> tuple[tuple[str, ...], dict, dict]:
    """(runs with trials, split -> (runs, trials, tasks) array, split -> task ids)."""
    with_trials = [r for r, inp in runs.items() if inp.trials]
    if not with_trials:
        return (), {}, {}
    grouped: dict[str, dict[str, dict[str, list[dict]]]] = {}
    for run in with_trials:
        for row in runs[run].trials:
            if isinstance(row.get("trial"), bool) or not isinstance(row.get("trial"), int):
                raise ValueError(f"run {run}: a trials.jsonl.gz row for task {row.get('task_id')} lacks an "
                                 f"integer 'trial' field")
            grouped.setdefault(run, {}).setdefault(row["dataset"], {}).setdefault(row["task_id"], []).append(row)
    splits = sorted({s for g in grouped.values() for s in g})
    arrays, id_map = {}, {}
    for split in splits:
        ids = _check_same_tasks(config, f"{split} (trials)",
                                {r: set(grouped[r][split]) if split in grouped[r] else None for r in with_trials})
        per_run = [_trial_array(r, split, grouped[r][split], ids) for r in with_trials]
        if len({a.shape[0] for a in per_run}) > 1:
            raise AlignmentError(f"configuration {config}, split {split}: runs {with_trials} have different "
                                 f"numbers of trials {[a.shape[0] for a in per_run]}")
        arrays[split], id_map[split] = np.stack(per_run), ids
    return tuple(with_trials), arrays, id_map


def _efficiency(inp: RunInput) -> dict | None:
    if inp.metrics is None:
        return None
    return {**(inp.metrics.get("efficiency") or {}),
            **{k: inp.metrics.get(k) for k in ("model", "backend", "adapter")}}


def build_config(config: str, runs: Mapping[str, RunInput]) -> ConfigData:
    """Align the runs of one configuration (``runs`` ordered by seed) into a ``ConfigData``."""
    indexed = {run: _index(inp.rows, run, "episodes") for run, inp in runs.items()}
    splits = sorted({s for idx in indexed.values() for s in idx})
    matrices = {}
    for split in splits:
        ids = _check_same_tasks(config, split, {r: set(idx[split]) if split in idx else None
                                                for r, idx in indexed.items()})
        matrices[split] = _split_matrix(config, split, {r: idx[split] for r, idx in indexed.items()}, ids)
    trial_runs, trials, trial_ids = _trials(config, runs)
    trained = any(parse_run_name(r)[1] is not None for r in runs)
    return ConfigData(config, tuple(runs), trained, matrices, trial_runs, trials, trial_ids,
                      {run: _efficiency(inp) for run, inp in runs.items()})


def build_configs(runs: Mapping[str, RunInput]) -> dict[str, ConfigData]:
    """run name -> inputs, to config -> ConfigData in ``config_order``."""
    groups = group_runs(runs)
    return {c: build_config(c, {r: runs[r] for r in groups[c]}) for c in config_order(groups)}


def load_runs(runs_dir: Path) -> tuple[dict[str, RunInput], dict[str, str]]:
    """Every judged run ``<runs_dir>/<name>/verdicts.jsonl.gz``: run -> inputs, and {relative path: SHA-256}."""
    runs, inputs = {}, {}
    if not runs_dir.is_dir():
        return runs, inputs
    for run_dir in sorted(p for p in runs_dir.iterdir() if (p / VERDICTS).is_file()):
        runs[run_dir.name], hashes = read_run(run_dir)
        inputs.update({f"{run_dir.name}/{name}": h for name, h in hashes.items()})
    return runs, inputs


# ---------------------------------------------------------------- intervals

def _ratio_bootstrap(values: np.ndarray, n_resamples: int, alpha: float, seed: int) -> Interval:
    """Percentile CI of the mean over non-null cells of ``values`` (seeds, tasks), NaN = null.

    The same two-level scheme and random streams as ``ccl.stats.hierarchical_bootstrap``
    (seeds drawn with replacement, then tasks, the task draws shared by the drawn seeds),
    but each resample's statistic is sum(non-null drawn values) / count(non-null drawn
    cells). Without nulls it equals ``hierarchical_bootstrap`` up to rounding. Resamples
    that draw only null cells are dropped from the quantiles.
    """
    mask = ~np.isnan(values)
    num, den = np.where(mask, values, 0.0), mask.astype(np.float64)
    n_seeds, n_tasks = values.shape
    seed_rng, task_rng = stream(seed, SEED_STREAM), stream(seed, TASK_STREAM)
    out = np.empty(n_resamples)
    start = 0
    for size in chunks(n_resamples):
        rows = seed_rng.integers(0, n_seeds, size=(size, n_seeds))
        cols = task_rng.integers(0, n_tasks, size=(size, n_tasks))
        flat = cols + n_tasks * np.arange(size)[:, None]
        top = num[rows].sum(axis=1).ravel()[flat].sum(axis=1)
        bottom = den[rows].sum(axis=1).ravel()[flat].sum(axis=1)
        out[start:start + size] = np.divide(top, bottom, out=np.full(size, np.nan), where=bottom > 0)
        start += size
    low, high = np.nanquantile(out, [alpha / 2, 1 - alpha / 2])
    return Interval(float(num.sum() / den.sum()), float(low), float(high))


def interval(values: np.ndarray, cfg: AnalyzeConfig, seed: int) -> tuple[Interval | None, int]:
    """CI of the mean of ``values`` (seeds, tasks), NaN = null, and the number of tasks it covers.

    Several rows: hierarchical bootstrap (seeds, then tasks); one row: task bootstrap.
    Tasks null in every row are left out; other nulls use ``_ratio_bootstrap``
    (mean over non-null cells). Returns (None, 0) if nothing is left.
    """
    keep = ~np.isnan(values).all(axis=0)
    values = values[:, keep]
    if values.shape[1] == 0:
        return None, 0
    if np.isnan(values).any():
        ci = _ratio_bootstrap(values, cfg.n_resamples, cfg.alpha, seed)
    elif values.shape[0] > 1:
        ci = hierarchical_bootstrap(values, cfg.n_resamples, cfg.alpha, seed)
    else:
        ci = task_bootstrap(values, cfg.n_resamples, cfg.alpha, seed)
    return ci, int(values.shape[1])


def _ci_method(data: ConfigData) -> str:
    """How a config's CIs are computed: trained configs (runs named _s<k>) hierarchically."""
    return "hierarchical" if data.trained else "task"


# ---------------------------------------------------------------- pooling

def pooled(data: ConfigData, splits: Sequence[str]) -> Matrix | None:
    """The columns of ``splits`` (those the config has) side by side; task ids become ``split/task_id``."""
    mats = [(s, data.splits[s]) for s in splits if s in data.splits]
    if not mats:
        return None
    ids = tuple(f"{s}/{t}" for s, m in mats for t in m.task_ids)
    keys = [k for k in mats[0][1].values if all(k in m.values for _, m in mats)]
    values = {k: np.concatenate([m.values[k] for _, m in mats], axis=1) for k in keys}
    strata = {k: tuple(v for _, m in mats for v in m.strata[k]) for k in STRATA}
    return Matrix(ids, values, strata)


def _success_cell(data: ConfigData, split: str, mat: Matrix | None, cfg: AnalyzeConfig) -> dict | None:
    """Success % [CI] of one split (or pooled); the seed depends only on config and split."""
    if mat is None:
        return None
    ci, n = interval(mat.success, cfg, cell_seed(cfg.seed, "success", data.name, split))
    return _cell(ci, n)


# ---------------------------------------------------------------- tables

Progress = Callable[[int], None]


def _noop(n: int) -> None:
    pass


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


def paired_plan(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> list[tuple[str, str, str]]:
    """(a, b, split) for every write-up comparison whose two configs have that main split."""
    return [(a, b, split) for a, b in COMPARISONS if a in configs and b in configs
            for split in cfg.main_splits if split in configs[a].splits and split in configs[b].splits]


def aligned(a: ConfigData, b: ConfigData, split: str) -> tuple[np.ndarray, np.ndarray]:
    """The two success matrices on ``split`` with columns in the same task order; raises if the sets differ."""
    return aligned_outcome(a, b, split, "success")


def aligned_outcome(a: ConfigData, b: ConfigData, split: str, outcome: str) -> tuple[np.ndarray, np.ndarray]:
    """``outcome`` (one of ``OUTCOMES``) of a and b on ``split``, b's columns in a's task order."""
    ma, mb = a.splits[split], b.splits[split]
    if ma.task_ids != mb.task_ids:
        sa, sb = set(ma.task_ids), set(mb.task_ids)
        if sa != sb:
            only_a, only_b = sorted(sa - sb), sorted(sb - sa)
            raise AlignmentError(f"{a.name} and {b.name} were evaluated on different tasks in split {split}: "
                                 f"{len(only_a)} only in {a.name} (e.g. {only_a[:3]}), {len(only_b)} only in "
                                 f"{b.name} (e.g. {only_b[:3]}); re-run evaluate with the same profile")
        order = {t: i for i, t in enumerate(mb.task_ids)}
        return ma.values[outcome], mb.values[outcome][:, [order[t] for t in ma.task_ids]]
    return ma.values[outcome], mb.values[outcome]


def paired(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig, progress: Progress = _noop) -> dict:
    """Table 3: paired a - b success differences (pp) on each main split, sign-flip p, Holm over the table."""
    rows, raw_p = [], []
    for a, b, split in paired_plan(configs, cfg):
        xa, xb = aligned(configs[a], configs[b], split)
        name = f"{a}_vs_{b}"
        res = paired_difference(xa, xb, n_resamples=cfg.n_resamples, n_flips=cfg.n_flips, alpha=cfg.alpha,
                                seed=cell_seed(cfg.seed, "paired", name, split))
        rows.append({"comparison": name, "a": a, "b": b, "split": split, "diff": _pct(res.diff),
                     "low": _pct(res.low), "high": _pct(res.high), "p": round(res.p, 6), "n": res.n_tasks,
                     "n_nonzero": res.n_nonzero, "seeds_a": configs[a].seeds, "seeds_b": configs[b].seeds})
        raw_p.append(res.p)
        progress(1)
    adjusted = holm(raw_p) if rows else np.zeros(0)
    for row, p_holm in zip(rows, adjusted):
        row["p_holm"] = round(float(p_holm), 6)
        row["significant"] = bool(p_holm <= cfg.alpha)
    return {"columns": ["comparison", "split", "diff", "low", "high", "p", "p_holm", "significant", "n",
                        "n_nonzero", "a", "b", "seeds_a", "seeds_b"],
            "rows": rows, "n_tests": len(rows),
            "note": (f"a - b in percentage points; per-task outcomes averaged over each config's seeds, then a "
                     f"task-bootstrap CI ({cfg.n_resamples} resamples) and a two-sided sign-flip p "
                     f"({cfg.n_flips} flips; smallest attainable p = {1 / (1 + cfg.n_flips):.6f}). p_holm: "
                     f"Holm over all {len(rows)} tests in this table. These CIs exclude training-seed variance.")}


def aligned_pooled(a: ConfigData, b: ConfigData, splits: Sequence[str], outcome: str = "success"
                   ) -> tuple[np.ndarray, np.ndarray]:
    """``outcome`` of a and b over ``splits`` side by side, the same tasks in the same order."""
    pairs = [aligned_outcome(a, b, s, outcome) for s in splits]
    return np.concatenate([x for x, _ in pairs], axis=1), np.concatenate([y for _, y in pairs], axis=1)


def _component(xa: np.ndarray, xb: np.ndarray, cfg: AnalyzeConfig, seed: int) -> dict:
    """One paired comparison a - b of (seeds, tasks) outcomes: estimate, CI, exact p and win counts.

    The p-value is the exact sign-flip test on the seed-averaged differences, which lie on the
    lattice 1 / lcm(seeds_a, seeds_b) (with one seed each it is McNemar's exact test).
    """
    d = xa.mean(axis=0) - xb.mean(axis=0)
    ci = task_bootstrap(d, n_resamples=cfg.n_resamples, alpha=cfg.alpha, seed=seed)
    p = sign_flip_lattice(d, math.lcm(xa.shape[0], xb.shape[0]))
    return {"b_success": _pct(float(xb.mean())), "diff": _pct(ci.mean), "low": _pct(ci.low), "high": _pct(ci.high),
            "p": round(p, 6), "n": int(d.size), "n_nonzero": int(np.count_nonzero(d)),
            "a_wins": int((d > 0).sum()), "b_wins": int((d < 0).sum()),
            # per seed pair, the share of tasks b solves and a does not (the power analysis's q)
            "reverse_share": round(float((xb.mean(axis=0) * (1 - xa.mean(axis=0))).mean()), 6)}


def _contrast_row(contrast: Contrast, configs: Mapping[str, ConfigData], cfg: AnalyzeConfig,
                  outcome: str) -> dict | None:
    """One primary contrast: each component a - b, and the contrast's estimate, CI and p.

    One comparator: the paired test itself. Several: the intersection-union test that a differs
    from every comparator in the same direction; its p is the largest component p when all the
    component differences share a sign, else 1 (a better than one source and worse than the
    other is no evidence either way). Its estimate and CI are those of the component against the
    comparator with the higher pooled success (the better single source); every component is
    reported beside it.
    """
    names = (contrast.a, *contrast.comparators)
    if any(n not in configs or not all(s in configs[n].splits for s in cfg.primary_splits) for n in names):
        return None
    parts = []
    # the audit resamples with the strict family's seeds, so a contrast it leaves alone keeps its interval
    seed_name = "success" if outcome == AUDITED else outcome
    for b in contrast.comparators:
        xa, xb = aligned_pooled(configs[contrast.a], configs[b], cfg.primary_splits, outcome)
        part = _component(xa, xb, cfg, cell_seed(cfg.seed, "primary", seed_name, f"{contrast.a}_vs_{b}"))
        parts.append({"b": b, **part, "seeds_b": configs[b].seeds})
    best = max(parts, key=lambda r: (r["b_success"], -r["diff"]))  # the better comparator; ties: the harder one
    same_sign = all(r["diff"] > 0 for r in parts) or all(r["diff"] < 0 for r in parts)
    p = max(r["p"] for r in parts) if len(parts) == 1 or same_sign else 1.0
    return {"contrast": contrast.name, "a": contrast.a, "comparators": list(contrast.comparators),
            "test": ("exact paired sign-flip" if len(parts) == 1 else
                     "intersection-union: largest component p if every difference has the same sign, else 1"),
            "a_success": _pct(float(xa.mean())),  # a's outcomes over the primary splits (any comparator's order)
            "vs": best["b"], "diff": best["diff"], "low": best["low"], "high": best["high"],
            "p": p, "n": best["n"], "seeds_a": configs[contrast.a].seeds, "components": parts}


def primary(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> dict:
    """The pre-registered primary contrasts (docs/preregistration.md) on each success definition.

    Pooled over ``cfg.primary_splits``; per task, each configuration's outcome is averaged over
    its seeds. Holm over the contrasts of the strict family (the primary family) and, separately,
    over the same contrasts under the write-up's definition (a secondary family). A contrast that
    cannot be computed (a configuration was not evaluated) enters Holm with p = 1, so the
    correction is always over the whole pre-registered family.
    """
    families = {}
    for outcome in OUTCOMES + ((AUDITED,) if _audited(configs, cfg.primary_splits) else ()):
        rows = [r for c in PRIMARY_CONTRASTS if (r := _contrast_row(c, configs, cfg, outcome)) is not None]
        missing = len(PRIMARY_CONTRASTS) - len(rows)
        adjusted = holm([r["p"] for r in rows] + [1.0] * missing)
        for row, p_holm in zip(rows, adjusted):
            row["p_holm"] = round(float(p_holm), 6)
            row["significant"] = bool(p_holm <= cfg.alpha)
        families[outcome] = {"rows": rows, "family_size": len(PRIMARY_CONTRASTS), "complete": missing == 0,
                             "post_hoc": outcome == AUDITED}
    return {"splits": list(cfg.primary_splits), "alpha": cfg.alpha, **families,
            "note": (f"Pre-registered primary contrasts on strict success, pooled over {', '.join(cfg.primary_splits)}; "
                     f"a - b in percentage points of seed-averaged per-task outcomes, with an unadjusted "
                     f"{100 * (1 - cfg.alpha):.0f}% task-bootstrap CI ({cfg.n_resamples} resamples) and an exact "
                     f"two-sided sign-flip p (McNemar's test with one seed per side); p_holm: Holm over the "
                     f"{len(PRIMARY_CONTRASTS)} contrasts (one not computed counts as p = 1). The tests treat the "
                     "trained adapters as fixed: they cover task sampling, not training-seed variance. "
                     "'success_writeup' repeats them under the write-up's definition as a secondary family with its "
                     f"own Holm correction; '{AUDITED}', when present, under strict success less the post-hoc "
                     "transcript audit's flags (ccl/audit.py), a sensitivity analysis not in the pre-registration, "
                     "with its own Holm correction.")}


def _audited(configs: Mapping[str, ConfigData], splits: Sequence[str]) -> bool:
    """Every configuration's verdicts on ``splits`` carry the post-hoc audit."""
    return all(AUDITED in data.splits[s].values for data in configs.values() for s in splits if s in data.splits)


def audit(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> dict:
    """The post-hoc transcript audit (ccl/audit.py), pooled over the main splits: strict and audited
    success per configuration, and how many strict successes each audit reason flags."""
    rows = []
    if _audited(configs, cfg.main_splits):
        for name, data in configs.items():
            mat = pooled(data, cfg.main_splits)
            if mat is None:
                continue
            # both with the success table's pooled seed: strict repeats that table's cell, and a
            # configuration the audit leaves alone keeps the same interval
            seed = cell_seed(cfg.seed, "success", name, POOLED)
            cells = {m: _cell(*interval(mat.values[m], cfg, seed)) for m in ("success", AUDITED)}
            flagged = {r: int(np.nansum(mat.values[f"audit_{r}"])) for r in AUDIT_REASONS}
            rows.append({"config": name, "strict": cells["success"], "audited": cells[AUDITED],
                         "strict_episodes": int(np.nansum(mat.success)), **flagged,
                         "episodes": int(mat.success.size)})
    return {"columns": ["config", "strict", "audited", "strict_episodes", *AUDIT_REASONS, "episodes"], "rows": rows,
            "note": ("Post hoc, written after the pre-registered run's transcripts were read (ccl/audit.py): strict "
                     "success, pooled over the main splits, before and after removing the strict successes the "
                     "audit flags, mean and 95% CI; the reason columns count flagged strict successes (episodes "
                     "summed over seeds; one episode may carry several reasons). raw_result_answer: the answer is "
                     "a JSON object or array (a tool's raw result handed back); unnamed_currency: it names a "
                     "currency code the episode never mentioned; ignores_request: a no-tool request names "
                     "identifiers and the answer names none. Empty when the verdicts predate the audit.")}


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
        "audit": audit(configs, cfg),
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
