"""Study 3 (docs/preregistration-3.md): its fresh tasks' near-duplicate rule, its design file, its analysis on
hand-worked outcomes, the arms' minutes, the page's conclusions, and that its parameters are the pilot's."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from ccl.analysis.declared import read_design
from ccl.analysis.runs import AnalyzeConfig
from ccl.analysis.study3 import FreshTaskError, Timings, analyze, minutes, seed_stable
from ccl.artifacts.jsonio import write_json, write_jsonl
from ccl.config import load_params, stage_config
from ccl.data.fresh_pool import (FIRST_FRESH_SEED, FreshPoolConfig, FreshPoolError, NearDuplicates, build_fresh_pool,
                                 request_key, request_words)
from ccl.errors import InputError
from ccl.report import study3 as page
from ccl.report.promises import conclusion_problems
from ccl.stages import power
from ccl.world.tasks import generate_task

ROOT = Path(__file__).resolve().parents[1]
STUDY3 = ROOT / "study3"


# ---------------------------------------------------------------- the fresh tasks

def test_near_duplicates_ignore_case_spacing_and_word_order_but_not_other_words():
    assert request_key("Call Bob at 3 PM") == request_key("call bob  at 3pm") == "callbobat3pm"
    assert request_words("Compare the weather in Toronto and Lisbon.") == request_words(
        "compare the weather in lisbon and TORONTO")
    near = NearDuplicates({"Email Ana the report at 3 pm."})
    assert "email ana the report at 3PM." in near  # case and spacing
    assert "Email the report at 3 pm, Ana." in near  # the same words in another order
    assert "Email Ana the report at 4 pm." not in near and "Email Ana the memo at 3 pm." not in near
    assert 42 not in near


def _pool(n: int) -> list[dict]:
    return [generate_task("ch_contact_email", seed, "train") for seed in range(n)]


def test_a_request_differing_only_in_case_is_dropped_only_under_the_near_duplicate_rule():
    """A training request equal to the first eval_id candidate but for its case: study 2's verbatim rule keeps
    the candidate, study 3's drops it."""
    cfg = FreshPoolConfig(eval_id=12, eval_renamed=4, id_seed=8_000_000, renamed_seed=9_000_000)
    fresh, _ = build_fresh_pool(cfg, {"train_pool": _pool(3), "val_pool": []})
    first = fresh["eval_id"][0]
    twin = {**first, "id": "twin", "seed": 0, "request": first["request"].upper()}
    existing = {"train_pool": _pool(3) + [twin], "val_pool": []}
    verbatim, _ = build_fresh_pool(cfg, existing)
    assert first["request"] in {t["request"] for t in verbatim["eval_id"]}
    strict = FreshPoolConfig(**{**cfg.__dict__, "near_duplicates": True})
    near, audit = build_fresh_pool(strict, existing)
    kept = {request_key(t["request"]) for t in near["eval_id"]}
    assert request_key(first["request"]) not in kept
    assert audit["splits"]["eval_id"]["dropped_for_overlap"] >= 1 and "near_duplicates" in audit


def test_the_fresh_ranges_are_refused_when_an_existing_task_reaches_them_or_they_overlap():
    cfg = FreshPoolConfig(eval_id=2, eval_renamed=2, id_seed=8_000_000, renamed_seed=9_000_000, near_duplicates=True)
    reaching = {**_pool(1)[0], "id": "x", "seed": 8_000_000}
    with pytest.raises(FreshPoolError, match="8000000"):
        build_fresh_pool(cfg, {"train_pool": [reaching], "val_pool": []})
    with pytest.raises(ValueError, match="1,000,000 apart"):
        FreshPoolConfig(id_seed=8_000_000, renamed_seed=8_500_000)


def test_study_2s_fresh_pool_keeps_its_ranges_and_verbatim_rule_by_default():
    cfg = FreshPoolConfig()
    assert [s.seed_start for s in cfg.specs()] == [FIRST_FRESH_SEED, 7_000_000] and not cfg.near_duplicates
    study2, _ = stage_config(load_params(ROOT / "study2" / "params.yaml"), "fresh_pool", FreshPoolConfig, "cpu")
    assert study2 == FreshPoolConfig(eval_id=216, eval_renamed=144)


