"""Stage hub_adapter: a trained run's adapter as a Hub-ready folder with a model card.

    python -m scripts.hub_adapter C_s0       # runs/C_s0 + results/runs/C_s0/metrics.json -> runs/C_s0/hub

Writes runs/<run>/hub/: README.md (the model card: base Hub id, training data hash, recipe, losses,
strict success by split with intervals, hashes), adapter_config.json (the base named by its Hub id)
and adapter_model.safetensors (the trained weights, unchanged). Loads with
``AutoPeftModelForCausalLM.from_pretrained("runs/<run>/hub")``.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.artifacts.jsonio import read_json
from ccl.models.adapter_card import write_hub_folder
from ccl.vocabulary import RUNS

from .cli import stage_parser
from .layout import EVAL_RUNS, TRAIN_RUNS
from .model_store import model_store


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__, params=False, data=False)
    ap.add_argument("run", help=f"a run of ccl.vocabulary.RUNS: {', '.join(RUNS)}")
    ap.add_argument("--runs", type=Path, default=TRAIN_RUNS)
    ap.add_argument("--results", type=Path, default=EVAL_RUNS)
    args = ap.parse_args(argv)
    run_dir = args.runs / args.run
    out = write_hub_folder(run_dir, args.results / args.run / "metrics.json", model_store().spec, run_dir / "hub")
    print(f"hub_adapter: {out} (base {read_json(out / 'adapter_config.json')['base_model_name_or_path']})")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("hub_adapter", main))
