"""Stage grpo_train: C_grpo_<reward>, GRPO on episodes in the world from C's adapter, with C as the frozen
KL reference, against the reward the run's name says: sparse, decomposed or dense (issue 41;
``ccl.learn.grpo``).

    python -m scripts.grpo_train C_grpo_sparse_s0 --init runs/C_s0   # params.yaml grpo: G, steps, beta, ...
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import grpo_train

from .cli import stage_parser
from .layout import TRAIN_RUNS
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("run", help="the run to write, a GRPO arm's (C_grpo_sparse_s0, C_grpo_decomposed_s0, C_grpo_dense_s0)")
    ap.add_argument("--init", type=Path, required=True, help="the run folder whose adapter GRPO starts from (C's)")
    ap.add_argument("--runs", type=Path, default=TRAIN_RUNS)
    ap.add_argument("--device", default=None, help="cpu | cuda | mps (default: the best available)")
    ap.add_argument("--model-path", default=None, help="local copy of a hub student")
    args = ap.parse_args(argv)
    p = grpo_train.plan(args.params, args.profile, args.run, args.data)
    c = p.cfg
    print(f"grpo_train {p.run}: reward {p.design}, from {args.init}, profile {p.profile}, {c.steps} steps x "
          f"{c.tasks_per_step} tasks x G={c.group_size}, T={c.temperature}, beta {c.beta}, lr {c.lr}", flush=True)

    def show(rec: dict) -> None:
        kl = "- (no group had spread: no update)" if rec["kl"] is None else f"{rec['kl']:.4f}"
        print(f"  step {rec['step']:>3}: reward {rec['reward']:.3f} (success {rec['success']:.3f}), zero-spread "
              f"{rec['zero_spread_groups']:.2f}, kl {kl}, flagged {rec['flagged']:.2f}; sample "
              f"{rec['sample_s']:.0f} s, update {rec['update_s']:.0f} s", flush=True)

    s = grpo_train.run(p, model_store(), args.init, args.runs, args.device, args.model_path, show)
    print(f"grpo_train {p.run}: validation success {s['val_success_before']:.3f} -> {s['val_success_after']:.3f}; "
          f"{s['train_minutes']:.1f} min; adapter {s['adapter_sha256'][:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("grpo_train", main))