def test_study_3s_committed_tasks_are_fresh_and_no_near_duplicate_of_any_earlier_split():
    cfg, _ = stage_config(load_params(STUDY3 / "params.yaml"), "fresh_pool", FreshPoolConfig, "cpu-scale")
    assert (cfg.id_seed, cfg.renamed_seed, cfg.near_duplicates) == (8_000_000, 9_000_000, True)
    audit = json.loads((ROOT / "data" / "study3" / "pool_audit.json").read_text())
    assert "study2/eval_id" in audit["existing_splits"] and audit["first_seed"] == 8_000_000
    earlier = NearDuplicates({json.loads(line)["request"] for p in (ROOT / "data" / "study2" / "tasks").glob("*.jsonl")
                              for line in p.read_text().splitlines()})
    for split, n in (("eval_id", 252), ("eval_renamed", 168)):
        tasks = [json.loads(x) for x in (ROOT / "data" / "study3" / "tasks" / f"{split}.jsonl").read_text().splitlines()]
        assert len(tasks) == n == audit["splits"][split]["tasks"]
        assert all(t["seed"] >= 8_000_000 for t in tasks)
        assert not [t["id"] for t in tasks if t["request"] in earlier]


# ---------------------------------------------------------------- the design

def test_the_committed_design_names_the_pre_registered_families_and_seeds():
    d = read_design(STUDY3 / "design.yaml")
    assert [(c.name, c.a, c.comparators) for c in d.primary] == [
        ("C_dagger_vs_C_plus", "C_dagger", ("C_plus",)), ("C_grpo_sparse_vs_C_plus", "C_grpo_sparse", ("C_plus",))]
    assert [c.name for c in d.secondary] == ["C_dpo_vs_C_plus", "C_plus_vs_C"]
    assert {c: d.seeds(c) for c in d.configs} == {"C": 1, "C_plus": 2, "C_dagger": 2, "C_grpo_sparse": 2, "C_dpo": 1}


def test_a_configuration_with_every_run_excluded_enters_holm_with_p_one(tmp_path):
    _study(tmp_path, OUTCOMES)
    text = DESIGN.replace("C_dagger: {C_dagger_s0: runs/C_dagger_s0, C_dagger_s1: runs/C_dagger_s1}", "C_dagger: {}")
    (tmp_path / "study3" / "design.yaml").write_text(text)
    cfg = AnalyzeConfig(primary_splits=("eval_id",), main_splits=("eval_id",), n_resamples=50)
    s = analyze(tmp_path, read_design(tmp_path / "study3" / "design.yaml"), tmp_path / "tasks", tmp_path / "results", TIMINGS, cfg)
    primary = s["families"]["primary"]
    assert primary["rows"] == [] and not primary["complete"] and "C_dagger" not in s["minutes"]["configs"]


@pytest.mark.parametrize("text, problem", [
    ("configs: {C: {C_s0: a}}\nprimary_contrasts: []\nsecondary_contrasts: []\n", "non-empty list"),
    ("configs: {C: {B_s0: a}}\nprimary_contrasts: [{name: x, a: C, comparators: [D]}]\nsecondary_contrasts: "
     "[{name: y, a: C, comparators: [D]}]\n", "not C_s<seed>"),
    ("configs: {C: {C_s0: a}}\nprimary_contrasts: [{name: x, a: C, comparators: [D]}]\nsecondary_contrasts: "
     "[{name: y, a: C, comparators: [D]}]\n", "names D, not among configs"),
    ("configs: {C: {C_s0: a}}\nprimary_contrasts: [{name: x, a: C}]\nsecondary_contrasts: []\n", "exactly the keys"),
])
def test_a_malformed_design_is_refused_naming_the_problem(tmp_path, text, problem):
    path = tmp_path / "design.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=problem):
        read_design(path)


