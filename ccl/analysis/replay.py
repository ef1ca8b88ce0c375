"""Analysis of decision-point replay (stage ``analyze_replay``): rates with task-clustered
intervals, paired tests, the failure map and replay against episode success.

Inputs are the graded replay rows of every run (``results/replay/<run>/verdicts.jsonl.gz``,
stage replay_judge) and the episode verdicts of the same runs (``results/runs/<run>/
verdicts.jsonl.gz``, stage judge). Decisions are nested in tasks, so every interval and test
resamples or flips whole tasks (:mod:`ccl.stats.clustered`); a configuration with several
training seeds contributes, per task, its passes averaged over the seeds.

Rules fixed before any result was read (two were tightened after the three baseline
configurations' replay had been graded, before any trained configuration's: the permutation
test's sampling beyond 8 configurations and the requirement that rho be positive; neither
could change a verdict on three configurations):
- the replay family of paired tests is the write-up's comparisons (``vocabulary.COMPARISONS``)
  without the oracle's (it made the golden set: 100% replay by construction), on the main
  splits pooled, one test each, Holm over that family only;
- replay predicts episode success on a split when both hold: the configurations' ranks agree
  (Spearman rho > 0 with a two-sided permutation p <= alpha over pairings of the
  configurations; fewer than 5 configurations can never reach p <= 0.05, as the smallest p
  is 2/n!), and the task-clustered 95% interval of the Pearson correlation lies above zero.
  The first asks whether the ordering could be chance given so few configurations (the unit
  of a correlation across configurations); the second whether the measured rates are precise
  enough. The oracle is left out here too; each configuration's episode success is taken
  over the same runs as its replay;
- the failure map pools the main splits and every seed's rows; its worst cells are the three
  non-pass cells with the most decisions (ties: the larger share of the row, then the name).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import stats as sps

from ..artifacts.inputs import read_record, read_rows
from ..artifacts.jsonio import sha256_file
from ..records import DecisionKind, ReplayVerdict
from ..replay.metrics import summarise
from ..stats import cluster_correlation, cluster_paired_difference, cluster_rate, holm, spearman_permutation
from ..stats.rank import EXACT_MAX, N_PAIRINGS
from ..vocabulary import COMPARISONS, LEARNED, ORACLE
from .intervals import _cell, _pct
from .runs import POOLED, VERDICTS, AlignmentError, AnalyzeConfig, cell_seed, config_order, group_runs

FINAL = "(final answer)"  # the failure map's tool label of a decision whose gold action is the final answer
WORST = 3


@dataclass(frozen=True)
class SplitCounts:
    """One configuration's replay on one split (or the main splits pooled).

    tasks: task ids in sorted order; den: (tasks,) decisions per task; num: (tasks,) passes per
    task, mean over the seeds.
    """

    tasks: tuple[str, ...]
    den: np.ndarray
    num: np.ndarray


@dataclass(frozen=True)
class ReplayConfig:
    name: str
    runs: tuple[str, ...]
    rows: tuple[dict, ...]  # every run's graded rows (main and other splits), each with its "run"
    splits: Mapping[str, SplitCounts]


# ---------------------------------------------------------------- loading
def load_efficiency(folder: Path, stage: str) -> tuple[dict[str, dict | None], dict[str, str]]:
    """run -> the ``efficiency`` record of ``<folder>/<run>/metrics.json`` (None where there is none),
    and {run/metrics.json: SHA-256}."""
    out, hashes = {}, {}
    for path in sorted(folder.glob("*/metrics.json")) if folder.is_dir() else []:
        out[path.parent.name] = read_record(path, stage).get("efficiency")
        hashes[f"{path.parent.name}/metrics.json"] = sha256_file(path)
    return out, hashes


def load_rows(folder: Path, stage: str) -> tuple[dict[str, list[dict]], dict[str, str]]:
    """run -> rows of ``<folder>/<run>/verdicts.jsonl.gz``, and {run/verdicts.jsonl.gz: SHA-256}."""
    rows, hashes = {}, {}
    if folder.is_dir():
        for path in sorted(folder.glob(f"*/{VERDICTS}")):
            rows[path.parent.name] = read_rows(path, stage)
            hashes[f"{path.parent.name}/{VERDICTS}"] = sha256_file(path)
    return rows, hashes


def _split_counts(config: str, split: str, per_run: Mapping[str, list[dict]]) -> SplitCounts:
    keys = None
    passes = []
    for run, rows in per_run.items():
        mine = sorted((r for r in rows if r["dataset"] == split or (split == POOLED and r["pooled"])),
                      key=lambda r: (r["dataset"], r["task_id"], r["index"]))
        these = [(r["dataset"], r["task_id"], r["index"]) for r in mine]
        if keys is None:
            keys = these
        elif these != keys:
            raise AlignmentError(f"replay of {config}: run {run} answered other decisions than "
                                 f"{next(iter(per_run))} on {split}; rerun replay with the same golden set")
        passes.append([r["verdict"] == ReplayVerdict.PASS for r in mine])
    task_of = [f"{d}/{t}" if split == POOLED else t for d, t, _ in keys or []]
    tasks = tuple(sorted(set(task_of)))
    col = {t: i for i, t in enumerate(tasks)}
    idx = np.array([col[t] for t in task_of], dtype=np.int64)

    mean = np.asarray(passes, dtype=np.float64).mean(axis=0) if passes and passes[0] else np.zeros(0)
    den = np.bincount(idx, minlength=len(tasks)).astype(np.float64)
    return SplitCounts(tasks, den, np.bincount(idx, weights=mean, minlength=len(tasks)))


def build_configs(runs: Mapping[str, list[dict]], main_splits: Sequence[str]) -> dict[str, ReplayConfig]:
    """Graded rows by run -> configurations in the write-up's order, each with its per-split counts."""
    out = {}
    for config, names in sorted(group_runs(runs).items()):
        per_run = {n: [{**r, "run": n, "pooled": r["dataset"] in main_splits} for r in runs[n]] for n in names}
        splits = sorted({r["dataset"] for rows in per_run.values() for r in rows})
        counts = {s: _split_counts(config, s, per_run) for s in splits}
        if any(s in main_splits for s in splits):
            counts[POOLED] = _split_counts(config, POOLED, per_run)
        out[config] = ReplayConfig(config, names, tuple(r for rows in per_run.values() for r in rows), counts)
    return {c: out[c] for c in config_order(out)}


