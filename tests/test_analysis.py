"""ccl.analysis and scripts/analyze.py: hand-worked tables, alignment errors, determinism, end to end."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ccl.analysis.contrasts import aligned
from ccl.analysis.contrasts import paired as paired_table
from ccl.analysis.intervals import _ratio_bootstrap
from ccl.analysis.runs import (
    AlignmentError,
    AnalyzeConfig,
    ConfigData,
    Matrix,
    RunInput,
    build_configs,
    cell_seed,
    group_runs,
)
from ccl.analysis.summary import build_summary
from ccl.analysis.tables import (
    by_stratum,
    catalogue_ablation,
    diagnostics,
    efficiency,
    leniency,
    pass_k,
    post_hoc_unseen,
    success_by_split,
)
from ccl.artifacts.jsonio import dumps, sha256_file, write_json, write_jsonl
from ccl.stats import hierarchical_bootstrap, holm, paired_difference, task_bootstrap
from ccl.vocabulary import COMPARISONS, parse_run_name

ROOT = Path(__file__).resolve().parents[1]
FAST = AnalyzeConfig(n_resamples=200, n_flips=300)


def row(task: str, split: str, success, **over) -> dict:
    """One episode row; ``over`` sets task attributes or verdict fields."""
    attrs = {"template": "tpl", "family": "select", "depth": 1, "graph_seen": True, "faults": False}
    verdict = {"success": bool(success), "success_writeup": bool(success), "reasons": [], "strict_reasons": [],
               "tool_selection": 1.0, "arg_correct": 1.0, "dependency_safe": True, "strict_schema": True,
               "hallucinated_tools": 0, "unnecessary_calls": 0, "invalid_args": 0, "parse_errors": 0,
               "permission_violations": 0, "forbidden_attempts": 0, "denied_retries": 0, "parallel_ok": None,
               "turns": 2}
    for key, value in over.items():
        (attrs if key in attrs else verdict)[key] = value
    return {"task_id": task, "dataset": split, **attrs, "verdict": verdict}


def run(outcomes: dict[str, list], **over) -> list[dict]:
    """Rows for split -> list of 0/1 outcomes; tasks are t0, t1, ... in each split."""
    return [row(f"t{i}", split, s, **over) for split, seq in outcomes.items() for i, s in enumerate(seq)]


def configs_of(runs: dict[str, list[dict]], metrics: dict | None = None) -> dict[str, ConfigData]:
    return build_configs({name: RunInput(rows, None, (metrics or {}).get(name)) for name, rows in runs.items()})


# Two configurations x 4 tasks on eval_id (and 2 on eval_ood): A_base single run, B two seeds.
BASIC = {
    "A_base": run({"eval_id": [1, 0, 0, 0], "eval_ood": [0, 0]}),
    "B_s0": run({"eval_id": [1, 1, 0, 0], "eval_ood": [1, 1]}),
    "B_s1": run({"eval_id": [1, 0, 0, 0], "eval_ood": [1, 0]}),
}


# ---------------------------------------------------------------- loading and alignment

def test_run_names_group_by_config_in_seed_order():
    assert parse_run_name("B_s2") == ("B", 2) and parse_run_name("C_matched_s0") == ("C_matched", 0)
    assert parse_run_name("A_base") == ("A_base", None) and parse_run_name("C_s") == ("C_s", None)
    groups = group_runs(["C_s10", "A_base", "C_s2", "C_s0", "C_matched_s0"])
    assert groups == {"C": ("C_s0", "C_s2", "C_s10"), "A_base": ("A_base",), "C_matched": ("C_matched_s0",)}
    with pytest.raises(AlignmentError, match=r"B.*\['B', 'B_s0'\]"):
        group_runs(["B", "B_s0"])


def test_configs_ordered_trained_flag_and_matrices():
    configs = configs_of({"oracle": BASIC["A_base"], "Z_extra": BASIC["A_base"], "C_s0": BASIC["B_s0"], **BASIC})
    assert list(configs) == ["A_base", "B", "C", "oracle", "Z_extra"]
    b, c = configs["B"], configs["C"]
    assert b.runs == ("B_s0", "B_s1") and b.trained and b.seeds == 2
    assert c.trained and c.seeds == 1 and not configs["A_base"].trained  # one seed still counts as trained
    assert b.splits["eval_id"].task_ids == ("t0", "t1", "t2", "t3")
    np.testing.assert_array_equal(b.splits["eval_id"].success, [[1, 1, 0, 0], [1, 0, 0, 0]])


def test_runs_of_a_config_must_share_tasks_per_split():
    other = run({"eval_id": [1, 1, 0], "eval_ood": [1, 1]})
    with pytest.raises(AlignmentError, match=r"configuration B: runs B_s0 and B_s1 differ on split eval_id.*t3"):
        configs_of({"B_s0": BASIC["B_s0"], "B_s1": other})
    with pytest.raises(AlignmentError, match=r"run B_s0 has split eval_ood but run B_s1 does not"):
        configs_of({"B_s0": BASIC["B_s0"], "B_s1": run({"eval_id": [0, 0, 0, 0]})})
    with pytest.raises(AlignmentError, match=r"run A_base: task t0 appears twice in split eval_id"):
        configs_of({"A_base": BASIC["A_base"] + [row("t0", "eval_id", 1)]})
    changed = run({"eval_id": [1, 0, 0, 0], "eval_ood": [1, 0]}, family="chain")
    with pytest.raises(AlignmentError, match=r"B_s0 and B_s1 disagree on the task attribute 'family'"):
        configs_of({"B_s0": BASIC["B_s0"], "B_s1": changed})


def test_configs_must_share_tasks_for_a_paired_test():
    configs = configs_of({"A_base": BASIC["A_base"], "B_s0": run({"eval_id": [1, 1, 1], "eval_ood": [1, 1]})})
    with pytest.raises(AlignmentError, match=r"B and A_base were evaluated on different tasks in split eval_id"):
        paired_table(configs, FAST)
    # Same task set in another column order: realigned by task id.
    a = configs_of({"A_base": BASIC["A_base"]})["A_base"]
    m = a.splits["eval_id"]
    rev = m.select(np.ones(4, bool))
    rev = Matrix(rev.task_ids[::-1], {k: v[:, ::-1] for k, v in rev.values.items()}, rev.strata)
    flipped = ConfigData("X", ("X",), False, {"eval_id": rev})
    xa, xb = aligned(a, flipped, "eval_id")
    np.testing.assert_array_equal(xa, xb)


# ---------------------------------------------------------------- tables

def test_success_by_split_hand_worked():
    configs = configs_of(BASIC)
    table = success_by_split(configs, FAST)
    a, b = table["rows"]
    assert (a["config"], a["seeds"], a["ci"]) == ("A_base", 1, "task")
    assert (b["config"], b["seeds"], b["ci"]) == ("B", 2, "hierarchical")
    assert a["eval_id"]["mean"] == 25.0 and a["eval_id"]["n"] == 4
    assert b["eval_id"]["mean"] == 37.5 and b["eval_ood"]["mean"] == 75.0
    assert a["all"]["mean"] == pytest.approx(100 / 6, abs=1e-4) and a["all"]["n"] == 6
    assert b["all"]["mean"] == pytest.approx(100 * 6 / 12, abs=1e-4) and b["all"]["n"] == 6
    assert a["eval_unseen"] is None  # a main split nobody ran
    # The cells are the library's intervals with the cell's own seed.
    ci = hierarchical_bootstrap(configs["B"].splits["eval_id"].success, 200,
                                seed=cell_seed(0, "success", "B", "eval_id"))
    assert b["eval_id"]["low"] == round(ci.low * 100, 4) and b["eval_id"]["high"] == round(ci.high * 100, 4)
    ci = task_bootstrap([1, 0, 0, 0], 200, seed=cell_seed(0, "success", "A_base", "eval_id"))
    assert a["eval_id"]["low"] == round(ci.low * 100, 4)


def test_diagnostics_rates_percent_counts_raw_nulls_skipped():
    rows = [row("t0", "eval_id", 1, arg_correct=1.0, parse_errors=2, dependency_safe=True),
            row("t1", "eval_id", 0, arg_correct=None, parse_errors=0, dependency_safe=False),
            row("t2", "eval_id", 0, arg_correct=0.0, parse_errors=1, dependency_safe=True),
            row("t3", "eval_id", 0, arg_correct=0.5, parse_errors=1, dependency_safe=True),
            row("t0", "eval_catalog_0", 0, parse_errors=9)]  # not a main split: not pooled
    out = diagnostics(configs_of({"A_base": rows}), FAST)["rows"][0]
    assert out["arg_correct"]["mean"] == 50.0 and out["arg_correct"]["n"] == 3
    assert out["dependency_safe"]["mean"] == 75.0 and out["parse_errors"]["mean"] == 1.0
    assert out["parallel_ok"] is None and out["turns"]["mean"] == 2.0 and out["turns"]["n"] == 4
    # Two seeds with nulls in different cells: mean over the non-null cells (1 + 0 + 0.5) / 3.
    s0 = [row("t0", "eval_id", 1, arg_correct=1.0), row("t1", "eval_id", 0, arg_correct=None)]
    s1 = [row("t0", "eval_id", 1, arg_correct=0.0), row("t1", "eval_id", 0, arg_correct=0.5)]
    out = diagnostics(configs_of({"B_s0": s0, "B_s1": s1}), FAST)["rows"][0]
    assert out["arg_correct"]["mean"] == 50.0 and out["arg_correct"]["n"] == 2


def test_ratio_bootstrap_without_nulls_is_the_hierarchical_bootstrap():
    x = np.random.default_rng(3).random((3, 50))
    mine, lib = _ratio_bootstrap(x, 500, 0.05, seed=11), hierarchical_bootstrap(x, 500, 0.05, seed=11)
    assert mine.mean == pytest.approx(lib.mean, abs=1e-12)
    assert mine.low == pytest.approx(lib.low, abs=1e-12) and mine.high == pytest.approx(lib.high, abs=1e-12)
    x[0, :10] = np.nan
    ci = _ratio_bootstrap(x, 500, 0.05, seed=11)
    assert ci.mean == pytest.approx(np.nanmean(x)) and ci.low < ci.mean < ci.high


def test_paired_averages_seeds_per_task_then_tests_and_holm():
    runs = {**BASIC, "A_fewshot": run({"eval_id": [0, 1, 0, 0], "eval_ood": [1, 0]}),
            "C_s0": run({"eval_id": [1, 1, 1, 0], "eval_ood": [1, 1]})}
    table = paired_table(configs_of(runs), FAST)
    names = [(r["comparison"], r["split"]) for r in table["rows"]]
    expected = [f"{a}_vs_{b}" for a, b in COMPARISONS if {a, b} <= {"A_base", "A_fewshot", "B", "C"}]
    assert expected == ["A_fewshot_vs_A_base", "B_vs_A_base", "C_vs_A_base", "B_vs_A_fewshot", "C_vs_A_fewshot",
                        "C_vs_B"]
    assert names == [(c, s) for c in expected for s in ("eval_id", "eval_ood")] and table["n_tests"] == 12
    row_b = table["rows"][2]
    assert (row_b["comparison"], row_b["split"]) == ("B_vs_A_base", "eval_id")
    # B per task over seeds: [1, .5, 0, 0]; A_base [1, 0, 0, 0]; d = [0, .5, 0, 0] -> +12.5 pp, 1 nonzero.
    assert row_b["diff"] == 12.5 and row_b["n"] == 4 and row_b["n_nonzero"] == 1
    ref = paired_difference([1, .5, 0, 0], [1, 0, 0, 0], n_resamples=200, n_flips=300,
                            seed=cell_seed(0, "paired", "B_vs_A_base", "eval_id"))
    assert row_b["p"] == ref.p and row_b["low"] == round(ref.low * 100, 4)
    raw = [paired_difference(*_pair(runs, r), n_resamples=200, n_flips=300,
                             seed=cell_seed(0, "paired", r["comparison"], r["split"])).p for r in table["rows"]]
    assert [r["p_holm"] for r in table["rows"]] == [float(p) for p in holm(raw)]
    assert all(r["significant"] == (r["p_holm"] <= 0.05) for r in table["rows"])


def _pair(runs, r):
    configs = configs_of(runs)
    return aligned(configs[r["a"]], configs[r["b"]], r["split"])


def test_cells_do_not_depend_on_which_other_configs_exist():
    small = build_summary(configs_of(BASIC), FAST)
    big = build_summary(configs_of({**BASIC, "C_s0": BASIC["B_s1"], "oracle": BASIC["B_s0"]}), FAST)
    assert small["success_by_split"]["rows"] == big["success_by_split"]["rows"][:2]
    row = big["paired"]["rows"][0]
    assert row["comparison"] == "B_vs_A_base"
    assert {k: v for k, v in row.items() if k not in ("p_holm", "significant")} == \
        {k: v for k, v in small["paired"]["rows"][0].items() if k not in ("p_holm", "significant")}


def test_strata_counts_and_means():
    a = [row("t0", "eval_id", 1, family="chain", depth=2, graph_seen=True, faults=False),
         row("t1", "eval_id", 0, family="chain", depth=2, graph_seen=False, faults=True),
         row("t2", "eval_id", 1, family="select", depth=1, graph_seen=None, faults=False),
         row("t0", "eval_ood", 0, family="select", depth=5, graph_seen=False, faults=True),
         row("t0", "eval_catalog_5", 1, family="args", depth=3)]  # catalogue: not pooled
    b0 = [dict(r, verdict={**r["verdict"], "success": True}) for r in a]
    b1 = [dict(r, verdict={**r["verdict"], "success": r["task_id"] == "t0"}) for r in a]
    configs = configs_of({"A_base": a, "B_s0": b0, "B_s1": b1})
    fam = by_stratum(configs, FAST, "family")
    assert fam["columns"] == ["config", "seeds", "chain", "select"]
    assert fam["rows"][0]["chain"] == {"mean": 50.0, "n": 2} and fam["rows"][0]["select"] == {"mean": 50.0, "n": 2}
    # B per task: t0 id 1, t1 .5, t2 .5, t0 ood 1 -> chain (1 + .5) / 2, select (.5 + 1) / 2
    assert fam["rows"][1]["chain"] == {"mean": 75.0, "n": 2} and fam["rows"][1]["seeds"] == 2
    depth = by_stratum(configs, FAST, "depth")
    assert depth["columns"] == ["config", "seeds", "1", "2", "5"]
    assert depth["rows"][0]["5"] == {"mean": 0.0, "n": 1}
    seen = by_stratum(configs, FAST, "graph_seen")
    assert seen["columns"] == ["config", "seeds", "False", "True", "null"]
    assert seen["rows"][0]["False"] == {"mean": 0.0, "n": 2} and seen["rows"][0]["null"] == {"mean": 100.0, "n": 1}
    faults = by_stratum(configs, FAST, "faults")
    assert faults["columns"] == ["config", "seeds", "no", "yes"] and "not-found" in faults["note"]
    assert faults["rows"][0]["yes"] == {"mean": 0.0, "n": 2} and faults["rows"][0]["no"] == {"mean": 100.0, "n": 2}


def test_post_hoc_unseen_excludes_flagged_templates_beside_preregistered():
    rows = [row(f"t{i}", "eval_unseen", s, template=t) for i, (s, t) in
            enumerate([(0, "un_timezone"), (0, "un_timezone"), (1, "un_stock"), (0, "un_stock"), (1, "un_x")])]
    configs = configs_of({"A_base": rows, "B_s0": run({"eval_id": [1]})})
    table = post_hoc_unseen(configs, FAST)
    assert table["post_hoc"] is True and "POST HOC" in table["note"] and len(table["rows"]) == 1  # B has no unseen
    r = table["rows"][0]
    assert r["eval_unseen"]["mean"] == 40.0 and r["eval_unseen"]["n"] == 5
    assert r["eval_unseen_excluding_flagged"]["mean"] == pytest.approx(200 / 3, abs=1e-4)
    assert r["eval_unseen_excluding_flagged"]["n"] == 3 and r["n_excluded"] == 2
    assert r["eval_unseen"] == success_by_split(configs, FAST)["rows"][0]["eval_unseen"]
    other = post_hoc_unseen(configs, AnalyzeConfig(n_resamples=200, flagged_templates=["un_stock", "un_x"]))
    assert other["rows"][0]["eval_unseen_excluding_flagged"]["mean"] == 0.0 and other["rows"][0]["n_excluded"] == 3


def test_catalogue_ablation_orders_k_numerically():
    a = run({"eval_catalog_12": [1, 0], "eval_catalog_5": [1, 1], "eval_catalog_0": [0, 0], "eval_id": [1]})
    table = catalogue_ablation(configs_of({"A_base": a, "B_s0": run({"eval_id": [1]})}), FAST)
    assert table["columns"] == ["config", "seeds", "ci", "eval_catalog_0", "eval_catalog_5", "eval_catalog_12"]
    assert table["k"] == {"eval_catalog_0": 0, "eval_catalog_5": 5, "eval_catalog_12": 12}
    assert [r["config"] for r in table["rows"]] == ["A_base"]
    assert table["rows"][0]["eval_catalog_12"]["mean"] == 50.0
    assert catalogue_ablation(configs_of({"A_base": run({"eval_id": [1]})}), FAST)["rows"] == []


def trial_rows(outcomes: dict[str, list[list[int]]]) -> list[dict]:
    """split -> per-task list of trial outcomes."""
    return [{**row(f"t{i}", split, s), "trial": k} for split, tasks in outcomes.items()
            for i, trials in enumerate(tasks) for k, s in enumerate(trials)]


def test_pass_k_from_trials():
    trials = trial_rows({"eval_id": [[1, 1, 0], [1, 1, 1]], "eval_ood": [[0, 0, 0]]})
    configs = build_configs({"A_base": RunInput(run({"eval_id": [1, 1]}), trials)})
    rows = pass_k(configs, FAST)["rows"]
    assert [(r["split"], r["trials"], r["n"]) for r in rows] == [("eval_id", 3, 2), ("eval_ood", 3, 1), ("all", 3, 3)]
    # eval_id: task 0 has c=2 of n=3, task 1 c=3: pass^1 (2/3 + 1)/2, pass^2 (1/3 + 1)/2, pass^3 (0 + 1)/2
    assert rows[0]["pass^1"] == pytest.approx(250 / 3, abs=1e-4)
    assert rows[0]["pass^2"] == pytest.approx(200 / 3, abs=1e-4)
    assert rows[0]["pass^3"] == 50.0 and rows[0]["pass^4"] is None
    assert rows[2]["pass^1"] == pytest.approx(100 * (2 / 3 + 1) / 3, abs=1e-4)
    # Two seeds: the mean of each run's pass^k.
    other = trial_rows({"eval_id": [[0, 0, 0], [1, 1, 1]]})
    first = trial_rows({"eval_id": [[1, 1, 0], [1, 1, 1]]})
    configs = build_configs({"B_s0": RunInput(run({"eval_id": [1, 1]}), first),
                             "B_s1": RunInput(run({"eval_id": [1, 1]}), other)})
    b = pass_k(configs, FAST)["rows"][0]
    assert b["runs"] == 2 and b["pass^1"] == pytest.approx((250 / 3 + 50) / 2, abs=1e-4)
    empty = pass_k(configs_of(BASIC), FAST)
    assert empty["rows"] == [] and "No repeated sampled trials" in empty["note"]


def test_pass_k_trials_must_be_complete():
    bad = trial_rows({"eval_id": [[1, 1, 0], [1, 1]]})
    with pytest.raises(AlignmentError, match=r"run A_base, split eval_id: task t1 has trials \[0, 1\]"):
        build_configs({"A_base": RunInput(run({"eval_id": [1, 1]}), bad)})
    no_index = [{k: v for k, v in r.items() if k != "trial"} for r in trial_rows({"eval_id": [[1]]})]
    with pytest.raises(ValueError, match="integer 'trial' field"):
        build_configs({"A_base": RunInput(run({"eval_id": [1]}), no_index)})


def test_efficiency_means_over_seeds():
    def metrics(mem, tps):
        return {"model": "m", "backend": "torch", "adapter": None,
                "efficiency": {"peak_mem_gb": mem, "wall_s": 10.0, "episodes": 4, "mean_turns": 2.0,
                               "gen_tok_per_s": tps, "mean_latency_s": 1.0}}
    configs = configs_of(BASIC, {"B_s0": metrics(3.0, 90.0), "B_s1": metrics(4.0, None), "A_base": metrics(2.0, 80.0)})
    rows = efficiency(configs)["rows"]
    assert rows[1]["config"] == "B" and rows[1]["runs"] == 2
    assert rows[1]["peak_mem_gb"] == 3.5 and rows[1]["gen_tok_per_s"] == 90.0 and rows[1]["model"] == ["m"]
    assert rows[0]["peak_mem_gb"] == 2.0
    assert efficiency(configs_of(BASIC))["rows"][0]["runs"] == 0


def test_summary_is_deterministic_and_complete():
    one = dumps(build_summary(configs_of(BASIC), FAST, {"x": "abc"}))
    two = dumps(build_summary(configs_of(BASIC), FAST, {"x": "abc"}))
    assert one == two
    summary = json.loads(one)
    assert summary["configs"] == ["A_base", "B"] and summary["seeds_per_config"] == {"A_base": 1, "B": 2}
    assert summary["stats"]["n_resamples"] == 200 and summary["inputs"] == {"x": "abc"}
    for table in ("success_by_split", "diagnostics", "paired", "by_family", "by_depth", "by_graph_seen", "by_faults",
                  "catalogue_ablation", "post_hoc_unseen_excluding", "pass_k", "efficiency"):
        assert {"columns", "rows", "note"} <= set(summary[table]), table
    assert dumps(build_summary(configs_of(BASIC), AnalyzeConfig(n_resamples=200, n_flips=300, seed=1))) != one


def test_config_validates_and_takes_lists():
    cfg = AnalyzeConfig(flagged_templates=["a"], main_splits=["eval_id"])
    assert cfg.flagged_templates == ("a",) and cfg.main_splits == ("eval_id",)
    for bad in ({"n_resamples": 0}, {"seed": -1}, {"alpha": 1.0}, {"main_splits": []}):
        with pytest.raises(ValueError):
            AnalyzeConfig(**bad)


# ---------------------------------------------------------------- the script

def _analyze(*args):
    return subprocess.run([sys.executable, "-m", "scripts.analyze", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True)


def test_script_end_to_end(tmp_path):
    runs = tmp_path / "results" / "runs"
    for name, rows in BASIC.items():
        write_jsonl(runs / name / "verdicts.jsonl.gz", rows)
        write_json(runs / name / "metrics.json", {"model": "m", "backend": "torch", "adapter": None,
                                                 "efficiency": {"peak_mem_gb": 1.0, "gen_tok_per_s": 50.0}})
    write_jsonl(runs / "A_base" / "trials.jsonl.gz", trial_rows({"eval_id": [[1, 0], [1, 1], [0, 0], [0, 0]]}))
    (runs / "half_done").mkdir()  # a run without verdicts.jsonl.gz is not read
    params = tmp_path / "params.yaml"
    params.write_text("profile: smoke\nanalyze:\n  profiles:\n    smoke: {n_resamples: 300, n_flips: 400}\n")
    out1, out2 = tmp_path / "s1.json", tmp_path / "s2.json"
    r = _analyze("--runs", runs, "--out", out1, "--params", params)
    assert r.returncode == 0, r.stderr
    assert "2 paired tests" in r.stdout
    assert _analyze("--runs", runs, "--out", out2, "--params", params).returncode == 0
    assert out1.read_bytes() == out2.read_bytes()
    summary = json.loads(out1.read_text())
    assert summary["profile"] == "smoke" and summary["stats"]["n_resamples"] == 300
    assert summary["configs"] == ["A_base", "B"]
    assert summary["inputs"]["B_s1/verdicts.jsonl.gz"] == sha256_file(runs / "B_s1" / "verdicts.jsonl.gz")
    assert set(summary["inputs"]) == {f"{n}/{f}" for n in BASIC for f in ("verdicts.jsonl.gz", "metrics.json")} | \
        {"A_base/trials.jsonl.gz"}
    assert summary["pass_k"]["rows"][0]["pass^2"] == 25.0
    assert summary["success_by_split"]["rows"][1]["eval_id"]["mean"] == 37.5
    # No section for analyze in params: the defaults apply.
    params.write_text("profile: smoke\n")
    r = _analyze("--runs", runs, "--out", out2, "--params", params)
    assert r.returncode == 0 and json.loads(out2.read_text())["stats"]["n_resamples"] == 4000


def test_script_errors(tmp_path):
    r = _analyze("--runs", tmp_path / "nothing", "--out", tmp_path / "s.json")
    assert r.returncode == 2 and "nothing" in r.stderr and "evaluate stage" in r.stderr
    write_jsonl(tmp_path / "runs" / "B_s0" / "verdicts.jsonl.gz", BASIC["B_s0"])
    write_jsonl(tmp_path / "runs" / "B_s1" / "verdicts.jsonl.gz", run({"eval_id": [1]}))
    r = _analyze("--runs", tmp_path / "runs", "--out", tmp_path / "s.json")
    assert r.returncode == 2 and "runs B_s0 and B_s1 differ on split eval_id" in r.stderr
    params = tmp_path / "params.yaml"
    params.write_text("profile: cpu\nanalyze: {n_boot: 3}\n")
    r = _analyze("--runs", tmp_path / "runs", "--params", params)
    assert r.returncode == 2 and "n_boot" in r.stderr


def test_leniency_table_reports_both_definitions_and_the_paired_gap():
    # strict: 1 of 4; the write-up's definition: 3 of 4 (two episodes only it counts)
    rows = [row(f"t{i}", "eval_id", s, success_writeup=w) for i, (s, w) in enumerate([(1, 1), (0, 1), (0, 1), (0, 0)])]
    configs = build_configs({"B_s0": RunInput(rows)})
    table = leniency(configs, AnalyzeConfig(n_resamples=200, main_splits=("eval_id",)))
    by_split = {r["split"]: r for r in table["rows"]}
    assert set(by_split) == {"eval_id", "all"}
    r = by_split["eval_id"]
    assert (r["strict"]["mean"], r["writeup"]["mean"], r["gap"]["mean"]) == (25.0, 75.0, 50.0)
    assert r["episodes_gap"] == 2 and r["gap"]["n"] == 4
    assert 0.0 <= r["gap"]["low"] <= 50.0 <= r["gap"]["high"] <= 100.0


# ---------------------------------------------------------------- primary contrasts

def test_primary_contrasts_pool_primary_splits_and_use_an_intersection_union_test():
    from ccl.analysis.contrasts import primary

    cfg = AnalyzeConfig(n_resamples=200, n_flips=300, primary_splits=("eval_id", "eval_renamed"))
    six = {"eval_id": [1, 1, 1, 0], "eval_renamed": [1, 0], "eval_ood": [1, 1]}
    runs = {"A_base": run({"eval_id": [0, 0, 0, 0], "eval_renamed": [0, 0], "eval_ood": [0, 0]}),
            "C_s0": run(six), "C_s1": run({**six, "eval_id": [1, 1, 0, 0]}),
            "B_s0": run({"eval_id": [1, 0, 0, 0], "eval_renamed": [0, 0], "eval_ood": [0, 0]}),
            "C_matched_s0": run({"eval_id": [0, 0, 0, 0], "eval_renamed": [0, 0], "eval_ood": [1, 1]}),
            "Dmix_s0": run({"eval_id": [1, 1, 1, 1], "eval_renamed": [1, 1], "eval_ood": [0, 0]})}
    table = primary(configs_of(runs), cfg)
    strict = {r["contrast"]: r for r in table["success"]["rows"]}
    assert list(strict) == ["C_vs_A_base", "B_vs_C_matched", "Dmix_vs_best_single"] and table["success"]["complete"]
    c = strict["C_vs_A_base"]
    # C per task over seeds, eval_id then eval_renamed: [1, 1, .5, 0, 1, 0]; A_base all 0 (eval_ood ignored)
    assert c["n"] == 6 and c["diff"] == pytest.approx(100 * 3.5 / 6, abs=1e-3) and c["a_success"] == pytest.approx(
        100 * 3.5 / 6, abs=1e-3)
    assert c["components"][0]["a_wins"] == 4 and c["components"][0]["b_wins"] == 0
    # exact sign flips on d = [1, 1, .5, 0, 1, 0]: only the all-plus and all-minus signs of the 4 nonzero
    # tasks reach |sum| = 3.5, so p = 2 / 16
    assert c["p"] == 0.125
    # the comparator's share (per seed pair) of tasks it solves and C does not: none
    assert c["components"][0]["reverse_share"] == 0.0
    d = strict["Dmix_vs_best_single"]
    # comparators: B pooled 1/6, C pooled 3.5/6 -> the better single source is C
    assert d["vs"] == "C" and d["diff"] == pytest.approx(100 * 2.5 / 6, abs=1e-3)
    comps = {x["b"]: x for x in d["components"]}
    # Dmix - C = [0, 0, .5, 1, 0, 1]: p = 2 / 8; Dmix - B = [0, 1, 1, 1, 1, 1]: p = 2 / 32; both positive,
    # so the intersection-union p is the larger one
    assert comps["C"]["p"] == 0.25 and comps["B"]["p"] == 0.0625 and d["p"] == 0.25
    assert [r["p_holm"] for r in strict.values()] == [float(p) for p in holm([r["p"] for r in strict.values()])]
    assert table["success_writeup"]["rows"][0]["contrast"] == "C_vs_A_base"


def test_primary_contrasts_skip_what_was_not_evaluated_and_holm_still_counts_three():
    from ccl.analysis.contrasts import primary

    table = primary(configs_of(BASIC), AnalyzeConfig(n_resamples=50, n_flips=50, primary_splits=("eval_id",)))
    assert table["success"]["rows"] == [] and not table["success"]["complete"]
    runs = {"A_base": run({"eval_id": [0, 0, 0, 0, 0, 0]}), "C_s0": run({"eval_id": [1, 1, 1, 1, 1, 0]})}
    only = primary(configs_of(runs), AnalyzeConfig(n_resamples=50, n_flips=50, primary_splits=("eval_id",)))
    (row,) = only["success"]["rows"]
    assert row["p"] == 0.0625 and row["p_holm"] == 3 * 0.0625  # Holm over 3: p, 1, 1


def test_an_intersection_union_contrast_with_opposite_signs_is_never_significant():
    from ccl.analysis.contrasts import primary

    cfg = AnalyzeConfig(n_resamples=50, n_flips=50, primary_splits=("eval_id",))
    ones, zeros = [1] * 8, [0] * 8
    runs = {"B_s0": run({"eval_id": zeros}), "C_s0": run({"eval_id": ones}), "Dmix_s0": run({"eval_id": [1] * 4 + [0] * 4})}
    (row,) = primary(configs_of(runs), cfg)["success"]["rows"]
    comps = {x["b"]: x["diff"] for x in row["components"]}
    assert comps["B"] > 0 > comps["C"] and row["p"] == 1.0 and row["vs"] == "C"


def test_primary_splits_must_name_a_split():
    with pytest.raises(ValueError, match="primary_splits"):
        AnalyzeConfig(primary_splits=())
