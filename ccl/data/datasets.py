"""Seeded task pools and evaluation splits with leakage control, and the leakage audit.

Leakage controls (reference write-up, section 2.4), enforced while generating:
(i) templates belong to exactly one split (train, ood or unseen); (ii) an evaluation
candidate whose request text occurs verbatim in the training or validation pool is
dropped and counted; (iii) a value-free graph signature is computed per task, its
overlap with training is reported and each evaluation task is tagged graph_seen or
graph_novel; (iv) held-out-domain tools never appear in training, not even as
distractors (checked, an error otherwise); (v) each split has its own seed range and
training uses strict subsets of the evaluation name and city pools.
"""
from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np
from scipy import sparse

from ..world.tasks import FAMILIES, TEMPLATES, generate_task
from ..world.tools import HELD_OUT_TOOLS

# Family composition of each split in the reference write-up (its "Datasets (v1)" table).
# eval_id, eval_renamed and eval_catalog_* have no permission tasks there (all such
# candidates overlapped the training pool verbatim); we keep that composition.
PAPER_COMPOSITION: dict[str, dict[str, int]] = {
    "train_pool": {"select": 750, "args": 250, "chain": 750, "parallel": 250, "recovery": 375,
                   "permission": 250, "approval": 125, "termination": 250},
    "val_pool": {"select": 42, "args": 12, "chain": 36, "parallel": 12, "recovery": 18,
                 "permission": 12, "approval": 6, "termination": 12},
    "eval_id": {"select": 63, "args": 14, "chain": 39, "parallel": 26, "recovery": 32,
                "approval": 13, "termination": 13},
    "eval_ood": {"select": 15, "args": 30, "chain": 60, "parallel": 30, "recovery": 45,
                 "permission": 30, "approval": 15, "termination": 15},
    "eval_unseen": {"select": 30, "chain": 60, "parallel": 30},
    "eval_renamed": {"select": 52, "args": 10, "chain": 30, "parallel": 20, "recovery": 28,
                     "approval": 10, "termination": 10},
    "eval_catalog": {"select": 30, "args": 6, "chain": 18, "parallel": 12, "recovery": 18,
                     "approval": 6, "termination": 6},
}


@dataclass(frozen=True)
class SplitSpec:
    name: str
    templates: str  # template split drawn from: train | ood | unseen
    pool: str  # entity pool: train | eval
    seed_start: int  # each split has its own seed range (control v)
    rename: str | None = None  # alias vocabulary, or None
    rename_fraction: float = 1.0  # share of tasks renamed when rename is set
    distractors: int | None = None  # fixed distractor count, or None for 2 to 6
    composition: str = ""  # key of PAPER_COMPOSITION (defaults to name)


def split_specs(rename_fraction: float, catalog_sizes: Iterable[int]) -> list[SplitSpec]:
    specs = [
        SplitSpec("train_pool", "train", "train", 0, "train", rename_fraction),
        SplitSpec("val_pool", "train", "train", 500_000, "train", rename_fraction),
        SplitSpec("eval_id", "train", "eval", 1_000_000),
        SplitSpec("eval_ood", "ood", "eval", 2_000_000),
        SplitSpec("eval_unseen", "unseen", "eval", 3_000_000),
        SplitSpec("eval_renamed", "train", "eval", 4_000_000, "heldout"),
    ]
    specs += [SplitSpec(f"eval_catalog_{k}", "train", "eval", 5_000_000, distractors=k,
                        composition="eval_catalog") for k in catalog_sizes]
    return specs


def scale_composition(paper: dict[str, int], total: int) -> dict[str, int]:
    """Largest-remainder scaling of a family composition to ``total`` tasks."""
    n = sum(paper.values())
    exact = {f: c * total / n for f, c in paper.items()}
    out = {f: int(v) for f, v in exact.items()}
    for f in sorted(exact, key=lambda f: (-(exact[f] - out[f]), FAMILIES.index(f)))[: total - sum(out.values())]:
        out[f] += 1
    return {f: c for f, c in out.items() if c}


