"""Stage dpo_train: C_dpo, DPO through TRL on the pairs of stage dpo_pairs, starting from C's adapter
with C as the frozen reference (issue 41; ``ccl.learn.dpo``).

    python -m scripts.dpo_train C_dpo_s0 --init runs/C_s0     # params.yaml dpo: beta, lr, steps, batch
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import dpo_train

from .cli import stage_parser
from .layout import DATA, TRAIN_RUNS
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("run", help="the run to write, a learning arm's (C_dpo_s0)")
    ap.add_argument("--init", type=Path, required=True, help="the run folder whose adapter DPO starts from (C's)")
    ap.add_argument("--pairs", type=Path, default=None, help=f"default: {DATA.name}/dpo/pairs.jsonl.gz in --data")
    ap.add_argument("--runs", type=Path, default=TRAIN_RUNS)
    ap.add_argument("--device", default=None, help="cpu | cuda | mps (default: the best available)")
    ap.add_argument("--model-path", default=None, help="local copy of a hub student")
    args = ap.parse_args(argv)
    p = dpo_train.plan(args.params, args.profile, args.run)
    pairs = args.pairs or args.data / "dpo" / "pairs.jsonl.gz"
    print(f"dpo_train {p.run}: from {args.init}, profile {p.profile}, {p.cfg.steps} steps x {p.cfg.batch_size} pairs, "
          f"beta {p.cfg.beta}, lr {p.cfg.lr}")
    s = dpo_train.run(p, model_store(), pairs, args.init, args.runs, args.device, args.model_path)
    print(f"dpo_train {p.run}: {s['pairs_used']} of {s['pairs']} pairs used ({s['pairs_too_long']} too long); loss "
          f"{s['final_loss']:.4f}, reward accuracy {s['final_reward_accuracy']:.2f}; {s['train_minutes']:.1f} min; "
          f"adapter {s['adapter_sha256'][:12]}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("dpo_train", main))
