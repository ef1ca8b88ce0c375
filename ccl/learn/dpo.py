"""DPO on the student's own mistakes (issue 41), through TRL's ``DPOTrainer``.

The policy starts from C's adapter and keeps training it; the reference is C itself, frozen: given a
peft model that already carries an adapter, ``DPOTrainer`` copies it into a second adapter (``ref``)
and computes the reference log-probabilities with that one active, so the KL anchor is the
supervised student, not the base model. TRL's loss is used as it is (``loss_type`` sigmoid: the DPO
paper's), so no loss of our own needs an equality test.

Pairs come from ``ccl.learn.pairs`` (stage dpo_pairs). A pair whose prompt and longer completion do
not fit ``max_length`` tokens is left out and counted, rather than truncated: truncating would cut
the system prompt or the turn being judged. The adapter is saved in the project's format
(``ccl.train.torch_trainer.save_adapter``, with only the trained adapter), so the evaluation, replay
and serving stages load it as any run's.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import register
from ..episode import chat


@register
@dataclass(frozen=True)
class DpoConfig:
    """params.yaml ``dpo``; the defaults are the paper profile's. Fixed before any DPO run from the DPO
    paper's beta and C's recipe (a tenth of its peak learning rate, its max_length); not tuned on any split."""

    beta: float = 0.1  # strength of the pull back to the reference (C)
    lr: float = 1e-6  # peak: a tenth of C's (TrainRecipe.lr), for a second stage on top of a trained adapter
    warmup: int = 2
    steps: int = 24  # optimizer steps
    batch_size: int = 4  # pairs per step
    max_length: int = 2048  # prompt + completion tokens, C's (TrainRecipe.max_length); longer pairs are left out
    seed: int = 0
    # TRL's loss terms and their weights (issue 59): ("sigmoid", "sft") with weights (1, a) adds the chosen
    # side's NLL to DPO's loss (RPO), against likelihood displacement; the published arm is DPO's alone
    loss_type: tuple[str, ...] = ("sigmoid",)
    loss_weights: tuple[float, ...] | None = None
    precision: str = "float32"  # bfloat16: TRL's CPU autocast (the LoRA weights and optimizer stay float32)

    def __post_init__(self) -> None:
        if self.loss_weights is not None and len(self.loss_weights) != len(self.loss_type):
            raise ValueError(f"dpo.loss_weights {list(self.loss_weights)}: one weight per loss_type "
                             f"{list(self.loss_type)}")
        if self.precision not in ("float32", "bfloat16"):
            raise ValueError(f"dpo.precision {self.precision!r}: float32 or bfloat16")

    def record(self) -> dict:
        """The settings as a run's config.json writes them: a setting at its default is left out when it
        did not exist when the published arm ran, so that arm's record keeps its bytes."""
        out = dataclasses.asdict(self)
        for key, default in (("loss_type", ("sigmoid",)), ("loss_weights", None), ("precision", "float32")):
            if out[key] == default:
                del out[key]
            elif isinstance(out[key], tuple):
                out[key] = list(out[key])
        return out


@dataclass(frozen=True)
class DpoResult:
    log: list[dict]  # one entry per optimizer step (TRL's metrics)
    pairs_used: int
    pairs_too_long: int
    seconds: float


def fitting(rows: list[dict], tok: Any, max_length: int) -> tuple[list[dict], int]:
    """The pairs whose prompt plus longer completion fit ``max_length`` tokens, and how many did not."""
    def tokens(messages: list[dict]) -> int:
        return len(chat.template(tok)(messages, tokenize=True, return_dict=True)["input_ids"])

    keep = [r for r in rows
            if max(tokens(r["prompt"] + r["chosen"]), tokens(r["prompt"] + r["rejected"])) <= max_length]
    return keep, len(rows) - len(keep)


def train_dpo(model: Any, tok: Any, rows: list[dict], cfg: DpoConfig, work: Path) -> DpoResult:
    """Train ``model`` (a peft model whose ``default`` adapter is C's, trainable) on ``rows``; the frozen
    reference adapter TRL adds is removed afterwards, so ``model`` holds the trained adapter alone."""
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    used, too_long = fitting(rows, tok, cfg.max_length)
    if not used:
        raise ValueError(f"no preference pair fits max_length {cfg.max_length} ({len(rows)} pairs)")
    pairs = Dataset.from_list([{k: r[k] for k in ("prompt", "chosen", "rejected")} for r in used])
    args = DPOConfig(output_dir=str(work), per_device_train_batch_size=cfg.batch_size, max_steps=cfg.steps,
                     learning_rate=cfg.lr, lr_scheduler_type="cosine", warmup_steps=cfg.warmup, beta=cfg.beta,
                     max_length=cfg.max_length, loss_type=list(cfg.loss_type), logging_steps=1, save_strategy="no",
                     report_to=[], use_cpu=model.device.type == "cpu", seed=cfg.seed, data_seed=cfg.seed,
                     bf16=cfg.precision == "bfloat16", gradient_checkpointing=False, dataloader_num_workers=0,
                     **({"loss_weights": list(cfg.loss_weights)} if cfg.loss_weights is not None else {}))
    trainer = DPOTrainer(model=model, args=args, train_dataset=pairs, processing_class=tok)
    if "ref" not in model.peft_config:  # TRL's fallback would make the base model the reference, not C
        raise RuntimeError("TRL did not copy the starting adapter into a reference adapter; the reference would "
                           "not be C (check the trl and peft versions against requirements.lock)")
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    model.delete_adapter("ref")
    log = [_entry(e) for e in trainer.state.log_history if "loss" in e]
    return DpoResult(log, len(used), too_long, round(seconds, 2))


def _entry(e: dict) -> dict:
    """A step's line: TRL's metrics under our names (rewards are beta-scaled log-ratio differences)."""
    keys = {"loss": "loss", "grad_norm": "grad_norm", "learning_rate": "lr", "rewards/accuracies": "reward_accuracy",
            "rewards/margins": "reward_margin", "rewards/chosen": "reward_chosen", "rewards/rejected": "reward_rejected",
            "logps/chosen": "logp_chosen", "logps/rejected": "logp_rejected"}
    out = {"step": int(e["step"]) - 1}
    for theirs, ours in keys.items():
        v = float(e[theirs]) if theirs in e else math.nan
        out[ours] = v
    return out
