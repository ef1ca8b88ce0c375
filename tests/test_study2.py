"""Study 2 (docs/preregistration-2.md): the fresh pool, C rebuilt without the teacher, the copied
parameters, the analysis's stricter outcome and the page's promises, each against hand-worked cases."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from ccl.analysis.runs import ConfigData, Matrix
from ccl.analysis.study2 import NO_REPEATS, with_no_repeats
from ccl.data.fresh_pool import FIRST_FRESH_SEED, FreshPoolConfig, FreshPoolError, build_fresh_pool
from ccl.data.variants import BuildSFTConfig, build_variants, c_rows
from ccl.report import study2 as page
from ccl.vocabulary import RULER2, STUDY2_CONTRASTS
from ccl.world.tasks import generate_task

ROOT = Path(__file__).resolve().parents[1]
ARM_SECTIONS = ("models", "distill", "build_sft", "train", "dagger", "grpo")


def _pool(n: int, seed0: int, pool: str = "train") -> list[dict]:
    return [generate_task("ch_contact_email", seed0 + i, pool) for i in range(n)]


def test_fresh_pool_draws_new_seeds_and_repeats_no_existing_request():
    existing = {"train_pool": _pool(30, 0), "val_pool": _pool(5, 500_000),
                "eval_id": [generate_task("sel_weather", s, "eval") for s in range(1_000_000, 1_000_010)]}
    splits, audit = build_fresh_pool(FreshPoolConfig(eval_id=12, eval_renamed=8), existing)
    assert [len(splits["eval_id"]), len(splits["eval_renamed"])] == [12, 8]
    seen = {t["request"] for tasks in existing.values() for t in tasks}
    for name, start in (("eval_id", 6_000_000), ("eval_renamed", 7_000_000)):
        assert all(t["seed"] >= start for t in splits[name])
        assert not any(t["request"] in seen for t in splits[name])
        assert audit["splits"][name]["request_overlap_any_existing"] == 0
    again, _ = build_fresh_pool(FreshPoolConfig(eval_id=12, eval_renamed=8), existing)
    assert again == splits  # seeded: the committed files can be rebuilt byte for byte


def test_fresh_pool_refuses_existing_tasks_in_its_seed_range():
    existing = {"train_pool": _pool(3, 0), "val_pool": [generate_task("ch_contact_email", FIRST_FRESH_SEED, "train")]}
    with pytest.raises(FreshPoolError, match="not fresh"):
        build_fresh_pool(FreshPoolConfig(eval_id=2, eval_renamed=2), existing)


def test_c_alone_is_the_c_that_build_variants_draws_after_b():
    pool = _pool(12, 0)
    oracle = {t["id"]: {"task_id": t["id"], "source": "oracle"} for t in pool}
    offered = [t["id"] for t in pool[:10]]
    teacher = [{"task_id": i, "source": "teacher"} for i in offered[:7]]
    cfg = BuildSFTConfig(budget=6, c_full=12, seed=3)
    variants, _ = build_variants(cfg, pool, offered, teacher, oracle)
    assert c_rows(cfg, len(teacher), offered, oracle) == variants["C"]
    # the count of accepted teacher rows moves C's draw: the rebuild needs the published count
    assert c_rows(cfg, 2, offered, oracle) != variants["C"]


def test_study2_copies_the_arms_parameters_unchanged():
    first = yaml.safe_load((ROOT / "params.yaml").read_text())
    second = yaml.safe_load((ROOT / "study2" / "params.yaml").read_text())
    for section in ARM_SECTIONS:
        assert second[section] == first[section], section


def test_study2_pipeline_evaluates_and_judges_every_run_it_trains():
    params = yaml.safe_load((ROOT / "study2" / "params.yaml").read_text())
    stages = yaml.safe_load((ROOT / "study2" / "dvc.yaml").read_text())["stages"]
    trained = [*params["runs"], *params["learned_runs"]]
    assert stages["evaluate_run"]["foreach"] == trained
    assert stages["judge"]["foreach"] == ["oracle", *trained]
    assert stages["grpo_train"]["foreach"] == [r for r in params["learned_runs"] if "grpo" in r]
    arms = {c.a for c in STUDY2_CONTRASTS} | {b for c in STUDY2_CONTRASTS for b in c.comparators}
    assert arms == {r.rsplit("_s", 1)[0] for r in trained}


def test_no_repeats_fails_ruler2_successes_that_repeat_an_answered_call():
    ids = ("t1", "t2", "t3")
    values = {"success": np.array([[1.0, 1.0, 0.0]]), RULER2: np.array([[1.0, 1.0, 0.0]])}
    data = ConfigData("C", ("C_s0",), True, {"eval_id": Matrix(ids, values, {})})
    out = with_no_repeats(data, {"C_s0": {"t1": False, "t2": True, "t3": True}})
    assert out.splits["eval_id"].values[NO_REPEATS].tolist() == [[1.0, 0.0, 0.0]]
    assert out.splits["eval_id"].values[RULER2].tolist() == [[1.0, 1.0, 0.0]]  # ruler 2 itself unchanged


def _root(tmp_path: Path, times: dict, deviations: list[str]) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "preregistration-2.md").write_text("# plan\n")
    (tmp_path / "study2").mkdir()
    (tmp_path / "study2" / "deviations.yaml").write_text(yaml.safe_dump(deviations))
    (tmp_path / "results" / "study2").mkdir(parents=True)
    family = {"rows": [], "family_size": 3, "complete": False}
    summary = {"profile": "cpu", "alpha": 0.05, "configs": {"C": ["C_s0"]}, "success": [], "oracle": {"evaluated": False},
               "families": {RULER2: {"role": "primary", "label": "primary: L1", **family},
                            "success": {"role": "secondary A", "label": "secondary A: L2", **family},
                            "no": {"role": "secondary B", "label": "secondary B: L3", **family}}}
    (tmp_path / "results" / "study2" / "summary.json").write_text(json.dumps(summary))
    (tmp_path / "results" / "study2" / "power.json").write_text(json.dumps({"contrasts": [], "reverse_share": 0.125, "power": 0.8,
                                                                               "curve": []}))
    (tmp_path / "results" / "study2" / "stage_times.json").write_text(json.dumps(times))
    (tmp_path / "data" / "study2").mkdir(parents=True)
    (tmp_path / "data" / "study2" / "pool_audit.json").write_text(json.dumps({"splits": {"eval_id": {"tasks": 4}}}))
    return tmp_path


TIMES = {"install_s": 170.0, "stages": [{"stage": "train@C_s0", "seconds": 595.0}], "total_s": 9300.0,
         "machine": "2-core test", "commit": "abc1234", "log": "repro.log", "started_utc": "2026-12-06T09:00:00Z",
         "exit_status": 0}


def test_the_page_keeps_its_promises_and_names_each_broken_one(tmp_path):
    root = _root(tmp_path, TIMES, ["stage X was rerun after a fix"])
    built = page.build(root).markdown
    assert page.promises(root, built) == []
    assert "The run took 155 min 0 s in all, install included, exceeding the pre-registered budget of 150 minutes" in built
    assert "Deviation: stage X was rerun" in built and "| train@C_s0 | 9 min 55 s |" in built
    broken = built.replace(page.sha256_file(root / "docs" / "preregistration-2.md"), "?")
    broken = broken.replace("Deviation: stage X", "stage X").replace("primary: L1", "primary: other")
    broken = broken.replace("| train@C_s0 | 9 min 55 s |", "| train@C_s0 | 9 min |")
    broken = broken.replace(page.unadjusted_sentence({"alpha": 0.05}), "")
    problems = page.promises(root, broken)
    assert any("stage-time table lacks 1 of its 3 rows" in p for p in problems)
    assert any("intervals are unadjusted" in p for p in problems)
    assert any("SHA-256" in p for p in problems)
    assert any("deviation" in p for p in problems)
    assert any("'primary: L1' appears 0 times" in p for p in problems)


def test_results_without_recorded_stage_times_break_a_promise(tmp_path):
    root = _root(tmp_path, {"recorded": False}, [])
    built = page.build(root).markdown
    assert "Not recorded yet" in built
    assert page.promises(root, built) == [f"study 2 has results but no recorded stage times ({page.TIMES})"]


@pytest.mark.slow
def test_study2_pipeline_commands_run_on_smoke_sizes(tmp_path):
    """Every command study2/dvc.yaml runs, in pipeline order, on the smoke profile in a scratch root:
    the same scripts, flags and relative paths as the real run (DVC resolves the foreach items). The smoke
    profile has one DAgger beta, so the chain stops after its first iteration: the second iteration and the
    last DAgger run's evaluation are left out (the cpu profile runs both)."""
    import os
    import shutil
    import subprocess
    import sys

    import networkx as nx
    from dvc.repo import Repo

    for rel in ("study2/params.yaml", "study2/deviations.yaml", "docs/preregistration-2.md", "runs/val_baseline.json"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    # this smoke chain is not a timed run: the page must say its times are not recorded (the repository's
    # stage_times.json holds the real run's, which would be a false claim here)
    (tmp_path / "results" / "study2").mkdir(parents=True)
    (tmp_path / "results" / "study2" / "stage_times.json").write_text(json.dumps({"recorded": False}))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = lambda cmd: subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True)  # noqa: E731
    built = run(f"{sys.executable} -m scripts.build_datasets --profile smoke --out data/v1")
    assert built.returncode == 0, built.stderr
    repo = Repo(str(ROOT))
    stages = [s for s in nx.topological_sort(repo.index.graph.reverse()) if s.path_in_repo == "study2/dvc.yaml"]
    left_out = {"dagger_rollout@1", "dagger_train@1", "evaluate_run@C_dagger_s0", "judge@C_dagger_s0"}
    for st in stages:
        if st.name in left_out:
            continue
        cmd = st.cmd.replace("python -m", f"{sys.executable} -m", 1)
        cmd += " --profile smoke" if "--params" in cmd else ""
        cmd += " --data data/v1" if "--params" in cmd and "--data" not in cmd and "analyze_study2" not in cmd else ""
        # these two take their paths from scripts/layout.py, which names the repository's: point them here
        cmd += " --runs results/study2/runs --prereg docs/preregistration-2.md --out results/study2/summary.json" \
            if "analyze_study2" in cmd else ""
        cmd += " --root . --out results/study2 --site web/study2" if "report_study2" in cmd else ""
        done = run(cmd)
        assert done.returncode == 0, f"{st.name}: {cmd}\n{done.stderr[-2000:]}"
    summary = json.loads((tmp_path / "results" / "study2" / "summary.json").read_text())
    assert summary["oracle"][RULER2]["failed"] == []
    assert sorted(summary["configs"]) == ["C", "C_grpo_dense", "C_grpo_sparse"]
    page_text = (tmp_path / "results" / "study2" / "report.md").read_text()
    assert "`C_grpo_dense_vs_C_grpo_sparse`" in page_text and "Not recorded yet" in page_text


