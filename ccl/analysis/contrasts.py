"""Paired comparisons between configurations: the secondary family over every split, and the
pre-registered primary contrasts (with a post-hoc family under ruler 2) pooled over the primary splits,
and success under ruler 1 and ruler 2 side by side.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from ..stats import holm, paired_difference, sign_flip_lattice, task_bootstrap
from ..vocabulary import COMPARISONS, OUTCOMES, PRIMARY_CONTRASTS, RULER1, RULER2, Contrast
from .intervals import Progress, _cell, _noop, _pct, interval, pooled
from .runs import POOLED, AlignmentError, AnalyzeConfig, ConfigData, Matrix, cell_seed


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
                     "low": _pct(res.low), "high": _pct(res.high), "p": float(res.p), "n": res.n_tasks,
                     "n_nonzero": res.n_nonzero, "seeds_a": configs[a].seeds, "seeds_b": configs[b].seeds})
        raw_p.append(res.p)
        progress(1)
    adjusted = holm(raw_p) if rows else np.zeros(0)
    for row, p_holm in zip(rows, adjusted):
        row["p_holm"] = float(p_holm)
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
    # stored unrounded, as every p-value and Holm value of the summaries: rounded to 6 decimals, an exact
    # p of 2.7e-20 read 0, and Holm recomputed from the stored p-values missed the stored Holm values
    p = sign_flip_lattice(d, math.lcm(xa.shape[0], xb.shape[0]))
    return {"b_success": _pct(float(xb.mean())), "diff": _pct(ci.mean), "low": _pct(ci.low), "high": _pct(ci.high),
            "p": p, "n": int(d.size), "n_nonzero": int(np.count_nonzero(d)),
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
    # ruler 2 resamples with the strict family's seeds, so a contrast it leaves alone keeps its interval
    seed_name = "success" if outcome == RULER2 else outcome
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


def contrast_family(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig, contrasts: Sequence[Contrast],
                    outcome: str) -> dict:
    """One family of contrasts on ``outcome`` (a key of the configurations' matrices), Holm over the family;
    a contrast that cannot be computed enters the correction with p = 1 and has no row."""
    rows = [r for c in contrasts if (r := _contrast_row(c, configs, cfg, outcome)) is not None]
    missing = len(contrasts) - len(rows)
    adjusted = holm([r["p"] for r in rows] + [1.0] * missing)
    for row, p_holm in zip(rows, adjusted):
        row["p_holm"] = float(p_holm)
        row["significant"] = bool(p_holm <= cfg.alpha)
    return {"rows": rows, "family_size": len(contrasts), "complete": missing == 0}


def primary(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> dict:
    """The pre-registered primary contrasts (docs/preregistration.md) on each success definition.

    Pooled over ``cfg.primary_splits``; per task, each configuration's outcome is averaged over
    its seeds. Holm over the contrasts of the strict family (the primary family) and, separately,
    over the same contrasts under the write-up's definition (a secondary family). A contrast that
    cannot be computed (a configuration was not evaluated) enters Holm with p = 1, so the
    correction is always over the whole pre-registered family.
    """
    families = {}
    for outcome in OUTCOMES + ((RULER2,) if _judged_twice(configs, cfg.primary_splits) else ()):
        families[outcome] = {**contrast_family(configs, cfg, PRIMARY_CONTRASTS, outcome), "post_hoc": outcome == RULER2}
    return {"splits": list(cfg.primary_splits), "alpha": cfg.alpha, **families,
            "note": (f"Pre-registered primary contrasts on strict success, pooled over {', '.join(cfg.primary_splits)}; "
                     f"a - b in percentage points of seed-averaged per-task outcomes, with an unadjusted "
                     f"{100 * (1 - cfg.alpha):.0f}% task-bootstrap CI ({cfg.n_resamples} resamples) and an exact "
                     f"two-sided sign-flip p (McNemar's test with one seed per side); p_holm: Holm over the "
                     f"{len(PRIMARY_CONTRASTS)} contrasts (one not computed counts as p = 1). The tests treat the "
                     "trained adapters as fixed: they cover task sampling, not training-seed variance. "
                     "'success_writeup' repeats them under the write-up's definition as a secondary family with its "
                     f"own Holm correction; '{RULER2}', when present, under ruler 2's success (ccl/judge/ruler2.py: "
                     "farm-resistant, written after the pre-registered run's transcripts were read), a sensitivity "
                     "analysis not in the pre-registration, with its own Holm correction.")}


def _judged_twice(configs: Mapping[str, ConfigData], splits: Sequence[str]) -> bool:
    """Every configuration's verdicts on ``splits`` carry ruler 2's verdict beside ruler 1's."""
    return all(RULER2 in data.splits[s].values for data in configs.values() for s in splits if s in data.splits)


def _ruler_row(name: str, split: str, mat: Matrix, cfg: AnalyzeConfig) -> dict:
    # both with the success table's seed: ruler 1 repeats that table's cell, and a configuration
    # ruler 2 judges alike keeps the same interval
    seed = cell_seed(cfg.seed, "success", name, split)
    cells = {m: _cell(*interval(mat.values[m], cfg, seed)) for m in ("success", RULER2)}
    first, second = mat.values["success"], mat.values[RULER2]
    return {"config": name, "split": split, RULER1: cells["success"], RULER2: cells[RULER2],
            "ruler1_only": int(np.sum((first == 1) & (second == 0))),
            "ruler2_only": int(np.sum((first == 0) & (second == 1))), "episodes": int(first.size)}


def rulers(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> dict:
    """Success under ruler 1 (pre-registered) and ruler 2 (farm-resistant, post hoc) side by side, per
    configuration, per main split and pooled over them, with the episodes each ruler alone passes."""
    rows = []
    if _judged_twice(configs, cfg.main_splits):
        for name, data in configs.items():
            for split in (*cfg.main_splits, POOLED):
                mat = pooled(data, cfg.main_splits) if split == POOLED else data.splits.get(split)
                if mat is not None:
                    rows.append(_ruler_row(name, split, mat, cfg))
    return {"columns": ["config", "split", RULER1, RULER2, "ruler1_only", "ruler2_only", "episodes"], "rows": rows,
            "note": ("Success in percent, mean and 95% CI, under ruler 1 (ccl/judge/validate.py, the pre-registered "
                     "strict success: the study's published results) and ruler 2 (ccl/judge/ruler2.py, written after "
                     "the pre-registered run's transcripts were read: a validator a learner cannot farm, so a "
                     "sensitivity analysis, not a replacement). ruler1_only / ruler2_only: episodes (summed over "
                     "seeds) only that ruler counts as successes. Empty when the verdicts predate ruler 2.")}
