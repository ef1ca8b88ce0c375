"""Study 3's analysis (docs/preregistration-3.md): the primary family on ruler 3, the secondary family, the
sensitivity under ruler 2, the seeds' agreement, success per configuration and split, each arm's minutes and
the check that the oracle passes every fresh task.

The configurations, their runs and both families come from the design file (``ccl.analysis.declared``); the
outcomes from stage evaluate_fresh's episodes (rulers 1, 2 and 3 per task); the contrasts from the first
study's machinery (``contrasts.contrast_family``: the exact sign-flip test on seed-averaged differences, a
task-bootstrap interval, Holm).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from ..artifacts.inputs import read_record, read_rows, split_rows
from ..artifacts.jsonio import sha256_file
from ..stats import sign_flip_lattice
from ..vocabulary import C, C_DAGGER, C_DPO, C_GRPO_SPARSE, RULER1, RULER2, RULER3, Contrast, parse_run_name
from .contrasts import aligned_pooled, contrast_family
from .declared import StudyDesign
from .intervals import _cell, _pct, interval, pooled
from .runs import POOLED, STRATA, AlignmentError, AnalyzeConfig, ConfigData, Matrix, cell_seed
from .task_families import family_rows

EPISODES = "episodes.jsonl.gz"  # stage evaluate_fresh's file in each run's folder
ORACLE_RUN = "oracle"
# outcome key of a Matrix -> the ruler whose strict success it holds ("success" is ruler 1's, as in study 1)
OUTCOMES = {RULER3: RULER3, RULER2: RULER2, "success": RULER1}
FAMILIES = {  # key -> (outcome, which contrasts of the design, label; {n}: the family's size)
    "primary": (RULER3, "primary", "primary: ruler-3 strict success, Holm over the {n} contrasts, fixed in advance"),
    "secondary": (RULER3, "secondary", "secondary: ruler-3 strict success, Holm over the {n} contrasts, fixed in advance"),
    "sensitivity_ruler2": (RULER2, "primary", "sensitivity: the primary contrasts under ruler 2, Holm over the {n}"),
}
EQUAL_MINUTES = 0.25  # docs/preregistration-3.md: an arm off C_plus's minutes by more than this share is a deviation
COMPARATOR = "C_plus"


def read_episodes(run_dir: Path) -> list[dict]:
    """A run's evaluated tasks without their transcripts: split, task id and the three rulers' verdicts."""
    return [{"split": r["split"], "task_id": r["task_id"], **{k: bool(r[k]) for k in OUTCOMES.values()}}
            for r in read_rows(run_dir / EPISODES, "evaluate_fresh")]


def config_data(name: str, runs: Mapping[str, list[dict]], tasks: Mapping[str, Mapping[str, dict]],
                splits: tuple[str, ...]) -> ConfigData:
    """One configuration's runs (in seed order) as a ConfigData: per split, (seeds, tasks) outcomes under each
    ruler with the task ids sorted, and the tasks' strata; every run must hold the same tasks."""
    matrices = {}
    for split in splits:
        by_run = {run: {r["task_id"]: r for r in rows if r["split"] == split} for run, rows in runs.items()}
        ids = sorted(tasks[split])
        for run, got in by_run.items():
            if sorted(got) != ids:
                raise AlignmentError(f"{name}: run {run} did not play exactly the {len(ids)} evaluated tasks of {split} "
                                     f"({len(got)} played); rerun its evaluate_run stage")
        values = {key: np.array([[float(by_run[run][t][ruler]) for t in ids] for run in runs])
                  for key, ruler in OUTCOMES.items()}
        strata = {s: tuple(_stratum(tasks[split][t].get(s)) for t in ids) for s in STRATA}
        matrices[split] = Matrix(tuple(ids), values, strata)
    return ConfigData(name, tuple(runs), True, matrices)


