"""Stage power: the minimum detectable effect (MDE) of each pre-registered primary contrast.

The design is read from params.yaml, never from results: the tasks evaluation runs on each
primary split (the evaluate section, capped by the split files' sizes), the runs each
configuration trains (``runs``), the primary contrasts (ccl.vocabulary; or, for a study that declares its
design in a file of its own, that file's configurations and family: ``ccl.analysis.declared``) and the analysis's
alpha. Each contrast is tested at alpha / m (Holm's strictest step over the m contrasts, so
the figure holds for every contrast); an intersection-union contrast over k comparators
needs every component to reject, so each component gets power 1 - (1 - power) / k, which
by the union bound gives the contrast at least the target power.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..analysis.declared import read_design
from ..analysis.runs import AnalyzeConfig
from ..artifacts.inputs import split_rows
from ..config import load_params, stage_config
from ..episode.evaluate_config import EvaluateConfig, task_cap
from ..errors import InputError
from ..stats.power import Design, mde
from ..vocabulary import PRIMARY_FAMILIES, parse_run_name


@dataclass(frozen=True)
class PowerConfig:
    """The planning values of the power analysis (docs/preregistration.md)."""

    power: float = 0.8
    reverse_share: float = 0.05  # q: planned share of tasks the comparator solves and side a fails
    mde_target: float = 0.15  # the largest MDE the design may have (issue 22: 15 points)
    reverse_grid: tuple[float, ...] = (0.0, 0.025, 0.05, 0.075, 0.1)  # q values shown beside the plan
    # whose primary contrasts: a name of ccl.vocabulary.PRIMARY_FAMILIES, or the path of a study's design
    # file (a .yaml, ccl.analysis.declared), whose configurations also give the seeds
    family: str = "study1"

    def __post_init__(self) -> None:
        object.__setattr__(self, "reverse_grid", tuple(self.reverse_grid))
        if not 0 < self.power < 1 or not 0 < self.mde_target < 1:
            raise ValueError(f"power and mde_target must lie in (0, 1), got {self.power}, {self.mde_target}")
        if self.family not in PRIMARY_FAMILIES and not self.family.endswith(".yaml"):
            raise ValueError(f"family must be one of {', '.join(PRIMARY_FAMILIES)} or a design file (.yaml), "
                             f"got {self.family!r}")


def primary_tasks(ev: EvaluateConfig, splits: tuple[str, ...], tasks_dir: Path) -> dict[str, int]:
    """How many tasks evaluation runs on each primary split: the split file's size, capped."""
    absent = [s for s in splits if s not in ev.splits]
    if absent:
        raise InputError(f"primary split {', '.join(absent)} is not evaluated (params.yaml evaluate.splits: "
                         f"{list(ev.splits)})")
    return {split: len(split_rows(tasks_dir, split)[: task_cap(ev, split)]) for split in splits}


def run(params_path: Path, profile: str | None, tasks_dir: Path) -> dict:
    """The power record: design, one MDE per primary contrast, and MDE against the planning value q."""
    params = load_params(params_path)
    pw, profile = stage_config(params, "power", PowerConfig, profile, where=str(params_path))
    ev, _ = stage_config(params, "evaluate", EvaluateConfig, profile, where=str(params_path))
    an, _ = stage_config(params, "analyze", AnalyzeConfig, profile, where=str(params_path))
    tasks = primary_tasks(ev, an.primary_splits, tasks_dir)
    n = sum(tasks.values())
    if pw.family in PRIMARY_FAMILIES:
        contrasts = PRIMARY_FAMILIES[pw.family]
        seeds = Counter(parse_run_name(r)[0] for r in [*params.get("runs", []), *(params.get("learned_runs") or [])])
    else:
        design = read_design(Path(pw.family))
        contrasts, seeds = design.primary, Counter({c: design.seeds(c) for c in design.configs})
    m = len(contrasts)
    rows = []
    for c in contrasts:
        k = len(c.comparators)
        design = Design(n, an.alpha / m, 1 - (1 - pw.power) / k)
        value = mde(design, pw.reverse_share)
        configs = (c.a, *c.comparators)
        rows.append({"contrast": c.name, "a": c.a, "comparators": list(c.comparators), "n": n,
                     "alpha": round(design.alpha, 6), "component_power": round(design.power, 6),
                     "mde": value, "meets_target": value is not None and value <= pw.mde_target,
                     "seeds": {x: seeds[x] for x in configs if x in seeds}})
    curve = [{"reverse_share": q, **{r["contrast"]: mde(Design(n, r["alpha"], r["component_power"]), q) for r in rows}}
             for q in pw.reverse_grid]
    return {"profile": profile, "primary_splits": list(an.primary_splits), "tasks": tasks, "n": n,
            "family_size": m, "alpha": an.alpha, "power": pw.power, "reverse_share": pw.reverse_share,
            "mde_target": pw.mde_target, "contrasts": rows, "curve": curve,
            "all_meet_target": all(r["meets_target"] for r in rows),
            "method": ("exact power of the two-sided McNemar test (the sign-flip test on 0/1 differences): "
                       "discordant tasks ~ Binomial(n, delta + 2q), those won by a ~ Binomial(D, (delta + q) / "
                       "(delta + 2q)); MDE = smallest delta on a 0.5-point grid reaching the power. Seed "
                       "averaging cannot increase per-task variance, so to a normal approximation the one-seed "
                       "figure is the lower power; the tests treat trained adapters as fixed.")}
