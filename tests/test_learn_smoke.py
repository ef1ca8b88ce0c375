"""Issues 40 and 41 on the smoke profile, end to end with the real student: one DAgger iteration (rollout
with the expert labelling, training on the aggregate), DPO on the pairs that iteration's states give, the
error-driven round (validation replay set, failure map, targeted data, training, the before/after
comparison) and each GRPO arm.

One smoke chain per method stays in the default suite, although each takes over half a minute: DAgger's
rollout with the expert labelling, and the decomposed GRPO arm (the only reward with spread within a group
on smoke sizes, so the only arm whose update runs there). Training on DAgger's aggregate with DPO, the
error round, and the sparse and dense GRPO arms are marked slow (1.5 to 2.5 minutes each on 2 cores; CI
runs them, .ci/run), as is study 2's whole smoke chain (tests/test_study2.py), which trains DAgger and
the sparse and dense GRPO arms through its own commands.
"""
from __future__ import annotations

import math
import shutil

import pytest
from subproc import run_py

from ccl.artifacts.jsonio import read_json, read_jsonl


def _train(study, run: str, train_file) -> dict:
    data, runs = study / "data" / "v1", study / "runs"
    run_py("-m", "scripts.train", run, "--profile", "smoke", "--data", str(data), "--runs", str(runs),
           "--archive", str(study / "archive"), "--stability-log", str(study / "logs" / "stability.jsonl"),
           "--train-file", str(train_file))
    return read_json(runs / run / "summary.json")


def _study_copy(smoke_study, tmp_path):
    """A copy of the shared smoke study (symlinks kept): the other tests see it as they expect."""
    study = tmp_path / "study"
    shutil.copytree(smoke_study, study, symlinks=True)
    return study


def _report(study) -> str:
    run_py("-m", "scripts.build_report", "--root", str(study), "--out", str(study / "results"))
    return (study / "results" / "report.md").read_text()


def _dagger_iteration(study) -> tuple[dict, list[dict]]:
    """DAgger's first iteration on the study: C rolls out on fresh training tasks, the expert labels every
    state it visits; the iteration's stats and visits."""
    data, runs = study / "data" / "v1", study / "runs"
    it = data / "dagger" / "iter1"
    run_py("-m", "scripts.dagger_rollout", "1", "--profile", "smoke", "--data", str(data), "--policy",
           str(runs / "C_s0"), "--base", str(data / "variants" / "C.jsonl"), "--out", str(it),
           "--timings", str(study / "results" / "learn" / "dagger_iter1.json"))
    return read_json(it / "stats.json"), list(read_jsonl(it / "visits.jsonl.gz"))


def test_one_dagger_iteration_labels_every_visited_state(smoke_study, tmp_path):
    study = _study_copy(smoke_study, tmp_path)
    stats, visits = _dagger_iteration(study)
    it = study / "data" / "v1" / "dagger" / "iter1"
    assert stats["tasks"] == 4 and stats["states"] == len(visits) > 0
    assert stats["train_rows"] == 8 + stats["rows"]  # C's 8 smoke rows, then this iteration's
    assert sum(stats["labels_by_kind"].values()) == len(visits)
    assert all(v["label"].startswith(("{\"calls\"", "{\"final\"")) for v in visits)
    run_py("-m", "scripts.verify", "--root", str(it))  # the iteration's manifest holds
    # the learning arms reach the report: their data tables are built from these artifacts
    md = _report(study)
    assert "## 8. Learning from the student's own episodes (exploratory)" in md
    for name in ("dagger", "dpo", "expert_coverage"):
        assert f"<!-- BEGIN:{name} -->" in md
    assert f"| 1 | 0.5 | 4 | {stats['episodes_ruler2_success']}/4 | {stats['states']} |" in md


@pytest.mark.slow
def test_dagger_training_and_dpo_end_to_end(smoke_study, tmp_path):
    study = _study_copy(smoke_study, tmp_path)
    data, runs = study / "data" / "v1", study / "runs"
    learn = study / "results" / "learn"
    it = data / "dagger" / "iter1"
    stats, visits = _dagger_iteration(study)
    summary = _train(study, "C_dagger_s0", it / "train.jsonl.gz")
    assert summary["episodes"] == stats["train_rows"] and summary["stability"] == "passed"

    # DPO (issue 41): pairs where C's own turn fails its grade, then TRL's DPO from C's adapter
    run_py("-m", "scripts.dpo_pairs", "--data", str(data), "--source", str(it), "--out", str(data / "dpo"))
    pstats = read_json(data / "dpo" / "stats.json")
    assert pstats["states"] == len(visits) and pstats["student_fails"] == len(visits) - stats["student_passes"]
    assert 0 < pstats["pairs"] <= pstats["student_fails"]
    run_py("-m", "scripts.dpo_train", "C_dpo_s0", "--profile", "smoke", "--data", str(data), "--init",
           str(runs / "C_s0"), "--runs", str(runs))
    dpo = read_json(runs / "C_dpo_s0" / "summary.json")
    assert dpo["steps"] == 2 and dpo["pairs_used"] + dpo["pairs_too_long"] == pstats["pairs"]
    assert dpo["adapter_sha256"] != read_json(runs / "C_s0" / "summary.json")["adapter_sha256"]  # DPO moved it
    first = next(read_jsonl(runs / "C_dpo_s0" / "train_log.jsonl"))
    assert abs(first["loss"] - math.log(2)) < 1e-6  # before any update the policy is its reference, C
    assert not (runs / "C_dpo_s0" / "adapter" / "ref").exists()  # only the trained adapter is saved
    run_py("-m", "scripts.verify", "--root", str(runs / "C_dpo_s0"))
    # C_dpo's adapter loads and answers like any run's
    run_py("-m", "scripts.val_replay", "--profile", "smoke", "--name", "C_dpo_s0", "--adapter",
           str(runs / "C_dpo_s0"), "--data", str(data), "--out", str(learn / "val_replay"))
    assert read_json(learn / "val_replay" / "C_dpo_s0" / "generation.json")["decisions"] > 0
    dpo_block = _report(study).split("<!-- BEGIN:dpo -->", 1)[1].split("<!-- END:dpo -->", 1)[0]
    assert "C_dpo_s0" in dpo_block  # the report's DPO table has the run


