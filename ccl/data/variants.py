"""The SFT training sets of the study: B, C, their mixtures and the oracle ablations.

All variants draw from two sources, re-serialised identically by :func:`ccl.data.sft.sft_row`:
accepted teacher episodes (B) and oracle episodes on the training pool (C). Sizes follow
the write-up: B and C hold the episode budget each; C_matched is the oracle on exactly
B's tasks; C_25 and C_50 are a quarter and a half of C; C_full is the whole training
pool. A teacher that yields fewer accepted episodes than the budget leaves B (and so
C_matched) smaller; C keeps the budget, because it is defined by the offered tasks, not
by the teacher. variants.json records the shortfall; every run trains for the same
number of optimizer steps either way.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from .. import vocabulary as V
from ..errors import StageError
from .sft import sft_row


@dataclass(frozen=True)
class BuildSFTConfig:
    """Variant sizes; defaults are the write-up's."""

    budget: int = 1000  # episodes in B, C and C_matched (each of Dmix's and Dseq's halves)
    c_full: int | None = None  # None: every task of the training pool
    seed: int = 0


class VariantError(StageError, ValueError):
    """Inputs that cannot make the variants; the message names the file or task."""


def teacher_rows(tasks_by_id: dict[str, dict], episodes: list[dict]) -> list[dict]:
    """SFT rows of the accepted teacher episodes, in task order of the pool."""
    rows = []
    for ep in episodes:
        if not ep["accepted"]:
            continue
        task = tasks_by_id.get(ep["task_id"])
        if task is None:
            raise VariantError(f"teacher episode for unknown task {ep['task_id']!r} (not in the training pool)")
        rows.append(sft_row(task, ep["record"], "teacher"))
    order = {tid: i for i, tid in enumerate(tasks_by_id)}
    rows.sort(key=lambda r: order[r["task_id"]])
    if len({r["task_id"] for r in rows}) != len(rows):
        raise VariantError("more than one accepted teacher episode for a task (pass 2 must only rerun rejections)")
    return rows


def draw_b_and_c(cfg: BuildSFTConfig, teacher_count: int, offered_ids: list[str]) -> tuple[list[int], list[str]]:
    """Which accepted teacher rows make B (their indices) and which offered tasks make C, in C's order.

    One generator draws both, B first. ``random.sample`` picks positions from the population's size and
    ``k`` alone, so C's draw depends on the teacher only through ``teacher_count``: study 2 rebuilds C
    from the accepted count the published variants record, without the teacher's episodes.
    """
    rng = random.Random(cfg.seed)
    b_picks = rng.sample(range(teacher_count), min(cfg.budget, teacher_count))
    return b_picks, rng.sample(offered_ids, min(cfg.budget, len(offered_ids)))


def c_rows(cfg: BuildSFTConfig, teacher_count: int, offered_ids: list[str], oracle: dict[str, dict]) -> list[dict]:
    """Variant C alone: the oracle's rows for C's draw (``draw_b_and_c``), as ``build_variants`` writes them."""
    missing = [i for i in offered_ids if i not in oracle]
    if missing:
        raise VariantError(f"{len(missing)} offered task(s) have no oracle episode, e.g. {missing[0]}")
    return [oracle[i] for i in draw_b_and_c(cfg, teacher_count, offered_ids)[1]]


def build_variants(cfg: BuildSFTConfig, pool: list[dict], offered_ids: list[str], teacher: list[dict],
                   oracle: dict[str, dict]) -> tuple[dict[str, list[dict]], dict]:
    """Every variant's rows (in file order) and the notes explaining its size.

    ``pool``: the training pool's tasks; ``offered_ids``: tasks offered to the teacher;
    ``teacher``: accepted teacher SFT rows; ``oracle``: oracle SFT row per task id.
    """
    missing = [t["id"] for t in pool if t["id"] not in oracle]
    if missing:
        raise VariantError(f"{len(missing)} training-pool task(s) have no oracle episode, e.g. {missing[0]}")
    b_picks, c_ids = draw_b_and_c(cfg, len(teacher), offered_ids)
    order = {tid: i for i, tid in enumerate(offered_ids)}
    b = sorted((teacher[i] for i in b_picks), key=lambda r: order[r["task_id"]])
    # C: random tasks among those offered to the teacher; C_25 and C_50 are its prefixes (nested)
    c = [oracle[i] for i in c_ids]
    full = [oracle[t["id"]] for t in pool][: cfg.c_full]
    variants = {
        V.B: b,
        V.C: c,
        V.C_MATCHED: [oracle[r["task_id"]] for r in b],
        V.C_25: c[: round(len(c) * 0.25)],
        V.C_50: c[: round(len(c) * 0.5)],
        V.C_FULL: full,
        V.DMIX: b + c,
        V.DSEQ: [{**r, "phase": 0} for r in b] + [{**r, "phase": 1} for r in c],
    }
    n = len(b)
    notes = {"budget": cfg.budget, "b_episodes": n, "c_episodes": len(c), "teacher_accepted": len(teacher)}
    if n < cfg.budget:
        notes["shortfall"] = (f"the teacher produced {len(teacher)} accepted episodes, fewer than the budget of "
                              f"{cfg.budget}: B and C_matched hold {n} episodes, C holds {len(c)}, so B's episodes "
                              f"repeat more often in the same number of training steps")
    return variants, notes


def describe_variant(rows: list[dict]) -> dict:
    """Episodes, supervised assistant turns and per-family (and per-source) composition."""
    return {
        "episodes": len(rows),
        "sft_rows": sum(r["n_assistant_turns"] for r in rows),
        "tasks": len({r["task_id"] for r in rows}),
        "families": dict(sorted(Counter(r["family"] for r in rows).items())),
        "sources": dict(sorted(Counter(r["source"] for r in rows).items())),
    }