def test_the_power_stage_reads_the_design_and_rebuilds_the_committed_record():
    record = power.run(STUDY3 / "params.yaml", None, ROOT / "data" / "study3" / "tasks")
    committed = json.loads((ROOT / "results" / "study3" / "power.json").read_text())
    assert record == committed
    assert [r["mde"] for r in record["contrasts"]] == [0.09, 0.09] and record["n"] == 420 and record["family_size"] == 2


# ---------------------------------------------------------------- the analysis, hand-worked

DESIGN = """configs:
  C: {C_s0: runs/C_s0}
  C_plus: {C_plus_s0: runs/C_plus_s0, C_plus_s1: runs/C_plus_s1}
  C_dagger: {C_dagger_s0: runs/C_dagger_s0, C_dagger_s1: runs/C_dagger_s1}
primary_contrasts:
  - {name: C_dagger_vs_C_plus, a: C_dagger, comparators: [C_plus]}
secondary_contrasts:
  - {name: C_plus_vs_C, a: C_plus, comparators: [C]}
"""
TIMINGS = Timings(Path("results/study3/arms"), Path("results/scale/arms/dpo_rollout.json"))
# ruler-3 outcomes on tasks t1..t4 of eval_id (rulers 1 and 2 pass whatever ruler 3 passes)
OUTCOMES = {"C_s0": [1, 0, 0, 0], "C_plus_s0": [1, 1, 0, 0], "C_plus_s1": [1, 0, 0, 0],
            "C_dagger_s0": [1, 1, 1, 0], "C_dagger_s1": [1, 1, 0, 1], "oracle": [1, 1, 1, 1]}


def _study(root: Path, outcomes: dict[str, list[int]]) -> None:
    (root / "study3").mkdir(parents=True)
    (root / "study3" / "design.yaml").write_text(DESIGN)
    tasks = [{**generate_task("ch_contact_email", s, "train"), "id": f"t{s + 1}", "dataset": "eval_id"} for s in range(4)]
    write_jsonl(root / "tasks" / "eval_id.jsonl", tasks)
    for run, xs in outcomes.items():
        rows = [{"split": "eval_id", "task_id": f"t{i + 1}", "family": "chain", "template": "ch_contact_email",
                 "renamed": False, "ruler1": bool(x), "ruler2": bool(x), "ruler3": bool(x), "record": {}}
                for i, x in enumerate(xs)]
        write_jsonl(root / "results" / run / "episodes.jsonl.gz", rows)
    write_json(root / "runs" / "C_plus_s0" / "summary.json", {"train_minutes": 5.0})
    write_json(root / "runs" / "C_plus_s1" / "summary.json", {"train_minutes": 5.2})
    for seed in (0, 1):
        for k, (run, train, wall) in enumerate([(f"C_dagger_i1_s{seed}", 1.5, 12), (f"C_dagger_i2_s{seed}", 1.6, 18),
                                                (f"C_dagger_s{seed}", 1.7, 30)], 1):
            write_json(root / "runs" / run / "summary.json", {"train_minutes": train})
            write_json(root / "results" / "study3" / "arms" / f"dagger_s{seed}_iter{k}.json", {"wall_s": wall})


