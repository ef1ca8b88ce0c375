"""GRPO's loop pieces (issue 41) without a model: scoring an episode three ways, crediting advantages to
tokens, group sampling seeds, task slices, the hacking flags, and the stage's refusal of overlapping tasks."""
from __future__ import annotations

import pytest

from ccl.episode.runtime import Episode
from ccl.learn import farming
from ccl.learn.grpo import GroupSampler, GrpoConfig, score, step_record, token_advantages
from ccl.learn.grpo_loss import group_advantages, turn_advantages
from ccl.learn.hacking import flags
from ccl.policy.base import GenConfig
from ccl.train.packing import Packed
from ccl.world.tasks import generate_task

TASK = generate_task("ch_order_customer", 0, "train")  # get_order, then get_customer, then the answer


def _played(policy: str, task=TASK) -> Episode:
    ep, _, _ = farming.play_policy(task, farming.POLICIES[policy])
    return ep


def test_the_oracle_scores_one_on_every_design_and_is_not_flagged():
    s = score(TASK, 0, _played("oracle"))
    assert (s.sparse, s.decomposed, s.dense) == (1.0, 1.0, 1.0)
    assert s.turn_rewards == (1.0, 1.0, 1.0) and s.grades == ("progress", "progress", "succeeded")
    assert s.flags == () and s.reasons == ()


def test_paste_last_gets_dense_credit_only_for_its_real_progress():
    # the expert's two calls, then the last observation pasted back as the answer
    s = score(TASK, 0, _played("paste_last"))
    assert s.sparse == 0.0 and s.turn_rewards == (1.0, 1.0, 0.0) and s.dense == pytest.approx(2 / 3)
    assert "paste" in s.flags


def test_flags_name_the_farms():
    assert "unfounded_done" in flags(TASK, _played("stop_now").record())
    assert "echo" in flags(TASK, _played("echo_request").record())
    assert "blind_repeat" in flags(TASK, _played("dup_then_expert").record())
    assert flags(TASK, _played("honest_give_up").record()) == ()  # failed, honestly: nothing to flag
    stall = _played("stall")
    assert stall.record()["final"] is None and "no_answer" in flags(TASK, stall.record())


def _packed(spans: list[int]) -> Packed:
    """Two prompt tokens, then per turn its tokens (targets) and one observation token."""
    ids, labels = [1, 2], [False, False]
    for n in spans:
        ids += [7] * n + [9]
        labels += [True] * n + [False]
    return Packed(ids, labels, len(spans), 0)


def test_dense_credits_each_turns_tokens_with_that_turns_advantage(monkeypatch):
    a = score(TASK, 0, _played("oracle"))  # turn rewards 1, 1, 1
    b = score(TASK, 1, _played("paste_last"))  # 1, 1, 0
    packed = [_packed([2, 1, 3]), _packed([1, 2, 2])]
    adv = token_advantages([a, b], "dense", packed)
    t = turn_advantages([[1, 1, 1], [1, 1, 0]])  # pooled 1,1,1,1,1,0: +0.408 for a 1, -2.04 for the 0
    assert adv[0] == [t[0][0]] * 2 + [t[0][1]] + [t[0][2]] * 3
    assert adv[1] == [t[1][0]] + [t[1][1]] * 2 + [t[1][2]] * 2 and t[1][2] < 0 < t[1][0]


def test_episode_designs_credit_every_token_with_the_episodes_advantage():
    a, b = score(TASK, 0, _played("oracle")), score(TASK, 1, _played("paste_last"))
    packed = [_packed([2, 1, 3]), _packed([1, 2, 2])]
    adv = token_advantages([a, b], "sparse", packed)
    ga = group_advantages([1.0, 0.0])
    assert adv == [[ga[0]] * 6, [ga[1]] * 5] and ga[0] > 0 > ga[1]
    # a packed episode that lost its last turn to max_length has no tokens for it
    short = Packed(*(_packed([2, 1]).input_ids, _packed([2, 1]).labels), 2, 1)
    assert token_advantages([a, b], "sparse", [short, packed[1]])[0] == [ga[0]] * 3