def _stratum(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def oracle_check(rows: list[dict] | None, n_tasks: int) -> dict:
    """The oracle's failures on the fresh tasks under each ruler (ruler 3's must be empty for the tasks to be sound)."""
    if rows is None:
        return {"evaluated": False}
    return {"evaluated": True, "tasks": n_tasks,
            **{ruler: [r["task_id"] for r in rows if not r[ruler]] for ruler in OUTCOMES.values()}}


class FreshTaskError(ValueError):
    """The oracle fails a fresh task under ruler 3: a defect of the task or the ruler, not a result."""


def success_rows(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> list[dict]:
    """Per configuration, split and pooled: each ruler's strict success in percent with its 95% interval
    (hierarchical over seeds where a configuration has two)."""
    rows = []
    for name, data in configs.items():
        for split in (*cfg.primary_splits, POOLED):
            mat = pooled(data, cfg.primary_splits) if split == POOLED else data.splits[split]
            seed = cell_seed(cfg.seed, "study3", name, split)
            rows.append({"config": name, "split": split, "tasks": mat.n_tasks, "seeds": data.seeds,
                         **{OUTCOMES[k]: _cell(*interval(mat.values[k], cfg, seed)) for k in OUTCOMES}})
    return rows


def run_rows(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> list[dict]:
    """Per run: successes under each ruler, pooled and on each primary split (counts, no intervals)."""
    rows = []
    for name, data in configs.items():
        mat = pooled(data, cfg.primary_splits)
        for i, run in enumerate(data.runs):
            row = {"config": name, "run": run, "tasks": mat.n_tasks,
                   **{OUTCOMES[k]: int(mat.values[k][i].sum()) for k in OUTCOMES}}
            row["by_split"] = {s: int(data.splits[s].values[RULER3][i].sum()) for s in cfg.primary_splits}
            rows.append(row)
    return rows


def seed_matched(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig, contrasts: tuple[Contrast, ...]) -> list[dict]:
    """Each one-comparator contrast seed by seed (a's seed k against b's seed k, for every seed both sides have):
    the difference in points, the tasks each side wins and McNemar's exact p (descriptive; the seed-stability
    rule). Runs are paired by the seed in their names, never by their order."""
    rows = []
    for c in contrasts:
        a, b = c.a, c.comparators[0]
        if a not in configs or b not in configs or len(c.comparators) != 1:
            continue
        xa, xb = aligned_pooled(configs[a], configs[b], cfg.primary_splits, RULER3)
        seeds_a = {parse_run_name(run)[1]: i for i, run in enumerate(configs[a].runs)}
        seeds_b = {parse_run_name(run)[1]: i for i, run in enumerate(configs[b].runs)}
        for k in sorted(set(seeds_a) & set(seeds_b)):
            d = xa[seeds_a[k]] - xb[seeds_b[k]]
            rows.append({"contrast": c.name, "seed": k, "a_run": configs[a].runs[seeds_a[k]],
                         "b_run": configs[b].runs[seeds_b[k]], "diff": _pct(d.mean()), "a_wins": int((d > 0).sum()),
                         "b_wins": int((d < 0).sum()), "p": sign_flip_lattice(d, 1), "n": int(d.size)})
    return rows


def seed_stable(family: dict, matched: list[dict]) -> dict[str, bool | None]:
    """The seed-stability rule (docs/preregistration-3.md), per contrast of ``family`` that Holm rejects: whether
    every seed-matched difference has the pooled difference's sign. None for a contrast not rejected (the rule
    does not apply) or with fewer than two seed-matched rows."""
    out: dict[str, bool | None] = {}
    for row in family["rows"]:
        diffs = [m["diff"] for m in matched if m["contrast"] == row["contrast"]]
        if not row["significant"] or len(diffs) < 2:
            out[row["contrast"]] = None
        else:
            out[row["contrast"]] = all(d != 0 and math.copysign(1, d) == math.copysign(1, row["diff"]) for d in diffs)
    return out


def seed_disagreement(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> dict[str, dict]:
    """Per configuration with two seeds or more: the share of tasks on which its first two seeds disagree."""
    out = {}
    for name, data in configs.items():
        if data.seeds >= 2:
            x = pooled(data, cfg.primary_splits).values[RULER3]
            differ = x[0] != x[1]
            out[name] = {"tasks": int(x.shape[1]), "disagree": int(differ.sum()),
                         "share": round(float(differ.mean()), 6)}
    return out


# ---------------------------------------------------------------- minutes

@dataclass(frozen=True)
class Timings:
    """Where the rollouts' timings lie, relative to the root (the script names them): DAgger's folder of
    ``dagger_s<seed>_iter<k>.json`` and DPO's rollout's file (the pilot's stage's)."""

    dagger: Path
    dpo_rollout: Path


def _json(path: Path, inputs: dict[str, str], root: Path) -> dict:
    inputs[path.relative_to(root).as_posix()] = sha256_file(path)
    return read_record(path, "the arm's training stage")


def _log(path: Path, inputs: dict[str, str], root: Path) -> list[dict]:
    inputs[path.relative_to(root).as_posix()] = sha256_file(path)
    return read_rows(path, "the arm's training stage")


def run_minutes(config: str, run: str, adapter: Path, root: Path, timings: Timings, inputs: dict[str, str]) -> dict:
    """A run's training-side minutes after C (docs/preregistration-3.md): rollouts, expert labelling and
    optimizer steps; never model loading or validation readings. DAgger's iteration runs sit beside its last
    run (``C_dagger_i<k>_s<seed>``)."""
    seed = run.rsplit("_s", 1)[1]
    if config == COMPARATOR:
        return {"minutes": _json(root / adapter / "summary.json", inputs, root)["train_minutes"]}
    if config == C_DAGGER:
        parts = []
        iterations = sorted((root / adapter).parent.glob(f"{C_DAGGER}_i*_s{seed}"), key=_iteration)
        for k, folder in enumerate([*iterations, root / adapter], 1):
            rollout = _json(root / timings.dagger / f"dagger_s{seed}_iter{k}.json", inputs, root)["wall_s"]
            train = _json(folder / "summary.json", inputs, root)["train_minutes"]
            parts.append({"iteration": k, "rollout_minutes": round(rollout / 60, 4), "train_minutes": train})
        return {"minutes": round(sum(p["rollout_minutes"] + p["train_minutes"] for p in parts), 4), "iterations": parts}
    if config == C_GRPO_SPARSE:
        steps = _log(root / adapter / "train_log.jsonl", inputs, root)
        summary = _json(root / adapter / "summary.json", inputs, root)
        # sample_s includes reloading the updated weights into the OpenVINO sampler (ccl/policy/openvino_lora.py):
        # the pilot's count, kept; the summary's load seconds (the load at construction among them) bound that part
        return {"minutes": round(sum(e["sample_s"] + e["update_s"] for e in steps) / 60, 4), "steps": len(steps),
                "sampler_load_minutes": round(summary.get("sampler_load_seconds", 0.0) / 60, 4),
                "sampler_loads": summary.get("sampler_loads", 0)}
    if config == C_DPO:
        rollout = _json(root / timings.dpo_rollout, inputs, root)["wall_s"] / 60
        train = _json(root / adapter / "summary.json", inputs, root)["train_minutes"]
        return {"minutes": round(rollout + train, 4), "rollout_minutes": round(rollout, 4), "train_minutes": train}
    if config == C:
        return {"minutes": 0.0}  # the start: no extra minutes
    raise ValueError(f"no rule for the minutes of configuration {config!r} (run {run})")


def _iteration(folder: Path) -> int:
    """k of a DAgger iteration's run folder ``C_dagger_i<k>_s<seed>`` (so that i10 sorts after i2)."""
    return int(folder.name.split("_i", 1)[1].split("_", 1)[0])


def minutes(design: StudyDesign, root: Path, timings: Timings, inputs: dict[str, str]) -> dict:
    """Each run's minutes, each configuration's mean, and each arm's ratio to C_plus's (the equal-minutes rule)."""
    runs = {run: run_minutes(config, run, Path(adapter), root, timings, inputs)
            for config, members in design.configs.items() for run, adapter in members.items()}
    mean = {config: round(float(np.mean([runs[r]["minutes"] for r in members])), 4)
            for config, members in design.configs.items() if members}
    ref = mean.get(COMPARATOR)
    ratio = {config: (round(m / ref, 4) if ref else None) for config, m in mean.items() if config not in (C, COMPARATOR)}
    return {"runs": runs, "configs": mean, "ratio_to_comparator": ratio, "tolerance": EQUAL_MINUTES,
            "off_budget": sorted(c for c, r in ratio.items() if r is None or abs(r - 1) > EQUAL_MINUTES)}


# ---------------------------------------------------------------- the summary

def analyze(root: Path, design: StudyDesign, tasks_dir: Path, runs_dir: Path, timings: Timings, cfg: AnalyzeConfig) -> dict:
    """The study-3 summary. Stops when the oracle fails any fresh task under ruler 3 (docs/preregistration-3.md:
    the tasks are then unsound) or when a run of the design was not evaluated."""
    inputs: dict[str, str] = {}
    tasks = {s: {t["id"]: t for t in split_rows(tasks_dir, s, need_rows=True)} for s in cfg.primary_splits}
    played = {}
    for run in [*design.runs, ORACLE_RUN]:
        path = runs_dir / run / EPISODES
        if run == ORACLE_RUN and not path.is_file():
            continue
        played[run] = read_episodes(runs_dir / run)
        inputs[path.relative_to(root).as_posix()] = sha256_file(path)
    oracle_rows = played.pop(ORACLE_RUN, None)
    check = oracle_check(oracle_rows, len(oracle_rows or []))
    if check["evaluated"] and check[RULER3]:
        raise FreshTaskError(f"the oracle fails {len(check[RULER3])} fresh task(s) under ruler 3 (e.g. {check[RULER3][0]}): "
                             "a defect of the tasks or the ruler; fix it and rerun the study (docs/preregistration-3.md)")
    # a configuration whose every run was excluded is left out: its contrasts are not computed (Holm p = 1)
    configs = {name: config_data(name, {run: played[run] for run in members}, evaluated_tasks(tasks, played, members),
                                 cfg.primary_splits)
               for name, members in design.configs.items() if members}
    families = {}
    for key, (outcome, which, label) in FAMILIES.items():
        contrasts = design.primary if which == "primary" else design.secondary
        families[key] = {"label": label.format(n=len(contrasts)), "outcome": outcome,
                         **contrast_family(configs, cfg, contrasts, outcome)}
    matched = seed_matched(configs, cfg, design.primary)
    return {"splits": list(cfg.primary_splits), "alpha": cfg.alpha, "n_resamples": cfg.n_resamples,
            "configs": {n: list(d.runs) for n, d in configs.items()}, "families": families,
            "seed_matched": matched, "seed_stable": seed_stable(families["primary"], matched),
            "seed_disagreement": seed_disagreement(configs, cfg),
            "success": success_rows(configs, cfg), "runs": run_rows(configs, cfg),
            "families_of_tasks": family_rows(configs, cfg, RULER3), "minutes": minutes(design, root, timings, inputs),
            "oracle": check, "inputs": dict(sorted(inputs.items())),
            "note": (f"Contrasts pooled over {', '.join(cfg.primary_splits)}: a - b in percentage points of per-task "
                     f"outcomes averaged over each side's seeds, with an unadjusted {100 * (1 - cfg.alpha):.0f}% "
                     f"task-bootstrap CI ({cfg.n_resamples} resamples) and the exact two-sided sign-flip p on the "
                     "seed-averaged differences (McNemar's exact test with one seed a side); p_holm: Holm within each "
                     "family (a contrast not computed counts as p = 1). The tests treat the trained adapters as fixed: "
                     "they cover task sampling; seed variance enters through the averaging and the seed-matched rows.")}


def evaluated_tasks(tasks: Mapping[str, Mapping[str, dict]], played: Mapping[str, list[dict]],
                    members: Mapping[str, str]) -> dict[str, dict[str, dict]]:
    """The tasks of each split the configuration's first run played (evaluate.max_tasks_per_split may cap a
    split), with their records; ``config_data`` checks every run played exactly these."""
    first = played[next(iter(members))]
    out = {}
    for split, by_id in tasks.items():
        ids = {r["task_id"] for r in first if r["split"] == split}
        unknown = sorted(ids - set(by_id))
        if unknown:
            raise AlignmentError(f"run {next(iter(members))} played task(s) not in {split}'s file, e.g. {unknown[0]}")
        out[split] = {t: by_id[t] for t in ids}
    return out
