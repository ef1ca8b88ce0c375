"""Study 2's fresh evaluation pool (docs/preregistration-2.md): new tasks for the splits it evaluates.

The splits keep the first study's names and recipes (``eval_id``: new instances of the training
templates; ``eval_renamed``: the same templates under the held-out vocabulary) so that evaluation,
judging and analysis read them unchanged, but every task comes from a seed range no split of the
first study, no training pool and no targeted training task has used (those stop below 6,000,000),
and a candidate whose request occurs verbatim in any existing split (training, validation or the
first study's evaluation) is dropped and counted, as ``draw_split`` drops training overlaps.
"""
from __future__ import annotations

from dataclasses import dataclass

from .datasets import PAPER_COMPOSITION, SplitSpec, audit_split, draw_split, held_out_tools_in, scale_composition

# Seed ranges above every range in use (train 0.., targeted 900,000.., validation 500,000.., the first
# study's evaluation splits 1,000,000-5,000,000 + a few hundred): one range per split (control v).
FRESH_SPECS = (
    SplitSpec("eval_id", "train", "eval", 6_000_000),
    SplitSpec("eval_renamed", "train", "eval", 7_000_000, "heldout"),
)
FIRST_FRESH_SEED = min(s.seed_start for s in FRESH_SPECS)


class FreshPoolError(ValueError):
    """The existing splits reach into the fresh seed ranges, or a fresh task repeats an existing one."""


@dataclass(frozen=True)
class FreshPoolConfig:
    """Tasks per fresh split; the cpu profile's sizes come from study 2's power analysis."""

    eval_id: int = 216
    eval_renamed: int = 144


def build_fresh_pool(cfg: FreshPoolConfig, existing: dict[str, list[dict]]) -> tuple[dict[str, list[dict]], dict]:
    """The fresh splits and their audit, given every existing split by name (``train_pool`` and
    ``val_pool`` must be among them)."""
    used = [t for tasks in existing.values() for t in tasks]
    reached = [t["id"] for t in used if t["seed"] >= FIRST_FRESH_SEED]
    if reached:
        raise FreshPoolError(f"{len(reached)} existing task(s) use seeds at or above {FIRST_FRESH_SEED}, "
                             f"e.g. {reached[0]}: the fresh ranges are not fresh")
    forbidden = {t["request"] for t in used}
    training = existing["train_pool"] + existing["val_pool"]
    training_requests = {t["request"] for t in training}
    train_sigs = {t["graph_signature"] for t in existing["train_pool"]}
    seen = held_out_tools_in(training)
    ids = {t["id"] for t in used}
    out: dict[str, list[dict]] = {}
    audit: dict = {"first_seed": FIRST_FRESH_SEED, "existing_splits": sorted(existing),
                   "existing_tasks": len(used), "splits": {}}
    for spec in FRESH_SPECS:
        comp = scale_composition(PAPER_COMPOSITION[spec.name], getattr(cfg, spec.name))
        tasks, dropped = draw_split(spec, comp, forbidden)
        repeated = [t["id"] for t in tasks if t["id"] in ids]
        if repeated:
            raise FreshPoolError(f"{spec.name}: {len(repeated)} fresh task id(s) already exist, e.g. {repeated[0]}")
        for t in tasks:
            t["graph_seen"] = t["graph_signature"] in train_sigs
        out[spec.name] = tasks
        seeds = [t["seed"] for t in tasks]
        audit["splits"][spec.name] = {
            **audit_split(tasks, existing["train_pool"], training_requests, dropped, seen),
            "seed_start": spec.seed_start, "seeds": [min(seeds), max(seeds)],
            "request_overlap_any_existing": sum(t["request"] in forbidden for t in tasks),
        }
    return out, audit