def test_the_pages_budget_and_expectation_are_the_preregistrations():
    text = " ".join((ROOT / "docs" / "preregistration-2.md").read_text().split())
    assert f"within {page.BUDGET_MINUTES} minutes on the project's 2-core machines" in text
    low, high = page.EXPECTED_MINUTES
    assert f"**about {low}-{high} min**" in text


def test_analysis_on_the_exploratory_arms_matches_counts_taken_from_the_verdicts(tmp_path):
    """study 2's analysis run on the learning arms' exploratory transcripts (the first study's primary
    splits, in git): each contrast's wins, losses and difference recounted straight from the verdict files."""
    import gzip

    from ccl.analysis.runs import AnalyzeConfig
    from ccl.analysis.study2 import analyze

    runs = tmp_path / "runs"
    runs.mkdir()
    names = ["C_s0", "C_dagger_s0", "C_grpo_sparse_s0", "C_grpo_dense_s0", "oracle"]
    for name in names:
        (runs / name).symlink_to(ROOT / "results" / "runs" / name)
    cfg = AnalyzeConfig(n_resamples=200, n_flips=200, main_splits=("eval_id", "eval_renamed"))
    summary = analyze(runs, cfg)

    def ruler2(name: str) -> dict[str, bool]:
        with gzip.open(runs / name / "verdicts.jsonl.gz", "rt") as f:
            rows = [json.loads(line) for line in f]
        return {r["task_id"]: bool(r["ruler2"]["success"]) for r in rows if r["dataset"] in cfg.primary_splits}

    got = {r["contrast"]: r for r in summary["families"][RULER2]["rows"]}
    for c in STUDY2_CONTRASTS:
        a, b = ruler2(f"{c.a}_s0"), ruler2(f"{c.comparators[0]}_s0")
        wins = sum(a[t] and not b[t] for t in a)
        losses = sum(b[t] and not a[t] for t in a)
        row = got[c.name]
        assert (row["components"][0]["a_wins"], row["components"][0]["b_wins"], row["n"]) == (wins, losses, len(a))
        assert row["diff"] == pytest.approx(100 * (wins - losses) / len(a), abs=1e-3)
    # Holm over the three: the smallest p is tripled, and adjusted p never falls below a raw one
    ps = sorted(r["p"] for r in got.values())
    assert min(r["p_holm"] for r in got.values()) == pytest.approx(min(1.0, 3 * ps[0]), abs=1e-6)
    assert summary["oracle"][RULER2]["failed"] == [] and "oracle" not in summary["configs"]


