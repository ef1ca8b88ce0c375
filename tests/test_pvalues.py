"""Every p-value the summaries store is exact and unrounded (issue 54): none is 0 (an exact p never is), and
Holm recomputed from the stored p-values of each family gives the stored Holm values."""
from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest
from statsmodels.stats.multitest import multipletests
from test_analysis import configs_of, run

from ccl.analysis.contrasts import contrast_family
from ccl.analysis.runs import AnalyzeConfig
from ccl.vocabulary import Contrast

ROOT = Path(__file__).resolve().parents[1]
P_KEY = re.compile(r"p|p_holm|\w+_p")  # p, p_holm, spearman_p, ...
NOT_P = {"top_p"}  # a decoding setting, not a p-value
# the summaries that hold tests: scanning must find p-values in each, or it found nothing to check
WITH_TESTS = {"results/summary.json", "results/replay_summary.json", "results/study2/summary.json",
              "results/bfcl/summary.json"}


def committed_json() -> dict[str, Any]:
    """Every JSON file under results/ that git tracks, by path."""
    paths = subprocess.run(["git", "ls-files", "results/*.json"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    return {p: json.loads((ROOT / p).read_text(encoding="utf-8")) for p in paths}


def p_values(obj: Any, where: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every p-value field in ``obj``."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if P_KEY.fullmatch(k) and k not in NOT_P:
                yield f"{where}.{k}", v
            yield from p_values(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from p_values(v, f"{where}[{i}]")


def holm_families(obj: Any, where: str = "", size: int | None = None) -> Iterator[tuple[str, list[dict], int]]:
    """(path, rows, family size) of every Holm family: a list of rows that carry ``p_holm``, split by ``ruler``
    where the rows name one (the learning arms' table: Holm within each ruler's rows); the size is the
    enclosing block's ``family_size`` when it has one (a contrast not computed enters Holm with p = 1)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from holm_families(v, f"{where}.{k}", obj.get("family_size"))
    elif isinstance(obj, list) and obj and all(isinstance(r, dict) and "p_holm" in r for r in obj):
        for ruler in dict.fromkeys(r.get("ruler") for r in obj):
            rows = [r for r in obj if r.get("ruler") == ruler]
            yield f"{where}" + (f" ({ruler})" if ruler else ""), rows, size or len(rows)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from holm_families(v, f"{where}[{i}]")


SUMMARIES = committed_json()


def test_every_summary_with_tests_is_scanned():
    holding = {path for path, data in SUMMARIES.items() if any(True for _ in p_values(data))}
    assert WITH_TESTS <= holding


@pytest.mark.parametrize("path", sorted(WITH_TESTS))
def test_no_stored_p_value_is_zero(path):
    bad = [(where, p) for where, p in p_values(SUMMARIES[path])
           if p is not None and not (isinstance(p, float) and 0 < p <= 1)]
    assert not bad, f"{path}: p-values that are 0, not floats or out of (0, 1]: {bad[:5]}"


@pytest.mark.parametrize("path", sorted(WITH_TESTS))
def test_holm_from_the_stored_p_values_gives_the_stored_holm_values(path):
    families = list(holm_families(SUMMARIES[path]))
    assert families, f"{path}: no Holm family found"
    for where, rows, size in families:
        raw = [r["p"] for r in rows] + [1.0] * (size - len(rows))
        expected = multipletests(raw, method="holm")[1][:len(rows)]
        for r, want in zip(rows, expected):
            assert math.isclose(r["p_holm"], want, rel_tol=1e-12, abs_tol=0), (
                f"{path}{where}: p_holm {r['p_holm']!r}, Holm of the stored p-values {want!r}")


def test_a_contrast_row_stores_a_tiny_exact_p_unrounded():
    """66 tasks, a solves every one and b none: McNemar's exact p is 2 / 2**66 = 2.7e-20 (6 decimals would
    store 0), and Holm over a family of 3 (two contrasts not computed enter with p = 1) triples it."""
    runs = {"X_s0": run({"eval_id": [1] * 66}), "Y_s0": run({"eval_id": [0] * 66})}
    cfg = AnalyzeConfig(n_resamples=50, n_flips=50, main_splits=("eval_id",), primary_splits=("eval_id",))
    family = [Contrast("X_vs_Y", "X", ("Y",)), Contrast("X_vs_Z", "X", ("Z",)), Contrast("Y_vs_Z", "Y", ("Z",))]
    (row,) = contrast_family(configs_of(runs), cfg, family, "success")["rows"]
    assert row["p"] == row["components"][0]["p"] == 2 / 2 ** 66 == pytest.approx(2.7105e-20, rel=1e-4)
    assert row["p_holm"] == 3 * 2 / 2 ** 66 and row["significant"]
    assert json.loads(json.dumps(row))["p"] == row["p"]  # the JSON the summary is written as keeps it exact