def episode_success(runs: Mapping[str, list[dict]], main_splits: Sequence[str]) -> dict[str, dict[str, dict]]:
    """run -> split (and ``all``) -> {task: (strict success, write-up success)} as 0.0/1.0."""
    out: dict[str, dict[str, dict]] = {}
    for name, rows in runs.items():
        cells: dict[str, dict] = {}
        for r in rows:
            v = r["verdict"]
            pair = (float(bool(v["success"])), float(bool(v["success_writeup"])))
            cells.setdefault(r["dataset"], {})[r["task_id"]] = pair
            if r["dataset"] in main_splits:
                cells.setdefault(POOLED, {})[f"{r['dataset']}/{r['task_id']}"] = pair
        out[name] = cells
    return out


# ---------------------------------------------------------------- tables
def _share(x: float | None) -> float | None:
    return None if x is None else _pct(x)


def replay_by_split(configs: Mapping[str, ReplayConfig], cfg: AnalyzeConfig) -> dict:
    """Replay pass % [task-clustered CI] per split and pooled, with the pooled diagnostics."""
    columns = ["config", "seeds", "decisions", *cfg.main_splits, POOLED, "strict", "arg_quality", "recovery",
               "stop_precision", "stop_recall", "format_valid"]
    rows = []
    for name, rc in configs.items():
        row: dict[str, Any] = {"config": name, "seeds": len(rc.runs)}
        for split in (*cfg.main_splits, POOLED):
            c = rc.splits.get(split)
            row[split] = None if c is None else _cell(
                cluster_rate(c.num, c.den, cfg.n_resamples, cfg.alpha, cell_seed(cfg.seed, "replay", name, split)),
                len(c.tasks))
        pooled_rows = [r for r in rc.rows if r["pooled"]]
        m = summarise(pooled_rows) if pooled_rows else {}
        row["decisions"] = int(rc.splits[POOLED].den.sum()) if POOLED in rc.splits else 0
        row["strict"] = _share(m.get("pass_strict"))
        for k in ("arg_quality", "recovery", "stop_precision", "stop_recall", "format_valid"):
            row[k] = _share(m.get(k))
        rows.append(row)
    return {"columns": columns, "rows": rows,
            "note": ("Share of golden decisions whose one action passes (%), with a 95% percentile CI from a "
                     f"task-cluster bootstrap ({cfg.n_resamples} resamples: tasks drawn with replacement, each "
                     "keeping all its decisions); n = tasks. 'all' pools the main splits; the other columns are "
                     "pooled point values: strict = pass with a schema-exact action; arg_quality = pass among "
                     "decisions where the right tools were called; recovery = pass after a timeout, outage or "
                     "not-found; stop precision/recall = final answers that were due / due final answers given; "
                     "format_valid = an action was parsed. Several seeds: every seed's decisions, pass counts "
                     "averaged per task.")}


