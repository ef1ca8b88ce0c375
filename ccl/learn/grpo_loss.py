"""GRPO's pieces that are plain arithmetic (issue 41): group-normalised advantages and the clipped
policy-gradient loss with a KL penalty, in TRL's formulation so that ``tests/test_grpo_loss.py`` can
hold this loss equal to ``trl.GRPOTrainer._compute_loss`` on a fixed batch.

Why not TRL's trainer itself: GRPO here samples whole episodes in the world (the learner acts, the world
answers, several turns), and generation must go through the project's rollout engine (token-level
continuous batching with the shared prompt head cached) to be usable on two CPU cores; TRL's trainer
generates single completions with ``model.generate`` (or vLLM). So the loop is the project's
(``ccl.learn.grpo``) and only the loss is TRL's, reproduced here and tested against it.

The loss works on flat vectors, one entry per supervised token of the batch (the assistant's tokens):

    ratio_t   = exp(logp_t - old_t)                       (1 when each batch is used for one update)
    policy_t  = -min(ratio_t * A_t, clip(ratio_t, 1 - eps, 1 + eps) * A_t)
    kl_t      = ratio_t * (exp(ref_t - logp_t) - (ref_t - logp_t) - 1)
                (the k3 estimator, non-negative, 0 where equal; times the ratio, TRL's default bias
                correction for samples drawn from the old policy)
    loss      = sum_t (policy_t + beta * kl_t) / (tokens in the whole batch)

which is TRL's ``loss_type="bnpo"`` (token-level normalisation; equal to "dapo" on one process without
gradient accumulation). Dividing by the whole batch's token count, not a micro-batch's, makes gradient
accumulation over micro-batches give exactly the one-batch gradient.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

EPS_STD = 1e-4  # TRL's: added to the group's standard deviation


def group_advantages(rewards: list[float]) -> list[float]:
    """(r - mean) / (std + 1e-4) within one group, with the unbiased std (torch's and TRL's default);
    every advantage is 0 when the group has no spread (or one member)."""
    n = len(rewards)
    if n < 2:
        return [0.0] * n
    mean = sum(rewards) / n
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (n - 1))
    return [(r - mean) / (std + EPS_STD) for r in rewards]


def turn_advantages(turn_rewards: list[list[float]]) -> list[list[float]]:
    """Dense credit: each turn's reward normalised against every turn of the group (the group's episodes'
    turns pooled), so a turn is pushed up or down by how it compares with the other turns sampled for
    the same task; the same arithmetic as :func:`group_advantages` on the pooled list."""
    flat = group_advantages([r for turns in turn_rewards for r in turns])
    out, k = [], 0
    for turns in turn_rewards:
        out.append(flat[k:k + len(turns)])
        k += len(turns)
    return out


@dataclass(frozen=True)
class LossParts:
    loss: torch.Tensor  # this micro-batch's share of the batch loss (backward on it)
    kl: torch.Tensor  # summed per-token KL (detached)
    clipped: torch.Tensor  # tokens whose ratio the clip bound (detached)


def grpo_loss(logps: torch.Tensor, old: torch.Tensor, ref: torch.Tensor, adv: torch.Tensor, beta: float,
              eps_low: float, eps_high: float, batch_tokens: int) -> LossParts:
    """The micro-batch's tokens' contribution to the batch loss (see the module's docstring)."""
    ratio = torch.exp(logps - old)
    clipped_ratio = torch.clamp(ratio, 1 - eps_low, 1 + eps_high)
    per_token = -torch.min(ratio * adv, clipped_ratio * adv)
    kl = (torch.exp(ref - logps) - (ref - logps) - 1) * ratio  # TRL's default use_bias_correction_kl
    if beta != 0.0:
        per_token = per_token + beta * kl
    clipped = ((ratio < 1 - eps_low) & (adv < 0)) | ((ratio > 1 + eps_high) & (adv > 0))
    return LossParts(per_token.sum() / max(batch_tokens, 1), kl.detach().sum(), clipped.sum().detach())
