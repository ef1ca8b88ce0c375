"""The learning arms against C and the untrained student (issue 40): an exploratory family of its own.

Each comparison of ``vocabulary.LEARNED_COMPARISONS`` whose two configurations were evaluated is a paired
test of success pooled over the main splits, under ruler 2 (the learning arms' outcome: the ruler their
labels were judged by) and under ruler 1 beside it, with the same estimator, interval and exact
sign-flip test as the primary contrasts, and Holm within each ruler's rows. The write-up's family
(``paired``) is untouched, so evaluating a learning arm never changes a published p-value. Nothing here
was pre-registered: the next study's pre-registration is where these arms are tested.
"""
from __future__ import annotations

from typing import Mapping

from ..stats import holm
from ..vocabulary import LEARNED_COMPARISONS, RULER1, RULER2
from .contrasts import _component, aligned_pooled
from .intervals import _pct
from .runs import AnalyzeConfig, ConfigData, cell_seed


def _comparable(configs: Mapping[str, ConfigData], names: tuple[str, str], splits: tuple[str, ...]) -> bool:
    return all(n in configs and all(s in configs[n].splits for s in splits) for n in names)


def learned(configs: Mapping[str, ConfigData], cfg: AnalyzeConfig) -> dict:
    rows = []
    for outcome, ruler in ((RULER2, RULER2), ("success", RULER1)):
        mine = []
        for a, b in LEARNED_COMPARISONS:
            if not _comparable(configs, (a, b), cfg.main_splits):
                continue
            if not all(outcome in configs[n].splits[s].values for n in (a, b) for s in cfg.main_splits):
                continue
            xa, xb = aligned_pooled(configs[a], configs[b], cfg.main_splits, outcome)
            part = _component(xa, xb, cfg, _seed(cfg, ruler, a, b))
            mine.append({"comparison": f"{a}_vs_{b}", "ruler": ruler, "a": a, "b": b,
                         "a_success": _pct(float(xa.mean())), **part,
                         "seeds_a": configs[a].seeds, "seeds_b": configs[b].seeds})
        for row, p in zip(mine, holm([r["p"] for r in mine]) if mine else []):
            row["p_holm"] = float(p)
            row["significant"] = bool(p <= cfg.alpha)
        rows += mine
    return {"columns": ["comparison", "ruler", "a_success", "b_success", "diff", "low", "high", "p", "p_holm",
                        "significant", "n", "a_wins", "b_wins"],
            "rows": rows, "splits": list(cfg.main_splits),
            "note": ("Exploratory (issue 40): the learning arms against C and A_base, success pooled over the main "
                     "splits, a - b in points with a task-bootstrap CI and an exact sign-flip p; Holm within each "
                     "ruler's rows. Not pre-registered: chosen before any result, tested properly by the next study.")}


def _seed(cfg: AnalyzeConfig, ruler: str, a: str, b: str) -> int:
    return cell_seed(cfg.seed, "learned", ruler, f"{a}_vs_{b}")