def test_step_record_counts_groups_without_spread_under_the_trained_reward():
    ok, paste = score(TASK, 0, _played("oracle")), score(TASK, 1, _played("paste_last"))
    same = [ok, score(TASK, 1, _played("oracle"))]
    rec = step_record(0, [[ok, paste], same], "sparse")
    assert rec["zero_spread_groups"] == 0.5 and rec["reward"] == rec["success"] == 0.75
    assert rec["flagged"] == 0.25 and rec["flagged_and_passed"] == 0
    assert step_record(0, [[ok, paste], same], "dense")["zero_spread_groups"] == 0.5


class _Dec:
    def __init__(self):
        self.seeds = []

    def submit(self, key, state, prompt, seed, rewind):
        self.seeds.append(seed)


class _Backend:
    def render(self, messages):
        return "".join(m["content"] for m in messages)


def test_group_members_sample_with_different_seeds_that_repeat_per_step():
    sampler = GroupSampler(_Backend(), GenConfig(temperature=1.0))
    dec = _Dec()
    for step in (3, 3):
        sampler.start_step(step)
        for _ in range(2):
            sampler.submit(dec, Episode(TASK), sampler.memory())
    assert dec.seeds[0] != dec.seeds[1] and dec.seeds[:2] == dec.seeds[2:]
    sampler.start_step(4)
    sampler.submit(dec, Episode(TASK), sampler.memory())
    assert dec.seeds[-1] not in dec.seeds[:2]


def test_step_tasks_are_fresh_consecutive_slices():
    cfg = GrpoConfig(tasks_per_step=2, steps=3, task_offset=5)
    pool = [{"id": str(i)} for i in range(11)]
    assert [t["id"] for t in cfg.step_tasks(pool, 0)] == ["5", "6"]
    assert [t["id"] for t in cfg.step_tasks(pool, 2)] == ["9", "10"]
    with pytest.raises(ValueError, match="need 11 training-pool tasks; the pool has 10"):
        cfg.step_tasks(pool[:10], 2)
    with pytest.raises(ValueError, match="group_size"):
        GrpoConfig(group_size=1)


def test_the_stage_refuses_tasks_c_or_dagger_used(tmp_path):
    import yaml

    from ccl.config import ConfigError
    from ccl.stages import grpo_train
    from scripts.layout import PARAMS
    values = yaml.safe_load(PARAMS.read_text())
    values["grpo"]["profiles"]["cpu"]["task_offset"] = 200  # DAgger's cpu slices run to 256
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(values))
    with pytest.raises(ConfigError, match=r"grpo.task_offset 200 overlaps .* \(the first 256 of the pool\)"):
        grpo_train.plan(tmp_path / "params.yaml", "cpu", "C_grpo_sparse_s0", tmp_path)
    with pytest.raises(ConfigError, match="grpo_train writes GRPO runs"):
        grpo_train.plan(PARAMS, "cpu", "C_dpo_s0", tmp_path)


def test_the_sampler_setting_is_checked_and_the_default_is_not_recorded():
    assert "sampler" not in GrpoConfig().record()  # a run made before the setting keeps its config bytes
    assert GrpoConfig(sampler="openvino").record()["sampler"] == "openvino"
    with pytest.raises(ValueError, match="grpo.sampler 'vllm': valid samplers are torch, openvino"):
        GrpoConfig(sampler="vllm")


def test_the_openvino_sampler_is_refused_off_the_cpu():
    """Off the CPU the trainer's base model is bfloat16, which OpenVINO's float32 graph would not be."""
    from types import SimpleNamespace

    from ccl.config import ConfigError
    from ccl.stages import grpo_train

    p = SimpleNamespace(cfg=GrpoConfig(sampler="openvino"), models=None)
    with pytest.raises(ConfigError, match="samples a float32 graph on the CPU; this run trains on cuda"):
        grpo_train._sampler_backend(p, None, None, None, "cuda")
