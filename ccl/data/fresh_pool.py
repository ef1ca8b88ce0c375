"""A study's fresh evaluation pool (docs/preregistration-2.md, docs/preregistration-3.md): new tasks for the
splits it evaluates.

The splits keep the first study's names and recipes (``eval_id``: new instances of the training
templates; ``eval_renamed``: the same templates under the held-out vocabulary) so that evaluation,
judging and analysis read them unchanged, but every task comes from a seed range no existing split
has used (study 2: 6,000,000 and 7,000,000 up, above every range of the first study; study 3:
8,000,000 and 9,000,000 up, above study 2's), and a candidate whose request occurs in any existing
split (training, validation, an earlier study's evaluation) is dropped and counted, as ``draw_split``
drops training overlaps. Study 2 compared requests verbatim; study 3 drops near-duplicates too
(``near_duplicates``): a request equal to an existing one once case and spacing are ignored (study 2 kept
one that differed from a training request only in "pm" against "PM"), or made of the same words in
another order ("weather in Toronto and Lisbon" against "in Lisbon and Toronto": the same task).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .datasets import PAPER_COMPOSITION, SplitSpec, audit_split, draw_split, held_out_tools_in, scale_composition

# Study 2's seed ranges, above every range the first study uses (train 0.., targeted 900,000..,
# validation 500,000.., its evaluation splits 1,000,000-5,000,000 + a few hundred): one range per split.
FIRST_FRESH_SEED = 6_000_000


class FreshPoolError(ValueError):
    """The existing splits reach into the fresh seed ranges, or a fresh task repeats an existing one."""


@dataclass(frozen=True)
class FreshPoolConfig:
    """Tasks per fresh split and where their seeds start; the defaults are study 2's (its power analysis's
    sizes, its seed ranges, requests compared verbatim)."""

    eval_id: int = 216
    eval_renamed: int = 144
    id_seed: int = FIRST_FRESH_SEED
    renamed_seed: int = 7_000_000
    near_duplicates: bool = False  # compare requests ignoring case and spacing (request_key), not verbatim

    def __post_init__(self) -> None:
        if abs(self.id_seed - self.renamed_seed) < 1_000_000:
            raise ValueError(f"fresh_pool: id_seed {self.id_seed} and renamed_seed {self.renamed_seed} must be at "
                             "least 1,000,000 apart (one range per split)")

    def specs(self) -> tuple[SplitSpec, SplitSpec]:
        return (SplitSpec("eval_id", "train", "eval", self.id_seed),
                SplitSpec("eval_renamed", "train", "eval", self.renamed_seed, "heldout"))

    @property
    def first_seed(self) -> int:
        return min(self.id_seed, self.renamed_seed)


WORD = re.compile(r"\w+")


def request_key(request: str) -> str:
    """A request with case and spacing ignored: "Call at 3 PM" and "call at 3pm" share one key."""
    return "".join(request.casefold().split())


def request_words(request: str) -> frozenset[str]:
    """A request's words, case and order ignored (the word-set of the pool audit's Jaccard similarity)."""
    return frozenset(WORD.findall(request.casefold()))


class NearDuplicates:
    """The requests a candidate may not come near: ``draw_split`` asks ``request in forbidden`` of a set of
    requests, and this answers yes when the request equals one of them with case and spacing ignored
    (``request_key``) or has the same words in any order (``request_words``)."""

    def __init__(self, requests: set[str]) -> None:
        self.keys: set[str] = set()
        self.words: set[frozenset[str]] = set()
        for r in requests:
            self.add(r)

    def add(self, request: str) -> None:
        self.keys.add(request_key(request))
        self.words.add(request_words(request))

    def __contains__(self, request: object) -> bool:
        return isinstance(request, str) and (request_key(request) in self.keys or request_words(request) in self.words)


def build_fresh_pool(cfg: FreshPoolConfig, existing: dict[str, list[dict]]) -> tuple[dict[str, list[dict]], dict]:
    """The fresh splits and their audit, given every existing split by name (``train_pool`` and
    ``val_pool`` must be among them)."""
    used = [t for tasks in existing.values() for t in tasks]
    reached = [t["id"] for t in used if t["seed"] >= cfg.first_seed]
    if reached:
        raise FreshPoolError(f"{len(reached)} existing task(s) use seeds at or above {cfg.first_seed}, "
                             f"e.g. {reached[0]}: the fresh ranges are not fresh")
    forbidden = {t["request"] for t in used}
    near = NearDuplicates(forbidden) if cfg.near_duplicates else None
    training = existing["train_pool"] + existing["val_pool"]
    training_requests = {t["request"] for t in training}
    train_sigs = {t["graph_signature"] for t in existing["train_pool"]}
    seen = held_out_tools_in(training)
    ids = {t["id"] for t in used}
    out: dict[str, list[dict]] = {}
    audit: dict = {"first_seed": cfg.first_seed, "existing_splits": sorted(existing),
                   "existing_tasks": len(used), "splits": {}}
    fresh = NearDuplicates(set())
    for spec in cfg.specs():
        comp = scale_composition(PAPER_COMPOSITION[spec.name], getattr(cfg, spec.name))
        tasks, dropped = draw_split(spec, comp, near if near is not None else forbidden)
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
        if near is not None:
            audit["splits"][spec.name].update(near_duplicate_audit(spec.name, tasks, near, fresh))
    if near is not None:
        audit["near_duplicates"] = ("a request is dropped when it equals an existing one with case and spacing ignored, "
                                    "or has the same words in any order (ccl.data.fresh_pool.NearDuplicates)")
    return out, audit


def near_duplicate_audit(split: str, tasks: list[dict], existing: NearDuplicates, fresh: NearDuplicates) -> dict:
    """The split's final requests (after renaming) against every existing request and the fresh tasks drawn
    before them. A near-duplicate of an existing request is refused; one within the fresh tasks (two fresh
    tasks asking the same thing) is counted, not dropped: it leaks nothing from training."""
    repeats = [t["id"] for t in tasks if t["request"] in existing]
    if repeats:
        raise FreshPoolError(f"{split}: {len(repeats)} fresh request(s) are near-duplicates of existing ones (case, "
                             f"spacing and word order ignored), e.g. {repeats[0]}")
    within = 0
    for t in tasks:
        within += t["request"] in fresh
        fresh.add(t["request"])
    return {"near_duplicates_of_existing": 0, "near_duplicates_within_fresh": within}