def test_the_readme_block_is_rewritten_and_a_stale_one_is_named(tmp_path):
    root = _root(tmp_path, TIMES, [])
    readme = root / "README.md"
    readme.write_text("# R\n\n<!-- BEGIN:study2-brief -->\nold\n<!-- END:study2-brief -->\ntail\n")
    out = root / "results" / "study2"
    page.write(root, out / "report.md", out / "report.html", root / "index.html", readme)
    text = readme.read_text()
    assert "old" not in text and text.endswith("<!-- END:study2-brief -->\ntail\n")
    assert "It ran once on 2-core test in 155 min 0 s, install included (exceeding the 150-minute budget)." in text
    assert page.check(root, out / "report.md", readme) == []
    readme.write_text(text.replace("155 min 0 s", "15 min"))
    assert page.check(root, out / "report.md", readme) == [f"{readme}: its study2-brief block differs from a fresh build"]


def test_the_two_pipelines_share_only_the_first_studys_data_stages():
    """No stage of the first study depends on a stage of study 2 (so `dvc repro dvc.yaml` never runs study 2,
    and study 2's outputs never make the first study's stale), and study 2 needs of the first study only its
    tasks and oracle episodes (build_datasets) and the untrained student's validation loss (val_baseline)."""
    import networkx as nx
    from dvc.repo import Repo

    graph = Repo(str(ROOT)).index.graph  # an edge runs from a stage to a stage it depends on
    first = [s for s in graph if s.path_in_repo == "dvc.yaml"]
    second = [s for s in graph if s.path_in_repo == "study2/dvc.yaml"]
    assert first and second
    assert not {(s.name, d.name) for s in first for d in nx.descendants(graph, s) if d.path_in_repo != "dvc.yaml"}
    upstream = {d.name for s in second for d in nx.descendants(graph, s) if d.path_in_repo == "dvc.yaml"}
    assert upstream == {"build_datasets", "val_baseline"}


