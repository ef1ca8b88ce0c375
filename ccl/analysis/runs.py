"""Judged runs into configurations: each configuration's runs read and aligned into one ``Matrix``
of (seeds, tasks) outcomes per split, with the task ids as column labels. Only ``read_run`` touches
the file system; a mismatch between a configuration's seeds is an ``AlignmentError``.
"""
from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..artifacts.inputs import read_record, read_rows
from ..artifacts.jsonio import sha256_file
from ..errors import StageError
from ..vocabulary import CONFIG_ORDER, DIAGNOSTICS, MAIN_SPLITS, OUTCOMES, RULER2, parse_run_name

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
    ``METRICS`` (ruler 1's, the pre-registered validator's) and ``RULER2`` (ruler 2's success, when
    every row carries ruler 2's verdict): (seeds, tasks) float64, NaN where the verdict held null (e.g. arg_correct). strata[s]
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
    if RULER2 in row:
        out[RULER2] = {"success": row[RULER2]["success"]}
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
    if np.isnan(values["success"]).any():
        raise ValueError(f"configuration {config}, split {split}: an episode has no success verdict")
    # ruler 2's success only when every episode has it (rows judged before ruler 2 existed lack it)
    if all(RULER2 in indexed[r][t] for r in runs for t in ids):
        values[RULER2] = np.array([[float(bool(indexed[r][t][RULER2]["success"])) for t in ids] for r in runs])
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
