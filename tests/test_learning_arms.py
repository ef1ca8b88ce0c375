"""The cpu-scale learning arms (issue 59) without a model run: the fresh tasks, the warm start's pieces, GRPO's
screening, DPO's loss settings, DAgger's ruler, and that each arm's parameters are the ones its plan fixed.
The smoke run of every arm's command is tests/test_scaled_c.py's pipeline test (slow)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ccl.config import ConfigError, ModelsConfig, load_params, stage_config
from ccl.data.scaled import ScaledCConfig, ScaledDrawError, fresh_tasks
from ccl.learn.dagger import DaggerConfig
from ccl.learn.dpo import DpoConfig
from ccl.learn.grpo import GrpoConfig, score, screen
from ccl.stages.warm_train import C_PLUS, warm_run
from ccl.train.recipe import TrainRecipe
from ccl.world.tasks.base import FAMILIES

ROOT = Path(__file__).resolve().parents[1]
SCALE = ROOT / "scale"
ARMS = ("cplus", "dagger", "dpo", "grpo")


def _pool(per_family: int) -> tuple[list[dict], list[dict]]:
    """Tasks and their oracle rows, ``per_family`` of each family, families interleaved in pool order."""
    tasks = [{"id": f"{f}-{i}", "family": f} for i in range(per_family) for f in FAMILIES]
    rows = [{"task_id": t["id"], "family": t["family"], "messages": []} for t in tasks]
    return tasks, rows


def test_fresh_tasks_are_the_draw_past_c_in_the_draws_order():
    tasks, rows = _pool(3)  # 24 tasks; C draws 8, one per family
    cfg = ScaledCConfig(budget=8, sampler="balanced", seed=0)
    from ccl.data.scaled import draw
    whole = [r["task_id"] for r in draw(rows, ScaledCConfig(24, "balanced", 0))]
    c = {r["task_id"] for r in draw(rows, cfg)}
    fresh = [t["id"] for t in fresh_tasks(tasks, rows, cfg)]
    assert fresh == whole[8:] and len(fresh) == 16 and not set(fresh) & c
    assert sorted(t.split("-")[0] for t in fresh[:8]) == sorted(FAMILIES)  # the next round of the deal


def test_fresh_tasks_refuse_oracle_rows_that_are_not_the_pools():
    tasks, rows = _pool(1)
    with pytest.raises(ScaledDrawError, match="differ"):
        fresh_tasks(tasks[:-1], rows, ScaledCConfig(budget=2, sampler="balanced", seed=0))


def test_warm_runs_are_the_comparator_or_a_learning_arms_run():
    assert (warm_run("C_plus_s0").variant, warm_run("C_plus_s0").seed) == (C_PLUS, 0)
    assert warm_run("C_dagger_i2_s0").name == "C_dagger_i2_s0"
    with pytest.raises(ConfigError, match="C_plus_s<seed>"):
        warm_run("C_plus")
    with pytest.raises(ConfigError):
        warm_run("B_s9x")


def test_screening_drops_flagged_episodes_only_when_on():
    from ccl.learn import farming
    from ccl.world.tasks import generate_task

    task = generate_task("ch_order_customer", 0, "train")
    played = {name: farming.play_policy(task, farming.POLICIES[name])[0] for name in ("oracle", "paste_last", "stop_now")}
    group = [score(task, i, ep) for i, ep in enumerate(played.values())]
    assert [bool(s.flags) for s in group] == [False, True, True]
    assert screen(group, on=False) == group
    assert screen(group, on=True) == group[:1]  # one left: the update skips the group (nothing to compare)


def test_new_settings_are_left_out_of_a_published_arms_record():
    assert set(GrpoConfig().record()) >= {"ruler"} and not {"screen_flagged", "keep_at"} & set(GrpoConfig().record())
    assert not {"loss_type", "loss_weights", "precision"} & set(DpoConfig().record())
    rpo = DpoConfig(loss_type=("sigmoid", "sft"), loss_weights=(1.0, 0.5)).record()
    assert (rpo["loss_type"], rpo["loss_weights"]) == (["sigmoid", "sft"], [1.0, 0.5])
    with pytest.raises(ValueError, match="one weight per loss_type"):
        DpoConfig(loss_type=("sigmoid", "sft"), loss_weights=(1.0,))
    with pytest.raises(ValueError, match="dagger.ruler"):
        DaggerConfig(ruler="ruler9")


def _arm(name: str, section: str, cls: type, profile: str = "cpu-scale"):
    return stage_config(load_params(SCALE / "arms" / f"{name}.yaml"), section, cls, profile)[0]


@pytest.mark.parametrize("arm", ARMS)
def test_every_arm_runs_cs_student_and_engine(arm):
    ours = {p: _arm(arm, "models", ModelsConfig, p) for p in ("cpu-scale", "smoke")}
    assert ours == {p: stage_config(load_params(SCALE / "params.yaml"), "models", ModelsConfig, p)[0]
                    for p in ("cpu-scale", "smoke")}


def test_the_supervised_arms_run_cs_recipe_with_the_plans_changes():
    c = stage_config(load_params(SCALE / "params.yaml"), "train", TrainRecipe, "cpu-scale")[0]
    plus, dagger = _arm("cplus", "train", TrainRecipe), _arm("dagger", "train", TrainRecipe)
    assert plus == dataclasses.replace(c, steps=128, lr=2e-4, checkpoint_every=32)
    assert dagger == dataclasses.replace(plus, steps=96, checkpoint_every=24)
    draw = _arm("cplus", "scaled_c", ScaledCConfig)
    c_draw = stage_config(load_params(SCALE / "params.yaml"), "scaled_c", ScaledCConfig, "cpu-scale")[0]
    assert draw == dataclasses.replace(c_draw, budget=2 * c_draw.budget)  # nested: its first half is C's


def test_the_learning_arms_settings_are_the_plans():
    d = _arm("dagger", "dagger", DaggerConfig)
    assert (d.betas, d.tasks_per_iteration, d.ruler) == ((0.5, 0.25, 0.125, 0.0), 32, "ruler3")
    assert len(load_params(SCALE / "arms" / "dagger.yaml")["dagger_iterations"]) == len(d.betas)
    rollout = _arm("dpo", "dagger", DaggerConfig)
    assert (rollout.betas, rollout.tasks_per_iteration, rollout.ruler) == ((0.0,), 64, "ruler3")
    dpo = _arm("dpo", "dpo", DpoConfig)
    assert (dpo.loss_type, dpo.loss_weights, dpo.beta, dpo.lr, dpo.steps) == (("sigmoid", "sft"), (1.0, 1.0), 0.1, 5e-5, 12)
    g = _arm("grpo", "grpo", GrpoConfig)
    assert (g.ruler, g.screen_flagged, g.sampler, g.steps, g.keep_at, g.lr) == ("ruler3", True, "openvino", 12, 6, 5e-5)
    assert g.task_offset >= d.task_offset + d.tasks_per_iteration * len(d.betas)  # past DAgger's tasks


def test_a_warm_start_copies_the_adapters_lora_and_refuses_another_shape(tmp_path, monkeypatch):
    import torch
    from safetensors.torch import save_file

    from ccl.train import torch_trainer
    from ccl.learn import warm_start as warm
    from ccl.train.errors import TrainingError

    params = {"m.layers.0.q.lora_A.default.weight": torch.nn.Parameter(torch.zeros(2, 3)),
              "m.layers.0.q.lora_B.default.weight": torch.nn.Parameter(torch.zeros(3, 2))}
    monkeypatch.setattr(torch_trainer, "trainable", lambda model: params)
    tm = type("TM", (), {"model": None})()
    a, b = torch.arange(6.0).reshape(2, 3), -torch.arange(6.0).reshape(3, 2)
    save_file({"m.layers.0.q.lora_A.weight": a, "m.layers.0.q.lora_B.weight": b}, tmp_path / "ok.safetensors")
    warm.load_lora(tm, tmp_path / "ok.safetensors")
    assert torch.equal(params["m.layers.0.q.lora_A.default.weight"], a)
    assert torch.equal(params["m.layers.0.q.lora_B.default.weight"], b)
    save_file({"m.layers.0.q.lora_A.weight": a}, tmp_path / "short.safetensors")
    with pytest.raises(TrainingError, match="1 tensors missing"):
        warm.load_lora(tm, tmp_path / "short.safetensors")
    save_file({"m.layers.0.q.lora_A.weight": a.T.contiguous(), "m.layers.0.q.lora_B.weight": b},
              tmp_path / "shape.safetensors")
    with pytest.raises(TrainingError, match=r"shape \(3, 2\)"):
        warm.load_lora(tm, tmp_path / "shape.safetensors")


def test_a_checkpoint_resumes_only_under_the_start_that_left_it(tmp_path):
    from ccl.train.errors import TrainingError
    from ccl.learn.warm_start import check_start, note_start

    log = tmp_path / "warm_starts.jsonl"
    c = {"init": "C_s0", "init_adapter_sha256": "aa"}
    with pytest.raises(TrainingError, match="started from None"):
        check_start(log, "C_plus_s0", c)  # no record of any start: nothing says the checkpoint is this run's
    note_start(log, "C_plus_s0", c)
    note_start(log, "C_dagger_i2_s0", {"continues": "C_dagger_i1_s0"})
    check_start(log, "C_plus_s0", c)
    check_start(log, "C_dagger_i2_s0", {"continues": "C_dagger_i1_s0"})
    with pytest.raises(TrainingError, match="'init_adapter_sha256': 'aa'"):
        check_start(log, "C_plus_s0", {**c, "init_adapter_sha256": "bb"})  # C retrained since the kill
    note_start(log, "C_plus_s0", {**c, "init_adapter_sha256": "bb"})  # redone: its line is replaced
    assert sum(1 for _ in log.read_text().splitlines()) == 2


@pytest.mark.parametrize("run", ["runs/C_dpo_s0", "runs/C_grpo_sparse_s0", "study2/runs/C_grpo_dense_s0"])
def test_the_published_arms_records_are_what_their_params_give_today(run):
    """The new settings (DPO's loss terms and precision, GRPO's screening and kept step) must leave the
    published arms' config.json as they were: their params, recorded by today's code, give the same bytes."""
    import json

    from ccl.vocabulary import training_run

    config = json.loads((ROOT / run / "config.json").read_text())
    params = load_params(ROOT / ("study2/params.yaml" if run.startswith("study2") else "params.yaml"))
    if "dpo" in config:
        assert stage_config(params, "dpo", DpoConfig, "cpu")[0].record() == config["dpo"]
    else:
        cfg = stage_config(params, "grpo", GrpoConfig, "cpu")[0]
        cfg = dataclasses.replace(cfg, seed=cfg.seed + training_run(config["run"]).seed)
        assert cfg.record() == config["grpo"]


def test_grpo_keeps_its_adapter_only_at_a_step_it_runs():
    with pytest.raises(ValueError, match="grpo.keep_at 13"):
        GrpoConfig(steps=12, keep_at=13)
    assert GrpoConfig(steps=12, keep_at=12).keep_at == 12