@pytest.mark.slow
def test_the_error_round_end_to_end(smoke_study, tmp_path):
    study = _study_copy(smoke_study, tmp_path)
    data, runs = study / "data" / "v1", study / "runs"
    learn = study / "results" / "learn"
    replay = learn / "val_replay"
    for name in ("C_s0", "C_err_s0"):
        if name == "C_err_s0":  # the failure map is C's answers on the map half
            run_py("-m", "scripts.err_data", "--profile", "smoke", "--data", str(data), "--runs", str(replay),
                   "--out", str(data / "err"))
            err = read_json(data / "err" / "stats.json")
            assert err["replay_slice"] == 8 and err["train_rows"] == 8 + err["new_rows"]
            assert err["new_rows"] == err["targeted_tasks"] > 0
            assert all(s["request_overlap"] == 0 for s in err["leakage_audit"].values())
            assert _train(study, "C_err_s0", data / "err" / "train.jsonl.gz")["stability"] == "passed"
        run_py("-m", "scripts.val_replay", "--profile", "smoke", "--name", name, "--adapter", str(runs / name),
               "--data", str(data), "--out", str(replay))
    run_py("-m", "scripts.err_compare", "--data", str(data), "--runs", str(replay), "--names", "C_err_s0",
           "--failure-map", str(data / "err" / "failure_map.json"), "--out", str(learn / "err_clusters.json"))
    clusters = read_json(learn / "err_clusters.json")
    decisions = read_json(replay / "C_s0" / "generation.json")["decisions"]
    overall = clusters["overall"]
    assert sum(h["decisions"] for h in overall["C_s0"].values()) == decisions
    assert overall["C_err_s0"]["map"]["decisions"] == overall["C_s0"]["map"]["decisions"] > 0
    assert set(clusters["targets"]) <= set(clusters["by_coordinate"]["C_err_s0"])
    md = _report(study)
    for name in ("err_round", "err_clusters"):
        assert f"<!-- BEGIN:{name} -->" in md


# On the smoke sizes only the decomposed reward spreads within a group (sparse and dense give every sample
# the same reward there, so no update happens): it is the arm that runs the update end to end by default.
@pytest.mark.parametrize("reward", [pytest.param("sparse", marks=pytest.mark.slow), "decomposed",
                                    pytest.param("dense", marks=pytest.mark.slow)])
def test_a_grpo_arm_end_to_end(reward, smoke_study, tmp_path):
    """Issue 41: a GRPO arm trains from C on the smoke profile (2 steps x 2 tasks x G=2), is evaluated and
    judged like any run, and reaches the report and DVC's plots."""
    study = _study_copy(smoke_study, tmp_path)
    data, runs, results = study / "data" / "v1", study / "runs", study / "results" / "runs"
    c_sha = read_json(runs / "C_s0" / "summary.json")["adapter_sha256"]
    arm = f"C_grpo_{reward}_s0"
    run_py("-m", "scripts.grpo_train", arm, "--profile", "smoke", "--data", str(data), "--init", str(runs / "C_s0"),
           "--runs", str(runs))
    g = read_json(runs / arm / "summary.json")
    assert (g["method"], g["reward"], g["steps"], g["episodes"]) == ("grpo", reward, 2, 8)
    assert "sampler" not in g and "sampler" not in read_json(runs / arm / "config.json")["grpo"]  # torch: as published
    log = list(read_jsonl(runs / arm / "train_log.jsonl"))
    assert [r["step"] for r in log] == [0, 1] and all(r["episodes"] == 4 for r in log)
    assert all(0 <= r["zero_spread_groups"] <= 1 and r["reward"] == r[f"reward_{reward}"] for r in log)
    # an update happened exactly when some group had spread, and only then did the adapter move
    assert any(r["updated"] for r in log) == (g["adapter_sha256"] != c_sha)
    if reward == "decomposed":  # the loss ran and moved the adapter (measured: step 0 of 2 has spread)
        assert any(r["updated"] for r in log)
    assert [v["step"] for v in read_jsonl(runs / arm / "val_log.jsonl")] == [0, 2]
    samples = list(read_jsonl(runs / arm / "samples.jsonl.gz"))
    assert [s["step"] for s in samples] == [0] * 4 + [1] * 4 and all(s["turns"] for s in samples)
    run_py("-m", "scripts.verify", "--root", str(runs / arm))
    run_py("-m", "scripts.evaluate", "--profile", "smoke", "--name", arm, "--adapter", str(runs / arm),
           "--data", str(data), "--out", str(results))
    run_py("-m", "scripts.judge", "--name", arm, "--data", str(data), "--runs", str(results))
    assert read_json(results / arm / "metrics.json")
    md = _report(study)
    assert "<!-- BEGIN:grpo -->" in md and arm in md
    run_py("-m", "scripts.dvc_views", "--summary", str(study / "results" / "summary.json"), "--runs", str(runs),
           "--metrics", str(study / "results" / "metrics"), "--plots", str(study / "results" / "plots"))
    assert (study / "results" / "plots" / "grpo_val_success" / f"{arm}.csv").is_file()
    assert not (study / "results" / "plots" / "train_loss" / f"{arm}.csv").exists()