def replay_strata(configs: Mapping[str, ReplayConfig], key: str) -> dict:
    """Pass % by decision kind (``key`` = "kind") or by the task's gold depth ("depth"), main splits pooled."""
    order = ([k.value for k in DecisionKind] if key == "kind" else
             sorted({r[key] for rc in configs.values() for r in rc.rows}))
    present = [v for v in order if any(r[key] == v and r["pooled"] for rc in configs.values() for r in rc.rows)]
    rows = []
    for name, rc in configs.items():
        row: dict[str, Any] = {"config": name}
        for v in present:
            hits = [r["verdict"] == ReplayVerdict.PASS for r in rc.rows if r["pooled"] and r[key] == v]
            row[str(v)] = {"mean": _pct(sum(hits) / len(hits)), "n": len(hits)} if hits else None
        rows.append(row)
    what = "decision kind" if key == "kind" else "gold workflow depth of the decision's task"
    return {"columns": ["config", *map(str, present)], "rows": rows,
            "note": f"Replay pass (%) by {what}, main splits pooled; n = decisions (every seed's)."}


def replay_paired(configs: Mapping[str, ReplayConfig], cfg: AnalyzeConfig) -> dict:
    """The write-up's comparisons on replay pass, main splits pooled; Holm over this family."""
    rows, raw = [], []
    for a, b in COMPARISONS:
        if ORACLE in (a, b):  # 100% replay by construction: a test it cannot lose
            continue
        if a not in configs or b not in configs or POOLED not in configs[a].splits or POOLED not in configs[b].splits:
            continue
        ca, cb = configs[a].splits[POOLED], configs[b].splits[POOLED]
        if ca.tasks != cb.tasks or not np.array_equal(ca.den, cb.den):
            raise AlignmentError(f"replay of {a} and {b} covers different decisions on the main splits; "
                                 f"rerun replay for both with the same golden set")
        name = f"{a}_vs_{b}"
        res = cluster_paired_difference(ca.num, cb.num, ca.den, cfg.n_resamples, cfg.n_flips, cfg.alpha,
                                        cell_seed(cfg.seed, "replay_paired", name, POOLED))
        rows.append({"comparison": name, "a": a, "b": b, "diff": _pct(res.diff), "low": _pct(res.low),
                     "high": _pct(res.high), "p": float(res.p), "n": res.n_tasks, "n_nonzero": res.n_nonzero,
                     "decisions": int(ca.den.sum())})
        raw.append(res.p)
    for row, p in zip(rows, holm(raw) if rows else []):
        row["p_holm"] = float(p)
        row["significant"] = bool(p <= cfg.alpha)
    return {"columns": ["comparison", "diff", "low", "high", "p", "p_holm", "significant", "n", "n_nonzero",
                        "decisions", "a", "b"],
            "rows": rows, "n_tests": len(rows),
            "note": ("a - b in replay pass (percentage points), main splits pooled. CI: task-cluster bootstrap of "
                     "the difference of pooled rates; p: two-sided sign-flip test on per-task differences of "
                     f"pass counts ({cfg.n_flips} flips; smallest attainable p = {1 / (1 + cfg.n_flips):.6f}); "
                     f"p_holm: Holm over these {len(rows)} tests only (a family of its own, fixed in advance; the "
                     "oracle's comparison is left out, as it made the golden set). "
                     "Training-seed variance is not in these intervals.")}


