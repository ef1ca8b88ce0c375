"""The learning arms' comparisons (issue 40) are a family of their own: ruler 2 and ruler 1 rows, Holm within
each ruler, and the write-up's family untouched."""
from __future__ import annotations

from test_analysis import FAST, configs_of, row

from ccl.analysis.contrasts import paired
from ccl.analysis.learned import learned
from ccl.analysis.runs import AnalyzeConfig, cell_seed
from ccl.stats import holm, paired_difference

CFG = AnalyzeConfig(n_resamples=200, n_flips=300, main_splits=("eval_id",), primary_splits=("eval_id",))


def rows(first: list[int], second: list[int]) -> list[dict]:
    """eval_id tasks t0..t3 with ruler 1's success ``first`` and ruler 2's ``second``."""
    return [{**row(f"t{i}", "eval_id", a), "ruler2": {"success": bool(b)}} for i, (a, b) in enumerate(zip(first, second))]


RUNS = {"A_base": rows([0, 0, 0, 0], [0, 0, 0, 0]),
        "C_s0": rows([1, 0, 0, 0], [1, 0, 0, 0]), "C_s1": rows([1, 0, 0, 0], [1, 0, 0, 0]),
        "C_dagger_s0": rows([1, 1, 0, 0], [1, 0, 0, 0])}


def test_each_arm_against_c_and_the_base_under_both_rulers_with_holm_per_ruler():
    table = learned(configs_of(RUNS), CFG)
    got = [(r["comparison"], r["ruler"], r["diff"], r["n_nonzero"]) for r in table["rows"]]
    # ruler 2: C_dagger [1,0,0,0] = C's -> 0; against A_base +25. Ruler 1: C_dagger [1,1,0,0] -> +25 and +50.
    assert got == [("C_dagger_vs_C", "ruler2", 0.0, 0), ("C_dagger_vs_A_base", "ruler2", 25.0, 1),
                   ("C_dagger_vs_C", "ruler1", 25.0, 1), ("C_dagger_vs_A_base", "ruler1", 50.0, 2)]
    for ruler in ("ruler2", "ruler1"):
        mine = [r for r in table["rows"] if r["ruler"] == ruler]
        assert [r["p_holm"] for r in mine] == [float(p) for p in holm([r["p"] for r in mine])]
    r = table["rows"][3]
    ref = paired_difference([1, 1, 0, 0], [0, 0, 0, 0], n_resamples=200, n_flips=300,
                            seed=cell_seed(0, "learned", "ruler1", "C_dagger_vs_A_base"))
    assert (r["low"], r["high"]) == (round(ref.low * 100, 4), round(ref.high * 100, 4))


def test_the_write_ups_family_ignores_the_learning_arms():
    with_arm = paired(configs_of(RUNS), FAST)
    without = paired(configs_of({k: v for k, v in RUNS.items() if k != "C_dagger_s0"}), FAST)
    assert with_arm == without and not learned(configs_of({"A_base": RUNS["A_base"]}), CFG)["rows"]