def test_an_attempt_stopped_before_the_run_is_said_beside_it_and_ran_once_is_not(tmp_path):
    stopped = {"deviation": "attempt 1 was stopped by hand", "attempt": "experiments/s2_attempt_1",
               "stopped": "by hand during train@C_s0, before any evaluation"}
    root = _root(tmp_path, TIMES, [stopped, "stage X was rerun after a fix"])
    built = page.build(root)
    assert "ran once" not in built.brief
    assert ("Its one complete run took 155 min 0 s on 2-core test, install included (exceeding the 150-minute "
            "budget); a first attempt (`experiments/s2_attempt_1`) was stopped by hand during train@C_s0, before any "
            "evaluation (see the deviations).") in built.brief
    assert "study 2's one complete run" in built.markdown and "Deviation: attempt 1 was stopped by hand" in built.markdown
    assert page.promises(root, built.markdown) == []
    (root / "study2" / "deviations.yaml").write_text(yaml.safe_dump([{"deviation": "x", "attempt": "y"}]))
    with pytest.raises(page.InputError, match="'attempt' and 'stopped'"):
        page.build(root)


# study 2's primary family as the summary holds it (rounded here; the check reads the words back against it)
FAMILY = {"role": "primary", "label": "primary: L1", "family_size": 3, "complete": True, "rows": [
    {"contrast": "C_dagger_vs_C", "a": "C_dagger", "vs": "C", "diff": -2.7778, "low": -6.9444, "high": 1.3889,
     "p_holm": 0.311416, "significant": False},
    {"contrast": "C_grpo_sparse_vs_C", "a": "C_grpo_sparse", "vs": "C", "diff": -23.3333, "low": -28.0556,
     "high": -18.6111, "p_holm": 3.54e-21, "significant": True},
    {"contrast": "C_grpo_dense_vs_C_grpo_sparse", "a": "C_grpo_dense", "vs": "C_grpo_sparse", "diff": 16.6667,
     "low": 12.5, "high": 20.8333, "p_holm": 0.0123, "significant": True}]}


