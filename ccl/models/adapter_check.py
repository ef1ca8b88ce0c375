"""Is a retrained run the published one? Bitwise where the CPU kernel path matches; otherwise within a
stated tolerance on the adapter's weights and the run's losses.

Training is deterministic on one kernel path, but float32 reductions run in another order on another
instruction set (AVX2 against AVX-512, say), so a run retrained elsewhere differs in the last bits and
the differences grow over the steps. What such a run must still match is set in :data:`TOLERANCE`, from
a measured retraining on another kernel path (README, "Verify hashes").
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..artifacts.jsonio import read_json, read_jsonl, sha256_file
from ..errors import InputError
from .registry import ADAPTER_FILES


@dataclass(frozen=True)
class Tolerance:
    weight_rel: float  # per tensor: ||retrained - published|| / ||published||
    loss_rel: float  # per logged step, and the validation loss: |retrained - published| / published


# Measured 2026-12-02: the cpu profile's C_s0 retrained on the AVX2 kernel path (ATEN_CPU_CAPABILITY=avx2,
# MKL_ENABLE_INSTRUCTIONS=AVX2, DNNL_MAX_CPU_ISA=AVX2) against the published run from the AVX-512 path:
# another adapter hash, tensors at most 3.75e-3 apart (relative), step losses 1.66e-4, validation loss
# 5.1e-5; its 128 greedy evaluation transcripts and verdicts were the published ones, byte for byte.
# The tolerance leaves about 5x that room.
TOLERANCE = Tolerance(weight_rel=0.02, loss_rel=0.001)


@dataclass(frozen=True)
class Comparison:
    bitwise: bool
    weight_rel: float  # the largest over tensors
    weight_tensor: str  # which
    loss_rel: float  # the largest over steps
    loss_step: int
    val_loss_rel: float

    def within(self, tol: Tolerance = TOLERANCE) -> bool:
        """Weights byte-identical or within tolerance, and the logged losses within tolerance either way
        (identical adapters with other losses mean an altered log)."""
        return ((self.bitwise or self.weight_rel <= tol.weight_rel)
                and self.loss_rel <= tol.loss_rel and self.val_loss_rel <= tol.loss_rel)


def adapter_file(run: Path) -> Path:
    for name in ADAPTER_FILES:
        if (run / "adapter" / name).is_file():
            return run / "adapter" / name
    raise InputError(f"{run}: no adapter/{' or adapter/'.join(ADAPTER_FILES)}; pass a training run's folder "
                     f"(runs/<run>; `dvc pull train@<run>` fetches a published one)")


def compare(published: Path, retrained: Path) -> Comparison:
    from safetensors.numpy import load_file

    a_file, b_file = adapter_file(published), adapter_file(retrained)
    a, b = load_file(a_file), load_file(b_file)
    if a.keys() != b.keys() or any(a[k].shape != b[k].shape for k in a):
        raise InputError(f"{retrained}: its adapter's tensors differ in names or shapes from {published}'s: "
                         f"not the same recipe")
    rel = {k: _finite(float(np.linalg.norm((b[k] - a[k]).astype(np.float64))
                            / max(np.linalg.norm(a[k].astype(np.float64)), 1e-30))) for k in a}
    worst = max(rel, key=rel.get)
    la, lb = _losses(published), _losses(retrained)
    if la.keys() != lb.keys():
        raise InputError(f"{retrained}: logged steps {sorted(lb)[:3]}... differ from {published}'s: not the same recipe")
    step_rel = {s: _finite(abs(lb[s] - la[s]) / abs(la[s])) for s in la}
    worst_step = max(step_rel, key=step_rel.get)
    va, vb = _val_loss(published), _val_loss(retrained)
    return Comparison(bitwise=sha256_file(a_file) == sha256_file(b_file), weight_rel=rel[worst], weight_tensor=worst,
                      loss_rel=step_rel[worst_step], loss_step=worst_step, val_loss_rel=_finite(abs(vb - va) / abs(va)))


def _finite(x: float) -> float:
    """A NaN difference (a NaN weight or loss) counts as infinitely far, never as within tolerance."""
    return x if math.isfinite(x) else math.inf


def _losses(run: Path) -> dict[int, float]:
    try:
        return {r["step"]: float(r["loss"]) for r in read_jsonl(run / "train_log.jsonl")}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"{run / 'train_log.jsonl'}: cannot read the step losses ({type(e).__name__}: {e})") from None


def _val_loss(run: Path) -> float:
    try:
        return float(read_json(run / "summary.json")["val_loss"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"{run / 'summary.json'}: cannot read the validation loss ({type(e).__name__}: {e})") from None


def describe(c: Comparison, tol: Tolerance = TOLERANCE) -> str:
    if c.bitwise and c.within(tol):
        return "BITWISE: the adapters are byte-identical (same kernel path)"
    verdict = "WITHIN TOLERANCE" if c.within(tol) else "DIFFERS"
    return (f"{verdict}: adapter weights differ by at most {c.weight_rel:.2e} relative ({c.weight_tensor}; "
            f"tolerance {tol.weight_rel:g}), step losses by at most {c.loss_rel:.2e} (step {c.loss_step}), the "
            f"validation loss by {c.val_loss_rel:.2e} (tolerance {tol.loss_rel:g} for both)")
