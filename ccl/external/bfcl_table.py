"""The BFCL table: each configuration's accuracy per category with Wilson intervals and what its turns
were (calls, final answers, unparseable text, turns cut at the token cap), and paired comparisons
with A_base on the same questions.

Scopes: each category, and ``ast``, the questions of the four categories that need calls (simple,
multiple, parallel, parallel_multiple) pooled, each question counting once. Where every category draws
the same number of questions (the cpu and smoke profiles) that equals BFCL's unweighted mean of the
four; where they differ (every question: simple has 400, the others 200) it weighs simple double, and
``category_mean`` gives BFCL's unweighted mean beside it. Irrelevance is read beside how the turns went,
never alone: a model that never calls scores 100% on it.

The comparisons are exploratory (nothing about BFCL was pre-registered): every configuration but the
oracle (100% by construction) against A_base, Holm-adjusted over every comparison in the table, one
family.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable

import numpy as np

from ..stats.binomial import wilson
from ..stats.multiple import holm
from ..stats.paired import paired_difference, sign_flip_lattice
from ..vocabulary import ORACLE, STUDENT_BASE

AST = "ast"  # the pooled scope of the call categories
KINDS = ("calls", "final", "unparseable")
FLAGS = ("unread_json", "arguments_not_object")  # ccl.external.bfcl_check.flags


def _cell(rows: list[dict]) -> dict:
    n, k = len(rows), sum(r["valid"] for r in rows)
    low, high = wilson(k, n)
    kinds = Counter(r["kind"] for r in rows)
    cats = sorted({r["category"] for r in rows})
    rates = [sum(r["valid"] for r in rows if r["category"] == c) / sum(r["category"] == c for r in rows) for c in cats]
    return {"n": n, "correct": k, "rate": k / n, "low": low, "high": high, "category_mean": sum(rates) / len(rates),
            **{kind: kinds.get(kind, 0) for kind in KINDS}, "cut": sum(r["cut"] for r in rows),
            **{flag: sum(r[flag] for r in rows) for flag in FLAGS}}


def scopes(categories: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Scope name -> the categories it pools: each category, then ``ast`` when a call category is drawn."""
    cats = tuple(categories)
    out = {c: (c,) for c in cats}
    calls = tuple(c for c in cats if c != "irrelevance")
    if calls:
        out[AST] = calls
    return out


def config_cells(verdicts: list[dict], categories: Iterable[str]) -> dict[str, dict]:
    """One configuration's cell per scope."""
    return {scope: _cell([v for v in verdicts if v["category"] in cats])
            for scope, cats in scopes(categories).items()}


def _outcomes(verdicts: list[dict], cats: tuple[str, ...], order: list[str]) -> np.ndarray:
    valid = {v["id"]: v["valid"] for v in verdicts if v["category"] in cats}
    return np.array([float(valid[i]) for i in order if i in valid])


def paired_rows(by_config: dict[str, list[dict]], categories: Iterable[str], seed: int = 0) -> list[dict]:
    """Every configuration but the oracle against A_base in every scope, on the same questions: difference of
    accuracy (points), 95% task-bootstrap interval, exact two-sided sign-flip p (McNemar's exact test
    for 0/1 outcomes), Holm over all rows, and the questions each side alone got right."""
    if STUDENT_BASE not in by_config:
        return []
    base = by_config[STUDENT_BASE]
    order = [v["id"] for v in base]
    rows = []
    for name, verdicts in by_config.items():
        if name in (STUDENT_BASE, ORACLE):
            continue
        if sorted(v["id"] for v in verdicts) != sorted(order):
            raise ValueError(f"{name} answered other questions than {STUDENT_BASE}; rerun both on one sample")
        for scope, cats in scopes(categories).items():
            a, b = _outcomes(verdicts, cats, order), _outcomes(base, cats, order)
            r = paired_difference(a, b, seed=seed)
            rows.append({"config": name, "vs": STUDENT_BASE, "scope": scope, "n": r.n_tasks,
                         "diff": 100 * r.diff, "low": 100 * r.low, "high": 100 * r.high,
                         "p": sign_flip_lattice(a - b, 1),
                         "wins": int(((a == 1) & (b == 0)).sum()), "losses": int(((a == 0) & (b == 1)).sum())})
    for row, adjusted in zip(rows, holm([r["p"] for r in rows]) if rows else []):
        row["p_holm"] = float(adjusted)
    return rows


def error_types(verdicts: list[dict]) -> dict[str, int]:
    """How often each of BFCL's error types occurred (wrong answers only), most frequent first."""
    counts = Counter(v["error_type"] for v in verdicts if not v["valid"])
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0]))))
