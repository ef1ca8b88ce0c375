"""Stage replay: one configuration answers every golden decision point once, graded by code.

    python -m scripts.replay --name A_base
    python -m scripts.replay --name C_s0 --adapter runs/C_s0

Reads data/v1/replay/<split>.jsonl (stage build_replay) and the task files; writes
results/replay/<name>/actions.jsonl.gz (the model's text per decision) and generation.json
(model, splits, decisions per second). Stage replay_judge grades them.
"""
from __future__ import annotations

import sys
from pathlib import Path

from tqdm import tqdm

from ccl.artifacts.boundary import run_stage
from ccl.stages import evaluate, replay

from .cli import stage_parser
from .layout import REPLAY_GOLDEN, REPLAY_RUNS
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--name", required=True, help="a baseline, or a trained run's name with --adapter")
    ap.add_argument("--adapter", type=Path, default=None)
    ap.add_argument("--golden", type=Path, default=REPLAY_GOLDEN)
    ap.add_argument("--out", type=Path, default=REPLAY_RUNS)
    ap.add_argument("--model-path", default=None, help="local copy of a hub model")
    args = ap.parse_args(argv)
    plan = evaluate.plan(args.params, args.profile, args.name, args.adapter, args.data)
    with tqdm(unit="decision") as bar:
        def progress(done: int, total: int) -> None:
            bar.total, bar.n = total, done
            bar.refresh()

        e = replay.run(plan, model_store(), args.golden, args.out, args.model_path, progress)["efficiency"]
    print(f"replay {args.name}: {e['decisions']} decisions answered in {e['wall_s']} s "
          f"({e['decisions_per_s']} decisions/s)")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("replay", main))