def test_the_primary_contrast_averages_seeds_per_task_and_tests_exactly(tmp_path):
    """Seed means: C_plus (1, .5, 0, 0), C_dagger (1, 1, .5, .5): d = (0, .5, .5, .5), +37.5 points, 3 tasks won
    and none lost; the exact sign-flip p of three half-unit differences is P(|S| >= 3) = 2/8."""
    _study(tmp_path, OUTCOMES)
    cfg = AnalyzeConfig(primary_splits=("eval_id",), main_splits=("eval_id",), n_resamples=200)
    s = analyze(tmp_path, read_design(tmp_path / "study3" / "design.yaml"), tmp_path / "tasks", tmp_path / "results", TIMINGS, cfg)
    row = s["families"]["primary"]["rows"][0]
    assert (row["diff"], row["p"], row["p_holm"], row["n"], row["seeds_a"]) == (37.5, 0.25, 0.25, 4, 2)
    part = row["components"][0]
    assert (part["a_wins"], part["b_wins"], part["b_success"]) == (3, 0, 37.5)
    # seed by seed: s0 d = (0, 0, 1, 0): +25, one win, McNemar p 1; s1 d = (0, 1, 0, 1): +50, two wins, p 0.5
    assert [(m["diff"], m["a_wins"], m["b_wins"], m["p"]) for m in s["seed_matched"]] == [(25.0, 1, 0, 1.0), (50.0, 2, 0, 0.5)]
    assert s["seed_stable"] == {"C_dagger_vs_C_plus": None}  # p 0.25: not rejected, the rule does not apply
    # the seeds of C_plus disagree on t2, those of C_dagger on t3 and t4
    assert s["seed_disagreement"]["C_plus"]["disagree"] == 1 and s["seed_disagreement"]["C_dagger"]["disagree"] == 2
    sec = s["families"]["secondary"]["rows"][0]  # C_plus (1, .5, 0, 0) - C (1, 0, 0, 0): one half-unit task
    assert (sec["diff"], sec["p"]) == (12.5, 1.0)
    # minutes: C+ (5.0 + 5.2) / 2; DAgger per seed 0.2 + 0.3 + 0.5 rollout and 4.8 training minutes
    m = s["minutes"]
    assert m["configs"] == {"C": 0.0, "C_plus": 5.1, "C_dagger": 5.8}
    assert m["ratio_to_comparator"] == {"C_dagger": round(5.8 / 5.1, 4)} and m["off_budget"] == []


def test_the_oracle_failing_a_fresh_task_stops_the_analysis(tmp_path):
    _study(tmp_path, {**OUTCOMES, "oracle": [1, 1, 0, 1]})
    cfg = AnalyzeConfig(primary_splits=("eval_id",), main_splits=("eval_id",), n_resamples=50)
    with pytest.raises(FreshTaskError, match="t3"):
        analyze(tmp_path, read_design(tmp_path / "study3" / "design.yaml"), tmp_path / "tasks", tmp_path / "results", TIMINGS, cfg)


def test_a_run_off_c_pluss_minutes_by_more_than_a_quarter_is_named(tmp_path):
    _study(tmp_path, OUTCOMES)
    write_json(tmp_path / "runs" / "C_plus_s1" / "summary.json", {"train_minutes": 3.0})  # C+ mean 4.0: DAgger 1.45x
    m = minutes(read_design(tmp_path / "study3" / "design.yaml"), tmp_path, TIMINGS, {})
    assert m["ratio_to_comparator"]["C_dagger"] == 1.45 and m["off_budget"] == ["C_dagger"]


def test_grpo_and_dpo_minutes_are_their_sampling_updates_and_rollout(tmp_path):
    """GRPO: (30 + 10) + (20 + 0) seconds of sampling and updates = 1.0 min; DPO: a 30 s rollout and 4.5 training
    minutes = 5.0 min; a configuration with no rule is refused."""
    from ccl.analysis.study3 import run_minutes

    write_jsonl(tmp_path / "g" / "train_log.jsonl", [{"sample_s": 30, "update_s": 10}, {"sample_s": 20, "update_s": 0}])
    write_json(tmp_path / "g" / "summary.json", {"sampler_load_seconds": 6.0, "sampler_loads": 3})
    write_json(tmp_path / "d" / "summary.json", {"train_minutes": 4.5})
    write_json(tmp_path / TIMINGS.dpo_rollout, {"wall_s": 30})
    grpo = run_minutes("C_grpo_sparse", "C_grpo_sparse_s1", Path("g"), tmp_path, TIMINGS, {})
    assert grpo == {"minutes": 1.0, "steps": 2, "sampler_load_minutes": 0.1, "sampler_loads": 3}
    inputs: dict = {}
    assert run_minutes("C_dpo", "C_dpo_s0", Path("d"), tmp_path, TIMINGS, inputs)["minutes"] == 5.0
    assert sorted(inputs) == ["d/summary.json", "results/scale/arms/dpo_rollout.json"]
    with pytest.raises(ValueError, match="no rule"):
        run_minutes("C_err", "C_err_s0", Path("d"), tmp_path, TIMINGS, {})


