"""The cpu-scale profile (issue 58): its C's draw, its build stage, its validation tally, and that the profile
trains the recipe the competent-student pilot selected."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ccl.artifacts.jsonio import read_jsonl, write_jsonl
from ccl.config import ConfigError, load_params, stage_config
from ccl.data.scaled import ScaledCConfig, ScaledDrawError, deal, draw
from ccl.stages import build_scaled_c, validate_run
from ccl.train.recipe import TrainRecipe

ROOT = Path(__file__).resolve().parents[1]
SCALE_PARAMS = ROOT / "scale" / "params.yaml"
SELECTION = ROOT / "experiments" / "c_scale" / "results" / "selection.json"


def row(task_id: str, family: str) -> dict:
    return {"task_id": task_id, "family": family, "source": "oracle", "n_assistant_turns": 2, "messages": []}


def test_deal_goes_round_robin_over_families_in_their_order_and_skips_a_family_that_ran_out():
    order = [row("s1", "select"), row("s2", "select"), row("s3", "select"), row("a1", "args"),
             row("c1", "chain"), row("c2", "chain")]
    # FAMILIES order: select, args, chain, ...; args has one episode, so the second round is select, chain
    assert [r["task_id"] for r in deal(order, 5)] == ["s1", "a1", "c1", "s2", "c2"]
    assert [r["task_id"] for r in deal(order, 6)] == ["s1", "a1", "c1", "s2", "c2", "s3"]


def test_balanced_draw_gives_each_family_an_equal_share_and_smaller_budgets_are_prefixes():
    rows = [row(f"s{i}", "select") for i in range(30)] + [row(f"p{i}", "approval") for i in range(5)] + \
           [row(f"t{i}", "termination") for i in range(30)]
    cfg = ScaledCConfig(budget=24, sampler="balanced", seed=3)
    big = draw(rows, cfg)
    families = [r["family"] for r in big]
    assert families.count("approval") == 5  # its whole pool: 5 of an equal share of 8
    # five rounds of (select, approval, termination), then approval is out: four rounds of (select,
    # termination) reach 23, and the tenth round's select makes 24
    assert (families.count("select"), families.count("termination")) == (10, 9)
    for budget in (1, 7, 15):
        assert draw(rows, dataclasses.replace(cfg, budget=budget)) == big[:budget]


def test_uniform_draw_is_a_seeded_shuffle_cut_at_the_budget():
    rows = [row(f"r{i}", "select") for i in range(50)]
    a = draw(rows, ScaledCConfig(budget=10, sampler="uniform", seed=0))
    assert len({r["task_id"] for r in a}) == 10
    assert a == draw(rows, ScaledCConfig(budget=20, sampler="uniform", seed=0))[:10]
    assert a != draw(rows, ScaledCConfig(budget=10, sampler="uniform", seed=1))


def test_a_draw_the_pool_cannot_give_is_refused_with_what_is_short():
    with pytest.raises(ScaledDrawError, match="budget 4: the pool has only 3"):
        draw([row("a", "select")] * 3, ScaledCConfig(budget=4))
    with pytest.raises(ScaledDrawError, match="budget 2: only 1 episodes to deal"):
        deal([row("a", "select")], 2)
    with pytest.raises(ScaledDrawError, match="unknown families \\['gossip'\\]"):
        deal([row("a", "gossip")], 1)
    with pytest.raises(ValueError, match="sampler 'stratified' is not one of uniform, balanced"):
        ScaledCConfig(sampler="stratified")


def test_build_scaled_c_writes_the_draw_its_hash_and_composition(tmp_path):
    data = tmp_path / "data"
    rows = [row(f"s{i}", "select") for i in range(12)] + [row(f"a{i}", "args") for i in range(12)]
    write_jsonl(data / "sft" / "oracle_train.jsonl", rows)
    params = tmp_path / "params.yaml"
    params.write_text("profile: smoke\nscaled_c:\n  profiles:\n    smoke: {budget: 6, sampler: balanced}\n")
    record = build_scaled_c.run(params, None, data, tmp_path / "out")
    written = list(read_jsonl(tmp_path / "out" / "C.jsonl"))
    assert [r["family"] for r in written] == ["select", "args"] * 3
    assert record["families"] == {"args": 3, "select": 3} and record["episodes"] == 6
    assert json.loads((tmp_path / "out" / "C.json").read_text())["sha256"] == record["sha256"]
    params.write_text("profile: smoke\nscaled_c:\n  profiles:\n    smoke: {budget: 6, sampler: by_template}\n")
    with pytest.raises(ConfigError, match="scaled_c.sampler"):
        build_scaled_c.run(params, None, data, tmp_path / "out2")


def test_validation_tally_counts_each_ruler_per_family_and_on_renamed_catalogues():
    rows = [{"family": "args", "renamed": False, "ruler1": True, "ruler2": True, "ruler3": False},
            {"family": "args", "renamed": True, "ruler1": True, "ruler2": False, "ruler3": False},
            {"family": "select", "renamed": True, "ruler1": True, "ruler2": True, "ruler3": True}]
    t = validate_run.tally(rows)
    assert t["tasks"] == 3 and t["n_renamed"] == 2
    assert t["n_by_family"]["args"] == 2 and t["n_by_family"]["approval"] == 0
    assert t["ruler1"]["success"] == 3 and t["ruler1"]["renamed"] == 2 and t["ruler1"]["unrenamed"] == 1
    assert t["ruler2"]["by_family"]["args"] == 1 and t["ruler2"]["renamed"] == 1
    assert t["ruler3"] == {"success": 1, "renamed": 1, "unrenamed": 0,
                           "by_family": {**{f: 0 for f in t["n_by_family"]}, "select": 1}}


def test_the_cpu_scale_profile_trains_the_recipe_and_draw_the_pilot_selected():
    """The profile is the pilot's selected cell: the cpu recipe (params.yaml) with the cell's steps, a quarter
    of them between checkpoints, and bfloat16; the draw is the cell's budget and sampler."""
    selection = json.loads(SELECTION.read_text())["selected"]
    params = load_params(SCALE_PARAMS)
    recipe, _ = stage_config(params, "train", TrainRecipe, "cpu-scale")
    cpu, _ = stage_config(load_params(ROOT / "params.yaml"), "train", TrainRecipe, "cpu")
    steps = selection["steps"]
    assert recipe == dataclasses.replace(cpu, steps=steps, checkpoint_every=steps // 4, precision="bfloat16")
    c, _ = stage_config(params, "scaled_c", ScaledCConfig, "cpu-scale")
    assert (c.budget, c.sampler, c.seed) == (selection["budget"], selection["sampler"], 0)


def test_the_cpu_scale_profile_plays_validation_as_the_pilot_did():
    """The pilot read every cell with the cpu profile's student, engine, turn length and batch, generating in
    bfloat16 (experiments/c_scale/pilot.py PRECISION); the profile's validate stage must do the same."""
    from ccl.config import ModelsConfig
    from ccl.episode.evaluate_config import EvaluateConfig

    scale, cpu = load_params(SCALE_PARAMS), load_params(ROOT / "params.yaml")
    models = stage_config(scale, "models", ModelsConfig, "cpu-scale")[0]
    assert models == dataclasses.replace(stage_config(cpu, "models", ModelsConfig, "cpu")[0], student_precision="bfloat16")
    ours, theirs = (stage_config(p, "evaluate", EvaluateConfig, prof)[0] for p, prof in ((scale, "cpu-scale"), (cpu, "cpu")))
    assert (ours.batch_size, ours.max_new_tokens) == (theirs.batch_size, theirs.max_new_tokens) == (32, 128)


@pytest.mark.slow
def test_scale_pipeline_commands_run_on_smoke_sizes(tmp_path):
    """Every command scale/dvc.yaml runs, in pipeline order, on the smoke profile in a scratch root (the same
    scripts, flags and relative paths as the real run): C drawn, trained in bfloat16 for 4 steps, and every
    smoke validation task played and judged by the three rulers."""
    import os
    import shutil
    import subprocess
    import sys

    import networkx as nx
    from dvc.repo import Repo

    (tmp_path / "scale").mkdir()
    shutil.copy(SCALE_PARAMS, tmp_path / "scale" / "params.yaml")
    shutil.copytree(SCALE_PARAMS.parent / "arms", tmp_path / "scale" / "arms")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = lambda cmd: subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True)  # noqa: E731
    built = run(f"{sys.executable} -m scripts.build_datasets --profile smoke --out data/v1")
    assert built.returncode == 0, built.stderr
    repo = Repo(str(ROOT))
    stages = [s for s in nx.topological_sort(repo.index.graph.reverse()) if s.path_in_repo == "scale/dvc.yaml"]
    names = [s.name for s in stages]
    assert names.index("build_c") < names.index("train@C_s0") < names.index("validate@C_s0")
    assert len(stages) == 3 + 1 + 2 + 4 + 4 + 3 + 1 + 9  # C's; arm_tasks; C+; DAgger; DPO; GRPO; the arms' readings
    for st in stages:
        done = run(st.cmd.replace("python -m", f"{sys.executable} -m", 1) + " --profile smoke")
        assert done.returncode == 0, f"{st.name}: {st.cmd}\n{done.stderr[-2000:]}"
    assert json.loads((tmp_path / "data" / "scale" / "c" / "C.json").read_text())["episodes"] == 16
    summary = json.loads((tmp_path / "scale" / "runs" / "C_s0" / "summary.json").read_text())
    assert summary["steps"] == 4 and summary["precision"] == "bfloat16"
    record = json.loads((tmp_path / "results" / "scale" / "validation" / "C_s0.json").read_text())
    assert not {"seconds", "machine"} & set(record)  # timing lives beside the results, not in them
    timing = json.loads((tmp_path / "results" / "scale" / "validation" / "C_s0.generation.json").read_text())
    assert timing["seconds"] > 0 and timing["machine"]["threads"] >= 1
    tasks = len(list(read_jsonl(tmp_path / "data" / "v1" / "tasks" / "val_pool.jsonl")))
    assert record["tasks"] == tasks == sum(record["n_by_family"].values())
    played = list(read_jsonl(tmp_path / "results" / "scale" / "validation" / "C_s0.jsonl.gz"))
    assert record["ruler3"]["success"] == sum(r["ruler3"] for r in played)
    check_arms(tmp_path, tasks)