def _matrix(rows: Sequence[dict], labels: Sequence[str], label_of) -> dict:
    verdicts = [v.value for v in ReplayVerdict]
    counts = [[0] * len(verdicts) for _ in labels]
    where = {lab: i for i, lab in enumerate(labels)}
    col = {v: j for j, v in enumerate(verdicts)}
    for r in rows:
        for lab in label_of(r):
            counts[where[lab]][col[r["verdict"]]] += 1
    return {"rows": list(labels), "columns": verdicts, "counts": counts, "totals": [sum(c) for c in counts]}


def _tools_of(r: dict) -> list[str]:
    return sorted(set(r["ready_tools"])) or [FINAL]


def _worst(axis: str, m: dict) -> list[dict]:
    cells = [(n, n / m["totals"][i], m["rows"][i], v)
             for i, counts in enumerate(m["counts"]) for j, (n, v) in enumerate(zip(counts, m["columns"]))
             if v != ReplayVerdict.PASS and n]
    cells.sort(key=lambda c: (-c[0], -c[1], c[2], c[3]))
    return [{"axis": axis, "rank": rank, "label": lab, "verdict": v, "count": n, "share": _pct(s)}
            for rank, (n, s, lab, v) in enumerate(cells[:WORST], 1)]


def failure_map(configs: Mapping[str, ReplayConfig]) -> dict:
    """Per configuration, main splits pooled: verdict counts by decision kind and by gold tool."""
    out = {}
    for name, rc in configs.items():
        rows = [r for r in rc.rows if r["pooled"]]
        if not rows:
            continue
        kinds = [k.value for k in DecisionKind if any(r["kind"] == k for r in rows)]
        tools = sorted({t for r in rows for t in _tools_of(r)} - {FINAL}) + ([FINAL] if any(
            not r["ready_tools"] for r in rows) else [])
        by_kind = _matrix(rows, kinds, lambda r: [r["kind"]])
        by_tool = _matrix(rows, tools, _tools_of)
        out[name] = {"runs": list(rc.runs), "decisions": len(rows), "by_kind": by_kind, "by_tool": by_tool,
                     "worst": _worst("kind", by_kind) + _worst("tool", by_tool)}
    return {"configs": out, "final_label": FINAL,
            "note": ("Verdicts of every golden decision on the main splits pooled (all seeds' rows counted). By kind: "
                     "each decision once. By tool: each decision under every distinct tool among its ready gold "
                     f"calls (a parallel decision counts under each), '{FINAL}' when the gold action is the "
                     f"final answer. Worst cells: the {WORST} non-pass cells with the most decisions on each "
                     "axis (ties by share of the row).")}


def failure_worst(fm: dict) -> dict:
    """The failure map's worst cells as one table."""
    rows = []
    for name, m in fm["configs"].items():
        fails = sum(n for i, counts in enumerate(m["by_kind"]["counts"]) for n, v in
                    zip(counts, m["by_kind"]["columns"]) if v != ReplayVerdict.PASS)
        for w in m["worst"]:
            rows.append({"config": name, "decisions": m["decisions"], "failures": fails, "axis": w["axis"],
                         "rank": w["rank"], "cell": f"{w['label']} × {w['verdict']}", "count": w["count"],
                         "share": w["share"], "label": w["label"], "verdict": w["verdict"]})
    return {"columns": ["config", "axis", "rank", "cell", "count", "share", "failures", "decisions"], "rows": rows,
            "note": fm["note"] + " share = the cell's decisions as % of its row (that kind's or tool's decisions)."}