def test_seed_matched_rows_pair_runs_by_their_seed_not_their_order(tmp_path):
    """With C_dagger's seed 0 excluded, its seed 1 meets C_plus's seed 1, never C_plus's first run."""
    _study(tmp_path, OUTCOMES)
    text = DESIGN.replace("C_dagger: {C_dagger_s0: runs/C_dagger_s0, C_dagger_s1: runs/C_dagger_s1}",
                          "C_dagger: {C_dagger_s1: runs/C_dagger_s1}")
    (tmp_path / "study3" / "design.yaml").write_text(text)
    cfg = AnalyzeConfig(primary_splits=("eval_id",), main_splits=("eval_id",), n_resamples=50)
    s = analyze(tmp_path, read_design(tmp_path / "study3" / "design.yaml"), tmp_path / "tasks", tmp_path / "results", TIMINGS, cfg)
    assert [(m["seed"], m["a_run"], m["b_run"], m["diff"]) for m in s["seed_matched"]] == [
        (1, "C_dagger_s1", "C_plus_s1", 50.0)]


def test_seed_stability_needs_every_seed_on_the_pooled_side():
    family = {"rows": [{"contrast": "x", "diff": 5.0, "significant": True},
                       {"contrast": "y", "diff": -2.0, "significant": True},
                       {"contrast": "z", "diff": 1.0, "significant": False}]}
    matched = [{"contrast": "x", "diff": 3.0}, {"contrast": "x", "diff": -1.0}, {"contrast": "y", "diff": -2.5},
               {"contrast": "y", "diff": -0.5}, {"contrast": "z", "diff": 1.0}, {"contrast": "z", "diff": 1.0}]
    assert seed_stable(family, matched) == {"x": False, "y": True, "z": None}  # the rule reads rejected contrasts only


# ---------------------------------------------------------------- the page

def test_each_conclusion_reads_back_against_its_row_and_a_wrong_number_is_caught():
    d = read_design(STUDY3 / "design.yaml")
    row = {"contrast": "C_dagger_vs_C_plus", "a": "C_dagger", "vs": "C_plus", "diff": -6.25, "low": -10.1,
           "high": -2.4, "p_holm": 0.004, "significant": True}
    text = page.conclusion(d.primary[0], row, "primary")
    assert text == ("DAgger was detected to be worse than C+ (`C_dagger_vs_C_plus`, primary): -6.2 points "
                    "[-10.1, -2.4], Holm p 0.004.")
    family = {"primary": {"rows": [row, {**row, "contrast": "C_grpo_sparse_vs_C_plus", "a": "C_grpo_sparse",
                                         "significant": True, "p_holm": 0.3}]}}
    names = [c.name for c in d.primary]
    both = text + " " + page.conclusion(d.primary[1], family["primary"]["rows"][1], "primary")
    assert "GRPO was detected" in both  # a writer that trusted a wrong flag: the check reads the numbers
    problems = conclusion_problems(both, family, names, 0.05, page.ARM_NAMES)
    assert any("C_grpo_sparse_vs_C_plus" in p and "exceeds alpha" in p for p in problems)
    assert not [p for p in problems if "C_dagger_vs_C_plus" in p]


