"""GRPO's arithmetic (issue 41): group-normalised advantages by hand, and the project's loss equal to TRL's
``GRPOTrainer._compute_loss`` (loss_type bnpo, KL to a reference, clipped ratios) on a fixed tiny batch,
with per-token advantages (the dense design's shape) and old log-probabilities that put tokens on both
sides of the clip."""
from __future__ import annotations

import math

import pytest
import torch

from ccl.learn.grpo_loss import group_advantages, grpo_loss, turn_advantages
from ccl.train.packing import Packed
from ccl.train.shared_head import target_logps


def test_group_advantages_by_hand():
    # rewards 1, 0, 0, 1: mean 0.5, unbiased std sqrt(4 * 0.25 / 3) = 0.57735
    a = group_advantages([1.0, 0.0, 0.0, 1.0])
    assert a[0] == pytest.approx(0.5 / (math.sqrt(1 / 3) + 1e-4)) and a[1] == pytest.approx(-a[0])
    assert group_advantages([1.0, 1.0, 1.0]) == [0.0, 0.0, 0.0]  # no spread: no signal
    assert group_advantages([0.7]) == [0.0]


def test_turn_advantages_pool_the_groups_turns():
    # turns (1, 0) and (1,): pooled 1, 0, 1 -> mean 2/3, std sqrt((1/9 + 4/9 + 1/9) / 2) = 0.57735
    out = turn_advantages([[1.0, 0.0], [1.0]])
    s = math.sqrt(1 / 3) + 1e-4
    assert out == [[pytest.approx((1 / 3) / s), pytest.approx((-2 / 3) / s)], [pytest.approx((1 / 3) / s)]]


def test_kl_and_ratio_terms_by_hand():
    logp = torch.tensor([math.log(0.5)])
    old = torch.tensor([math.log(0.25)])  # ratio 2: clipped to 1.2 for a positive advantage
    ref = torch.tensor([math.log(0.25)])  # k3 = exp(ref - logp) - (ref - logp) - 1 = 0.5 - ln 0.5 - 1 = 0.19315
    parts = grpo_loss(logp, old, ref, torch.tensor([1.0]), beta=0.1, eps_low=0.2, eps_high=0.2, batch_tokens=2)
    # the KL is weighted by the ratio (TRL's bias correction): 2 x 0.19315
    assert float(parts.loss) == pytest.approx((-1.2 + 0.1 * 2 * (0.5 - math.log(0.5) - 1)) / 2)
    assert float(parts.clipped) == 1 and float(parts.kl) == pytest.approx(2 * (0.5 - math.log(0.5) - 1))


@pytest.fixture(scope="module")
def trl_trainer(tiny_model, tmp_path_factory):
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    tok = AutoTokenizer.from_pretrained(tiny_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    args = GRPOConfig(output_dir=str(tmp_path_factory.mktemp("grpo")), loss_type="bnpo", beta=0.04, epsilon=0.2,
                      temperature=1.0, num_generations=2, per_device_train_batch_size=2, max_completion_length=8,
                      use_cpu=True, report_to=[], bf16=False, logging_steps=1)
    data = Dataset.from_list([{"prompt": "hello"}] * 4)
    trainer = GRPOTrainer(model=model, reward_funcs=[lambda completions, **kw: [0.0] * len(completions)], args=args,
                          train_dataset=data, processing_class=tok)
    trainer.current_gradient_accumulation_steps = 1  # set by TRL's training loop, which this test does not run
    return trainer


def test_loss_equals_trls_on_a_fixed_batch(trl_trainer):
    model = trl_trainer.model
    torch.manual_seed(1)
    prompt = torch.randint(5, 500, (2, 6))  # equal lengths: no left padding, so positions agree
    completion = torch.randint(5, 500, (2, 5))
    cmask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    adv = torch.tensor([[0.9, 0.9, -1.1, -1.1, 2.0], [-0.4, 0.3, 0.3, 0.0, 0.0]])  # per token (dense's shape)
    with torch.no_grad():
        full = torch.cat([prompt, completion], 1)
        logits = model(input_ids=full).logits[:, prompt.shape[1] - 1:-1]
        now = torch.log_softmax(logits.float(), -1).gather(2, completion[..., None])[..., 0]
    old = now + torch.tensor([[0.5, -0.5, 0.0, 0.3, -0.3], [0.25, -0.25, 0.1, 0.0, 0.0]])  # both sides of the clip
    ref = now + torch.tensor([[0.2, -0.1, 0.05, 0.0, 0.4], [-0.3, 0.1, 0.0, 0.0, 0.0]])
    inputs = {"prompt_ids": prompt, "prompt_mask": torch.ones_like(prompt), "completion_ids": completion,
              "completion_mask": cmask, "advantages": adv, "old_per_token_logps": old, "ref_per_token_logps": ref,
              "num_items_in_batch": cmask.sum()}
    model.train()
    theirs = float(trl_trainer._compute_loss(model, inputs).detach())

    rows = [Packed(full[r].tolist()[:6 + int(cmask[r].sum())], [False] * 6 + [True] * int(cmask[r].sum()), 1, 0)
            for r in range(2)]
    on = cmask.bool()
    logps = target_logps(model, rows, 0, "cpu")
    ours = grpo_loss(logps, old[on], ref[on], adv[on], beta=0.04, eps_low=0.2, eps_high=0.2,
                     batch_tokens=int(cmask.sum()))
    assert float(ours.loss) == pytest.approx(theirs, abs=1e-6)
    assert float(ours.clipped) > 0  # the batch exercises the clip