def check_arms(root, val_tasks: int) -> None:
    """What the learning arms' smoke commands must leave (issue 59)."""
    runs = root / "scale" / "runs"
    c_sha = json.loads((runs / "C_s0" / "summary.json").read_text())["adapter_sha256"]
    plus = json.loads((runs / "C_plus_s0" / "summary.json").read_text())
    assert plus["steps"] == 4 and (runs / "C_plus_s0" / "half" / "adapter").is_dir()
    assert json.loads((runs / "C_plus_s0" / "init.json").read_text()) == {"init": "C_s0", "init_adapter_sha256": c_sha}
    assert plus["val_loss_before_from"] == "init C_s0"
    log = [json.loads(x) for x in (runs / "C_dagger_s0" / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [0, 1, 2, 3]  # the four segments' steps, one schedule
    assert json.loads((runs / "C_dagger_s0" / "init.json").read_text()) == {"continues": "C_dagger_i3_s0"}
    for k in (1, 2, 3, 4):
        stats = json.loads((root / "data" / "scale" / "dagger" / f"iter{k}" / "stats.json").read_text())
        assert stats["beta"] == [0.5, 0.25, 0.125, 0.0][k - 1] and stats["tasks"] == 2
    fresh = {json.loads(x)["id"] for x in (root / "data" / "scale" / "arms" / "tasks" / "train_pool.jsonl").read_text().splitlines()}
    c_tasks = {json.loads(x)["task_id"] for x in (root / "data" / "scale" / "c" / "C.jsonl").read_text().splitlines()}
    assert fresh and not fresh & c_tasks
    dpo = json.loads((runs / "C_dpo_s0" / "config.json").read_text())["dpo"]
    assert dpo["loss_type"] == ["sigmoid", "sft"] and dpo["precision"] == "bfloat16"
    grpo = json.loads((runs / "C_grpo_sparse_s0" / "config.json").read_text())["grpo"]
    assert grpo["screen_flagged"] and grpo["ruler"] == "ruler3" and (runs / "C_grpo_sparse_s0" / "half" / "adapter").is_dir()
    for name in ("C_plus_half_s0", "C_plus_s0", "C_dagger_s0", "C_dpo_s0", "C_grpo_sparse_half_s0", "C_grpo_sparse_s0"):
        assert json.loads((root / "results" / "scale" / "validation" / f"{name}.json").read_text())["tasks"] == val_tasks
