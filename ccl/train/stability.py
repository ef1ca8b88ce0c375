"""The stability rule (section 4.1): a run whose smoothed loss or gradient norm blows up stops.

The write-up's first learning-rate pilot judged single-batch losses, which are noisy
enough at initialisation to pass a rate that later diverged; this rule smooths the
loss and adds a gradient-norm criterion. Its thresholds live in
``ccl.train.recipe.StabilityRule`` and were fixed before any run.
"""
from __future__ import annotations

import math
import statistics

from .recipe import StabilityRule


class StabilityMonitor:
    def __init__(self, rule: StabilityRule, warmup: int):
        self.rule, self.warmup = rule, max(warmup, 1)
        self.ema: float | None = None
        self.min_ema: float | None = None
        self.warmup_norms: list[float] = []
        self.over = 0

    def state(self) -> dict:
        return {"ema": self.ema, "min_ema": self.min_ema, "warmup_norms": self.warmup_norms, "over": self.over}

    def load(self, state: dict) -> None:
        self.ema, self.min_ema = state["ema"], state["min_ema"]
        self.warmup_norms, self.over = list(state["warmup_norms"]), state["over"]

    def update(self, step: int, loss: float, grad_norm: float) -> str | None:
        """Feed one optimizer step (0-based); returns why the run broke the rule, or None."""
        if not (math.isfinite(loss) and math.isfinite(grad_norm)):
            return f"non-finite loss or gradient at step {step} (loss {loss}, grad norm {grad_norm})"
        r = self.rule
        self.ema = loss if self.ema is None else r.ema * self.ema + (1 - r.ema) * loss
        if step < self.warmup:
            self.warmup_norms.append(grad_norm)
            return None
        self.min_ema = self.ema if self.min_ema is None else min(self.min_ema, self.ema)
        if self.ema > r.loss_ratio * self.min_ema and self.ema - self.min_ema > r.loss_margin:
            return (f"smoothed loss {self.ema:.4f} at step {step} exceeds {r.loss_ratio} x its minimum "
                    f"{self.min_ema:.4f} by more than {r.loss_margin}")
        ref = statistics.median(self.warmup_norms) if self.warmup_norms else grad_norm
        self.over = self.over + 1 if grad_norm > r.grad_ratio * ref else 0
        if self.over >= r.grad_patience:
            return (f"pre-clip gradient norm {grad_norm:.3g} at step {step} above {r.grad_ratio} x the warmup "
                    f"median {ref:.3g} for {self.over} consecutive steps")
        return None