def _family_templates(split: str, family: str) -> list[str]:
    return sorted(n for n, t in TEMPLATES.items() if t.split == split and t.family == family)


MAX_CONSECUTIVE_DROPS = 50  # a template that only repeats training requests retires after this


def draw_split(spec: SplitSpec, composition: dict[str, int],
               forbidden_requests: set[str]) -> tuple[list[dict], int]:
    """Generate a split: per family, round-robin over its templates with seeds counting
    up from the split's range, skipping candidates whose request occurs in
    ``forbidden_requests``; then rename the split's share of tasks. Returns the tasks
    and the number of candidates dropped for overlap."""
    tasks: list[dict] = []
    dropped = 0
    for family in FAMILIES:
        quota = composition.get(family, 0)
        names = _family_templates(spec.templates, family)
        if quota and not names:
            raise ValueError(f"{spec.name}: no {spec.templates} template in family {family}")
        cursor = {n: spec.seed_start for n in names}
        live = list(names)
        got = 0
        while got < quota:
            if not live:
                raise ValueError(f"{spec.name}: cannot fill {quota} {family} tasks without "
                                 f"verbatim overlap with training")
            for name in list(live):
                if got == quota:
                    break
                for _ in range(MAX_CONSECUTIVE_DROPS):
                    seed = cursor[name]
                    cursor[name] += 1
                    task = generate_task(name, seed, spec.pool, distractors=spec.distractors)
                    if task["request"] not in forbidden_requests:
                        tasks.append(task)
                        got += 1
                        break
                    dropped += 1
                else:  # this template only repeats training requests: let its siblings fill
                    live.remove(name)
    tasks = [{**t, "dataset": spec.name} for t in _rename(spec, tasks)]
    # Seeded shuffle: stages use prefixes (the first n training tasks offered to the
    # teacher, the first k tasks of an evaluation split), and a prefix of the
    # family-by-family generation order would hold one family only.
    # The catalogue-size splits share one order, so their prefixes hold the same base tasks.
    random.Random(f"order|{spec.composition or spec.name}|{spec.seed_start}").shuffle(tasks)
    return tasks, dropped


def _rename(spec: SplitSpec, tasks: list[dict]) -> list[dict]:
    """Rename exactly round(fraction * n) tasks, chosen by a seeded sample."""
    if not spec.rename:
        return tasks
    k = round(spec.rename_fraction * len(tasks))
    chosen = set(random.Random(f"rename-select|{spec.name}").sample(range(len(tasks)), k))
    return [generate_task(t["template"], t["seed"], spec.pool, rename=spec.rename,
                          distractors=spec.distractors) if i in chosen else t
            for i, t in enumerate(tasks)]


# ---------------------------------------------------------------- audit
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:[-'.@][a-z0-9]+)*")


def _token_matrix(texts: list[str], vocab: dict[str, int]) -> sparse.csr_matrix:
    rows, cols = [], []
    for i, t in enumerate(texts):
        for tok in set(_TOKEN_RE.findall(t.lower())):
            rows.append(i)
            cols.append(vocab.setdefault(tok, len(vocab)))
    return sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)),
                             shape=(len(texts), max(len(vocab), 1)))


def max_jaccard(queries: list[str], corpus: list[str]) -> np.ndarray:
    """For each query, the highest word-set Jaccard similarity to any corpus text."""
    vocab: dict[str, int] = {}
    c = _token_matrix(corpus, vocab)
    q = _token_matrix(queries, vocab)
    c.resize((c.shape[0], len(vocab)))
    inter = (q @ c.T).toarray()
    sizes_q = np.asarray(q.sum(axis=1)).ravel()[:, None]
    sizes_c = np.asarray(c.sum(axis=1)).ravel()[None, :]
    union = sizes_q + sizes_c - inter
    return (inter / np.maximum(union, 1)).max(axis=1)