def _aligned_episode(rc: ReplayConfig, split: str, c: SplitCounts,
                     episodes: Mapping[str, dict]) -> tuple[np.ndarray | None, str]:
    """(tasks, 2) strict and write-up episode success in ``c``'s task order, averaged over the runs
    that were replayed (the same seeds on both sides); (None, why) if an episode is missing."""
    per_run = []
    for run in rc.runs:
        by_task = episodes.get(run, {}).get(split)
        if by_task is None:
            return None, f"no episode verdicts of {run} on {split}"
        lacking = [t for t in c.tasks if t not in by_task]
        if lacking:
            return None, f"{run} has no episode for {len(lacking)} replayed task(s) on {split} (e.g. {lacking[0]})"
        per_run.append([by_task[t] for t in c.tasks])
    return np.array(per_run, dtype=np.float64).mean(axis=0), ""


def _rounded(x: float) -> float | None:
    return None if np.isnan(x) else round(float(x), 4)


def _correlation(split: str, x_num: list, den: np.ndarray | None, y_num: list, y_w: list,
                 cfg: AnalyzeConfig) -> dict[str, Any]:
    """Across configurations on one split: Pearson r of replay pass and strict success (task-cluster
    interval), Spearman rho with its permutation p, r against write-up success, and the verdict."""
    if len(x_num) < 3:
        return {"pearson": None, "low": None, "high": None, "spearman": None, "spearman_p": None,
                "pearson_writeup": None, "predicts": "too few configurations (< 3)"}
    ones = np.ones(len(den))
    ci = cluster_correlation(np.array(x_num), den, np.array(y_num), ones, cfg.n_resamples, cfg.alpha,
                             cell_seed(cfg.seed, "replay_vs_episode", split))
    xr = np.array(x_num).sum(axis=1) / den.sum()
    yr, yw = np.array(y_num).mean(axis=1), np.array(y_w).mean(axis=1)
    rho, rho_p = spearman_permutation(xr, yr, cell_seed(cfg.seed, "spearman", split))
    pw = sps.pearsonr(xr, yw).statistic if np.ptp(xr) > 0 and np.ptp(yw) > 0 else None
    if np.isnan(ci.mean) or rho is None:
        predicts = "undefined (a rate is constant across configurations)"
    elif rho <= 0:
        predicts = f"no (rho = {rho:+.2f})"
    elif rho_p > cfg.alpha:
        predicts = f"not shown (rank agreement p = {rho_p:.2g} > {cfg.alpha})"
    elif not ci.low > 0:
        predicts = "not shown (the interval of r reaches 0)"
    else:
        predicts = "yes"
    return {"pearson": _rounded(ci.mean), "low": _rounded(ci.low), "high": _rounded(ci.high),
            "dropped_resamples": ci.dropped,
            "spearman": None if rho is None else round(rho, 4),
            "spearman_p": None if rho is None else float(rho_p),
            "pearson_writeup": None if pw is None else round(float(pw), 4), "predicts": predicts}


def replay_vs_episode(configs: Mapping[str, ReplayConfig], episodes: Mapping[str, dict], cfg: AnalyzeConfig) -> dict:
    """Across configurations (the oracle left out): replay pass against strict episode success."""
    points, rows = [], []
    for split in (*cfg.main_splits, POOLED):
        names, x_num, y_num, y_w = [], [], [], []
        skipped: dict[str, str] = {}
        tasks: tuple[str, ...] = ()
        den: np.ndarray | None = None
        for name, rc in configs.items():
            c = rc.splits.get(split)
            if c is None:
                continue
            ep, why = _aligned_episode(rc, split, c, episodes)
            if ep is None:
                skipped[name] = why
                continue
            points.append({"config": name, "split": split, "replay_pass": _pct(c.num.sum() / c.den.sum()),
                           "episode_strict": _pct(ep[:, 0].mean()), "episode_writeup": _pct(ep[:, 1].mean()),
                           "tasks": len(c.tasks), "decisions": int(c.den.sum())})
            if name == ORACLE or name in LEARNED:  # the study's rule reads its own configurations; the
                continue  # learning arms (exploratory, issue 40) are plotted, never counted
            if den is not None and (c.tasks != tasks or not np.array_equal(c.den, den)):
                raise AlignmentError(f"replay of {name} covers other decisions on {split} than {names[0]}")
            tasks, den = c.tasks, c.den
            names.append(name)
            x_num.append(c.num)
            y_num.append(ep[:, 0])
            y_w.append(ep[:, 1])
        rows.append({"split": split, "configs": names, "n_configs": len(names), "skipped": skipped,
                     **_correlation(split, x_num, den, y_num, y_w, cfg)})
    return {"columns": ["split", "n_configs", "pearson", "low", "high", "spearman", "spearman_p", "pearson_writeup",
                        "predicts"], "rows": rows, "points": points,
            "note": ("Across configurations (the oracle left out: it made the golden set; the exploratory learning "
                     "arms too), Pearson r between a "
                     "configuration's replay pass rate and its strict episode success on the same tasks (over the "
                     f"same runs), with a {100 * (1 - cfg.alpha):.0f}% task-cluster bootstrap interval "
                     f"({cfg.n_resamples} resamples: one draw of tasks for every configuration and both measures; "
                     "resamples where a rate is constant have no r and are dropped, counted in the artifact), which "
                     "reflects how precisely each rate is measured, not how few configurations there are; "
                     "Spearman rho with its permutation p over pairings of the configurations (all of them up to "
                     f"{EXACT_MAX}, else {N_PAIRINGS:,} random ones), which does; pearson_writeup correlates with "
                     f"the write-up's lenient success. 'predicts' = yes when rho > 0 with p <= {cfg.alpha} and r's "
                     "interval lies above 0 (the rule fixed in advance). Fewer than 5 configurations can never "
                     "pass (smallest p = 2/n!).")}