def test_the_page_check_reads_each_family_on_its_own_and_catches_a_wrong_number():
    """Three families with different contrasts on one page: every sentence is read against its own family's row,
    and a sentence whose number is off, or that names no family of the page, is reported."""
    d = read_design(STUDY3 / "design.yaml")
    row = lambda c, a, vs, diff: {"contrast": c, "a": a, "vs": vs, "diff": diff, "low": diff - 4, "high": diff + 4,  # noqa: E731
                                  "p_holm": 0.5, "significant": False}
    summary = {"alpha": 0.05, "seed_stable": {}, "families": {
        "primary": {"rows": [row("C_dagger_vs_C_plus", "C_dagger", "C_plus", -3.0),
                             row("C_grpo_sparse_vs_C_plus", "C_grpo_sparse", "C_plus", 1.0)]},
        "secondary": {"rows": [row("C_dpo_vs_C_plus", "C_dpo", "C_plus", -2.0), row("C_plus_vs_C", "C_plus", "C", 4.0)]},
        "sensitivity_ruler2": {"rows": [row("C_dagger_vs_C_plus", "C_dagger", "C_plus", -1.0),
                                        row("C_grpo_sparse_vs_C_plus", "C_grpo_sparse", "C_plus", 0.0)]}}}
    keys = ("primary", "secondary", "sensitivity_ruler2")
    text = "\n".join(f"- {s}" for k in keys for s in page.conclusions(summary, d, k))
    assert "(`C_dagger_vs_C_plus`, ruler 2 sensitivity): -1.0 points" in text
    assert page.conclusion_check(summary, d, text, keys, "page") == []
    wrong = text.replace("(`C_plus_vs_C`, secondary): +4.0", "(`C_plus_vs_C`, secondary): +9.0")
    assert [p for p in page.conclusion_check(summary, d, wrong, keys, "page") if "C_plus_vs_C" in p and "diff" in p]
    stray = text + "\n- C+ was not detected to beat C (`C_plus_vs_C`, tertiary): +4.0 points [+0.0, +8.0], Holm p 0.5."
    assert any("tertiary" in p for p in page.conclusion_check(summary, d, stray, keys, "page"))


def _page_root(tmp_path: Path) -> page.Files:
    """A study-3 root with everything the page reads, from the hand-worked study above."""
    _study(tmp_path, OUTCOMES)
    write_json(tmp_path / "runs" / "C_s0" / "summary.json", {"adapter_sha256": "c" * 64})
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "prereg.md").write_text("the plan\n")
    (tmp_path / "study3" / "deviations.yaml").write_text("- the test's own deviation\n")
    cfg = AnalyzeConfig(primary_splits=("eval_id",), main_splits=("eval_id",), n_resamples=100)
    summary = analyze(tmp_path, read_design(tmp_path / "study3" / "design.yaml"), tmp_path / "tasks",
                      tmp_path / "results", TIMINGS, cfg)
    write_json(tmp_path / "summary.json", {"profile": "smoke", **summary})
    write_json(tmp_path / "power.json", {"power": 0.8, "reverse_share": 0.125, "contrasts": [
        {"contrast": "C_dagger_vs_C_plus", "mde": 0.09}], "curve": [{"reverse_share": 0.1, "C_dagger_vs_C_plus": 0.085}]})
    write_json(tmp_path / "times.json", {"total_s": 6000.0, "install_s": 90.0, "machine": "a CPU, 2 cores, kernel path amx-bf16",
                                         "commit": "abc1234", "log": "repro.log", "started_utc": "2026-12-06T23:29Z",
                                         "exit_status": 0, "stages": [{"stage": "study3/dvc.yaml:analyze", "seconds": 5.0}]})
    write_json(tmp_path / "audit.json", {"splits": {"eval_id": {"tasks": 4}}})
    return page.Files(prereg="docs/prereg.md", design="study3/design.yaml", summary="summary.json", power="power.json",
                      times="times.json", pool_audit="audit.json", deviations="study3/deviations.yaml",
                      bfcl="bfcl.json", dagger="dagger", dpo_stats="dpo.json")