def held_out_tools_in(tasks: Iterable[dict]) -> list[str]:
    return sorted({t for task in tasks for t in task["catalogue"]} & set(HELD_OUT_TOOLS))


def audit_split(tasks: list[dict], train: list[dict], train_requests: set[str], dropped: int,
                held_out_seen: list[str]) -> dict:
    train_templates = {t["template"] for t in train}
    train_sigs = {t["graph_signature"] for t in train}
    sims = max_jaccard([t["request"] for t in tasks], [t["request"] for t in train])
    return {
        "tasks": len(tasks),
        "templates": dict(sorted(Counter(t["template"] for t in tasks).items())),
        "request_overlap": sum(t["request"] in train_requests for t in tasks),
        "dropped_for_overlap": dropped,
        "shared_templates": len({t["template"] for t in tasks} & train_templates),
        "graph_signature_overlap": round(float(np.mean([t["graph_signature"] in train_sigs for t in tasks])), 4),
        "held_out_tools_seen_in_train": held_out_seen,
        "request_similarity_max": round(float(sims.max()), 4),
        "request_similarity_p99": round(float(np.percentile(sims, 99)), 4),
    }


def family_counts(rows: Iterable[dict]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["family"]] = counts.get(r["family"], 0) + 1
    return {f: counts[f] for f in FAMILIES if f in counts}


ProgressFn = Callable[[str], None]


@dataclass(frozen=True)
class BuildDatasetsConfig:
    """Sizes of every split; the defaults are the reference write-up's (paper profile)."""

    train_pool: int = 3000  # training tasks (oracle SFT data covers all of them)
    val_pool: int = 150  # validation tasks (oracle validation loss)
    eval_id: int = 200  # new instances of training templates
    eval_ood: int = 240  # the 16 templates never used in training
    eval_unseen: int = 120  # the 4 templates over held-out tool domains
    eval_renamed: int = 160  # training templates, every name from the held-out vocabulary
    eval_catalog: int = 96  # tasks per catalogue-size split
    catalog_sizes: tuple[int, ...] = (0, 5, 12)  # fixed distractor counts
    rename_fraction: float = 0.25  # share of training and validation tasks renamed

    def size(self, split: str) -> int:
        return getattr(self, "eval_catalog" if split.startswith("eval_catalog") else split)


def build_all(cfg: BuildDatasetsConfig, log: ProgressFn = print) -> tuple[dict[str, list[dict]], dict]:
    """Every split, in write order, plus the leakage audit."""
    specs = split_specs(cfg.rename_fraction, cfg.catalog_sizes)
    out: dict[str, list[dict]] = {}
    dropped: dict[str, int] = {}
    forbidden: set[str] = set()
    for spec in specs:
        comp = scale_composition(PAPER_COMPOSITION[spec.composition or spec.name], cfg.size(spec.name))
        out[spec.name], dropped[spec.name] = draw_split(spec, comp, forbidden)
        if spec.name == "val_pool":  # both training-side pools are now fixed
            forbidden = {t["request"] for s in ("train_pool", "val_pool") for t in out[s]}
        log(f"  {spec.name}: {len(out[spec.name])} tasks, {dropped[spec.name]} dropped for overlap")
    training = out["train_pool"] + out["val_pool"]
    seen = held_out_tools_in(training)
    if seen:
        raise AssertionError(f"held-out tools leaked into training catalogues: {seen}")
    train_sigs = {t["graph_signature"] for t in out["train_pool"]}
    audit = {"splits": {}, "held_out_tools_seen_in_train": seen,
             "train_templates": sorted({t["template"] for t in out["train_pool"]})}
    for spec in specs[2:]:
        for t in out[spec.name]:
            t["graph_seen"] = t["graph_signature"] in train_sigs
        audit["splits"][spec.name] = audit_split(out[spec.name], out["train_pool"], forbidden,
                                                 dropped[spec.name], seen)
    return out, audit
