#!/usr/bin/env bash
# The cpu-profile training-length pilot (PLAN.md). Run from the repository root after
# `dvc repro build_sft` (or `python -m scripts.build_sft`):
#   bash experiments/cpu_steps_pilot/run.sh
# Trains C_s0 on the cpu profile's C (128 oracle training episodes) for 16, 32 and 48 steps,
# each with the cpu recipe and only the step count (and checkpoint spacing) changed.
set -euo pipefail
here=experiments/cpu_steps_pilot
work=$here/work
mkdir -p "$work"
for steps in 16 32 48; do
  python - "$steps" "$work/steps_$steps.params.yaml" <<'PY'
import sys
import yaml
steps = int(sys.argv[1])
params = yaml.safe_load(open("params.yaml"))
params["train"]["profiles"]["cpu"].update({"steps": steps, "checkpoint_every": steps // 4})
yaml.safe_dump(params, open(sys.argv[2], "w"), sort_keys=False)
PY
  python -m scripts.train C_s0 --params "$work/steps_$steps.params.yaml" --profile cpu \
    --runs "$work/runs/steps_$steps" --archive "$work/archive/steps_$steps" --stability-log "$work/stability.jsonl" \
    || echo "steps $steps: exit $?"
done
python - <<'PY'
import json, pathlib
here = pathlib.Path("experiments/cpu_steps_pilot")
rows = []
for steps in (16, 32, 48):
    s = here / "work" / "runs" / f"steps_{steps}" / "C_s0" / "summary.json"
    a = here / "work" / "archive" / f"steps_{steps}" / "C_s0" / "reason.json"
    if s.exists():
        d = json.loads(s.read_text())
        rows.append({"steps": steps, "stability": d["stability"], "val_loss_before": d["val_loss_before"],
                     "val_loss": d["val_loss"], "final_train_loss": d["final_train_loss"],
                     "train_minutes": d["train_minutes"]})
    elif a.exists():
        rows.append({"steps": steps, "stability": "broken", "reason": json.loads(a.read_text())["reason"]})
passed = [r for r in rows if r["stability"] == "passed"]
best = min(r["val_loss"] for r in passed) if passed else None
# PLAN.md's rule: the smallest step count within 5% of the lowest validation loss
chosen = min((r["steps"] for r in passed if r["val_loss"] <= 1.05 * best), default=None)
result = {"rule": "smallest steps with val_loss <= 1.05 x the lowest (stable candidates)", "runs": rows,
          "lowest_val_loss": best, "selected_steps": chosen}
(here / "result.json").write_text(json.dumps(result, indent=2) + "\n")
print(json.dumps(result, indent=2))
PY
