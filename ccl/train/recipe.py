"""The training recipe, the learning-rate schedule and the batch order.

``TrainRecipe`` defaults are the write-up's final configuration; params.yaml
``train.profiles`` rescales them per profile. A run (``ccl.vocabulary.Run``) adds only its
training set and seed: every run of a profile shares one recipe, as in the write-up.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ..config import register
from ..vocabulary import DEFAULT_PRECISION, PRECISIONS, precision_fields


@register
@dataclass(frozen=True)
class StabilityRule:
    """Section 4.1's rule, fixed before any run: a smoothed-loss and a gradient-norm criterion."""

    ema: float = 0.8  # smoothing of the training loss (weight of the previous value)
    loss_ratio: float = 2.0  # smoothed loss above ratio x its post-warmup minimum ...
    loss_margin: float = 0.5  # ... and at least this many nats above it: diverged
    grad_ratio: float = 100.0  # pre-clip grad norm above ratio x the warmup median ...
    grad_patience: int = 3  # ... on this many consecutive steps: diverged


@dataclass(frozen=True)
class TrainRecipe:
    rank: int = 16
    scale: float = 20.0  # LoRA output scale (alpha / rank)
    dropout: float = 0.0
    adapt_fraction: float = 2 / 3  # LoRA on every linear layer of the last fraction of blocks
    lr: float = 1e-5
    lr_min: float = 1e-6
    warmup: int = 20
    steps: int = 250  # optimizer steps
    batch_size: int = 4  # episodes per micro-batch
    grad_accum: int = 2  # micro-batches per optimizer step
    max_length: int = 2048
    clip: float = 1.0  # global gradient-norm clipping
    weight_decay: float = 0.01  # AdamW's usual default, the same on torch and MLX
    gradient_checkpointing: bool = True
    checkpoint_every: int = 25  # optimizer steps between checkpoints
    val_episodes: int | None = None  # oracle validation episodes for the final loss (None: all)
    stability: StabilityRule = field(default_factory=StabilityRule)
    # the products' precision (torch; SFT runs: train, val_baseline, DAgger's retraining; DPO and GRPO
    # compute in float32): float32, or bfloat16 on the CPU's matrix units with float32 LoRA weights,
    # gradients and optimizer state (experiments/bf16_cpu)
    precision: Literal[PRECISIONS] = DEFAULT_PRECISION

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision {self.precision!r} is not one of {', '.join(PRECISIONS)}")

    @property
    def episodes_per_step(self) -> int:
        return self.batch_size * self.grad_accum


def recipe_record(recipe: TrainRecipe) -> dict:
    """The recipe as a run records it (fingerprint, config.json, adapter card): every field, except the
    precision when it is the default, so that a float32 run's records keep the bytes they had before
    precision was a setting (the published studies rerun to them); its absence reads as float32."""
    record = dataclasses.asdict(recipe)
    del record["precision"]
    return record | precision_fields(recipe.precision)


def learning_rate(step: int, r: TrainRecipe) -> float:
    """Linear warmup to ``lr`` over ``warmup`` steps, then cosine decay to ``lr_min`` (step 0-based)."""
    if step < r.warmup:
        return r.lr * (step + 1) / r.warmup
    span = max(r.steps - r.warmup, 1)
    progress = min((step - r.warmup) / span, 1.0)
    return r.lr_min + 0.5 * (r.lr - r.lr_min) * (1 + math.cos(math.pi * progress))


def adapted_layers(n_layers: int, fraction: float) -> list[int]:
    """The last ``round(fraction * n_layers)`` blocks (16 of 24 for the paper's student)."""
    k = max(1, min(n_layers, round(fraction * n_layers)))
    return list(range(n_layers - k, n_layers))


def batch_order(phases: list[int], steps: int, per_step: int, seed: int) -> list[list[int]]:
    """Episode indices for each optimizer step, a deterministic function of the seed.

    ``phases[i]`` is episode i's phase. Phases run in order and split the steps evenly
    (Dseq: B for the first half, C for the second, on one schedule); within a phase,
    episodes are drawn epoch by epoch, each epoch a fresh seeded permutation.
    """
    rng = np.random.default_rng(seed)
    groups = [[i for i, p in enumerate(phases) if p == ph] for ph in sorted(set(phases))]
    bounds = [round(steps * k / len(groups)) for k in range(len(groups) + 1)]
    order: list[list[int]] = []
    for g, members in enumerate(groups):
        need = (bounds[g + 1] - bounds[g]) * per_step
        stream: list[int] = []
        while len(stream) < need:
            stream += [members[i] for i in rng.permutation(len(members))]
        order += [stream[s * per_step:(s + 1) * per_step] for s in range(bounds[g + 1] - bounds[g])]
    return order