def speed(replay_eff: Mapping[str, dict | None], episode_eff: Mapping[str, dict | None]) -> dict:
    """Per run with a model: graded decisions per second (replay stage) against graded episodes per
    second (evaluation stage), from the wall times each stage recorded."""
    rows = []
    for run in sorted(replay_eff):
        r, e = replay_eff[run], episode_eff.get(run)
        if not r or not e or not r.get("gen_tokens") or not r.get("wall_s") or not e.get("wall_s") \
                or not e.get("episodes_this_run"):
            continue  # the oracle generates nothing; a resumed run or one without both records has no ratio
        dps, eps = r["decisions"] / r["wall_s"], e["episodes_this_run"] / e["wall_s"]
        rows.append({"run": run, "episodes": e["episodes_this_run"], "episode_wall_s": e["wall_s"],
                     "episodes_per_s": round(eps, 4), "decisions": r["decisions"], "replay_wall_s": r["wall_s"],
                     "decisions_per_s": round(dps, 4), "ratio": round(dps / eps, 2)})
    return {"columns": ["run", "episodes", "episode_wall_s", "episodes_per_s", "decisions", "replay_wall_s",
                        "decisions_per_s", "ratio"], "rows": rows,
            "note": ("Graded units per second from the wall time each stage recorded (evaluate: whole episodes, "
                     "replay: one action per golden decision; grading itself takes seconds and is not included). "
                     "The two stages of a run may have run at different times on a machine that was not always "
                     "quiet; scripts/bench_replay.py measures both side by side in one run.")}


def build_summary(configs: Mapping[str, ReplayConfig], episodes: Mapping[str, dict], cfg: AnalyzeConfig,
                  inputs: Mapping[str, str], efficiency: tuple[Mapping, Mapping] = ({}, {})) -> dict:
    fm = failure_map(configs)
    return {
        "configs": list(configs),
        "runs_per_config": {n: list(c.runs) for n, c in configs.items()},
        "stats": {"n_resamples": cfg.n_resamples, "n_flips": cfg.n_flips, "alpha": cfg.alpha, "seed": cfg.seed,
                  "ci": "percentile, task-cluster bootstrap", "main_splits": list(cfg.main_splits)},
        "inputs": dict(sorted(inputs.items())),
        "replay_by_split": replay_by_split(configs, cfg),
        "replay_by_kind": replay_strata(configs, "kind"),
        "replay_by_depth": replay_strata(configs, "depth"),
        "replay_paired": replay_paired(configs, cfg),
        "failure_map": fm,
        "failure_worst": failure_worst(fm),
        "replay_vs_episode": replay_vs_episode(configs, episodes, cfg),
        "speed": speed(*efficiency),
    }