def test_a_page_built_from_its_artifacts_passes_its_own_check_and_a_stale_one_does_not(tmp_path):
    files = _page_root(tmp_path)
    out = tmp_path / "out"
    built = page.write(tmp_path, files, out / "report.md", out / "report.html", tmp_path / "site" / "index.html")
    assert "- Deviation: the test's own deviation" in built.markdown and "| `C_dagger_vs_C_plus` |" in built.markdown
    assert "C+ 37.5 [" in built.brief and "(2 seeds)" in built.brief
    assert page.check(tmp_path, files, out / "report.md") == []
    (tmp_path / "study3" / "deviations.yaml").write_text("- the test's own deviation\n- one found later\n")
    problems = page.check(tmp_path, files, out / "report.md")
    assert any("differs from a fresh build" in p for p in problems)
    assert any("omit the deviation 'one found later'" in p for p in problems)


def test_the_page_constants_are_the_pre_registrations():
    text = (ROOT / "docs" / "preregistration-3.md").read_text()
    assert f"within {page.BUDGET_MINUTES} minutes on the project's 2-core machines" in " ".join(text.split())
    assert f"about {page.EXPECTED_MINUTES[0]}-{page.EXPECTED_MINUTES[1]} min" in text
    assert re.search(r"more than 25%", text) and "EQUAL_MINUTES = 0.25" in (ROOT / "ccl" / "analysis" / "study3.py").read_text()


# ---------------------------------------------------------------- the parameters are the pilot's

def _yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


def test_study3_plays_and_trains_with_the_cpu_scale_models():
    scale = _yaml(ROOT / "scale" / "params.yaml")["models"]
    for path in (STUDY3 / "params.yaml", STUDY3 / "arms" / "cplus.yaml", STUDY3 / "arms" / "dagger_s0.yaml",
                 STUDY3 / "arms" / "dagger_s1.yaml"):
        assert _yaml(path)["models"] == scale, path
    ev, scale_ev = _yaml(STUDY3 / "params.yaml")["evaluate"]["profiles"]["cpu-scale"], \
        _yaml(ROOT / "scale" / "params.yaml")["evaluate"]["profiles"]["cpu-scale"]
    assert {k: ev[k] for k in scale_ev} == scale_ev


def test_c_plus_and_dagger_are_the_pilots_recipes_cut_to_the_same_minutes():
    pilot_plus = _yaml(ROOT / "scale" / "arms" / "cplus.yaml")["train"]["profiles"]["cpu-scale"]
    plus = _yaml(STUDY3 / "arms" / "cplus.yaml")["train"]["profiles"]["cpu-scale"]
    assert {**pilot_plus, "steps": 64, "checkpoint_every": 16} == plus
    pilot = _yaml(ROOT / "scale" / "arms" / "dagger.yaml")
    for seed in (0, 1):
        mine = _yaml(STUDY3 / "arms" / f"dagger_s{seed}.yaml")
        assert mine["train"]["profiles"]["cpu-scale"] == {**pilot["train"]["profiles"]["cpu-scale"], "steps": 72}
        want = {**pilot["dagger"]["profiles"]["cpu-scale"], "betas": [0.5, 0.25, 0.125], "seed": seed}
        assert mine["dagger"]["profiles"]["cpu-scale"] == want
        assert mine["distill"] == pilot["distill"]


def test_the_pipelines_dagger_items_and_evaluated_runs_are_the_arms_files_and_the_design():
    stages = _yaml(STUDY3 / "dvc.yaml")["stages"]
    rollouts, trains = stages["dagger_rollout"]["foreach"], stages["dagger_train"]["foreach"]
    for seed in (0, 1):
        its = _yaml(STUDY3 / "arms" / f"dagger_s{seed}.yaml")["dagger_iterations"]
        mine = [r for r in rollouts if r["seed"] == seed]
        assert [(r["iteration"], r["base"]) for r in mine] == [(i["iteration"], i["base"]) for i in its]
        assert [r["policy"].rsplit("/", 1)[1] for r in mine] == [i["policy"] for i in its]
        assert [t["run"] for t in trains if t["seed"] == seed] == [i["run"] for i in its]
    design = read_design(STUDY3 / "design.yaml")
    assert stages["evaluate_run"]["foreach"] == design.runs
    assert set(stages["bfcl_run"]["foreach"]) == {r for r in design.runs if r.endswith("_s0")}