def _conclusion_problems(text: str) -> list[str]:
    return page.conclusion_problems(text, {"primary": FAMILY}, [c.name for c in STUDY2_CONTRASTS], 0.05,
                                    page.ARM_NAMES)


def test_each_conclusion_says_what_was_detected_and_matches_its_numbers():
    text = "".join(f"- {s}\n" for s in page.conclusions(FAMILY))
    assert text == (
        "- DAgger was not detected to beat C (`C_dagger_vs_C`, primary): -2.8 points [-6.9, +1.4], Holm p 0.3114.\n"
        "- GRPO sparse was detected to be worse than C (`C_grpo_sparse_vs_C`, primary): -23.3 points [-28.1, -18.6], "
        "Holm p < 0.000001.\n"
        "- GRPO dense was detected to beat GRPO sparse (`C_grpo_dense_vs_C_grpo_sparse`, primary): +16.7 points "
        "[+12.5, +20.8], Holm p 0.0123.\n")
    assert _conclusion_problems(text) == []
    dagger, sparse, dense = (f"{c.name} (primary)" for c in STUDY2_CONTRASTS)
    tampered = [  # (the text, its tampered version, what the check must say, naming the contrast)
        ("-2.8 points [-6.9", "+2.8 points [-6.9", f"{dagger} gives diff +2.8"),
        ("DAgger was not detected", "DAgger was detected", f"{dagger} says detected"),
        ("GRPO sparse was detected to be worse than", "GRPO sparse was detected to beat",
         f"{sparse} says GRPO sparse was detected to beat"),
        ("GRPO dense was detected", "GRPO dense was not detected", f"{dense} says not detected"),
        ("Holm p 0.0123", "Holm p 0.123", f"{dense} gives Holm p 0.123"),
        ("beat C (`C_dagger", "beat GRPO dense (`C_dagger", f"{dagger} compares 'DAgger' with 'GRPO dense'"),
        ("- GRPO dense was detected to beat", "- GRPO dense beat", f"0 conclusion sentences on {dense}"),
    ]
    for old, new, said in tampered:
        problems = _conclusion_problems(text.replace(old, new))
        assert any(said in p for p in problems), (old, problems)


def test_a_tampered_readme_brief_fails_the_check_naming_the_contrast(tmp_path):
    """The repository's study 2: its README block passes; a flipped sign or a "detected" for a contrast Holm
    did not reject fails, and the message names the contrast (beside the block's difference from a build)."""
    block = page.blocks((ROOT / "README.md").read_text(encoding="utf-8"))[page.README_BLOCK]
    readme = tmp_path / "README.md"
    written = ROOT / "results" / "study2" / "report.md"

    def check(body: str) -> list[str]:
        readme.write_text(f"<!-- BEGIN:{page.README_BLOCK} -->\n{body}<!-- END:{page.README_BLOCK} -->\n")
        return page.check(ROOT, written, readme)

    assert check(block) == []
    flipped = block.replace("(`C_grpo_sparse_vs_C`, secondary B): -23.3", "(`C_grpo_sparse_vs_C`, secondary B): +23.3")
    detected = block.replace("DAgger was not detected to beat C (`C_dagger_vs_C`, primary)",
                             "DAgger was detected to beat C (`C_dagger_vs_C`, primary)")
    assert flipped != block and detected != block
    assert any("C_grpo_sparse_vs_C (secondary B) gives diff +23.3" in p for p in check(flipped))
    assert any("C_dagger_vs_C (primary) says detected" in p for p in check(detected))
