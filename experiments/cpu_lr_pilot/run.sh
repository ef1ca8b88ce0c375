#!/usr/bin/env bash
# The cpu-profile learning-rate pilot (PLAN.md). Run from the repository root:
#   bash experiments/cpu_lr_pilot/run.sh
# Data: the first 128 oracle training episodes (the cpu profile's C budget) and the
# oracle validation episodes, from data/v1 as build_datasets wrote it.
set -euo pipefail
here=experiments/cpu_lr_pilot
work=$here/work
mkdir -p "$work/data/variants" "$work/data/sft"
head -n 128 data/v1/sft/oracle_train.jsonl > "$work/data/variants/C.jsonl"
cp data/v1/sft/oracle_val.jsonl "$work/data/sft/oracle_val.jsonl"
# One params file per learning rate: params.yaml with the cpu recipe's lr and lr_min replaced.
# (result.json was produced when the pilot used 8 episodes per step, then the cpu recipe's value;
# this script runs today's stage interface and recipe with only the learning rate varied.)
for cfg in "$here"/configs/*.json; do
  name=$(basename "$cfg" .json)
  python - "$cfg" "$work/$name.params.yaml" <<'PY'
import json, sys
import yaml
recipe = json.load(open(sys.argv[1]))["recipe"]
params = yaml.safe_load(open("params.yaml"))
params["train"]["profiles"]["cpu"].update(recipe)
yaml.safe_dump(params, open(sys.argv[2], "w"), sort_keys=False)
PY
  python -m scripts.train C_s0 --params "$work/$name.params.yaml" --profile cpu --data "$work/data" \
    --runs "$work/runs/$name" --archive "$work/archive/$name" --stability-log "$work/stability.jsonl" \
    || echo "$cfg: exit $?"
done
python - <<'PY'
import json, pathlib
work = pathlib.Path("experiments/cpu_lr_pilot/work")
rows = []
for cfg in sorted(pathlib.Path("experiments/cpu_lr_pilot/configs").glob("*.json")):
    s = work / "runs" / cfg.stem / "C_s0" / "summary.json"
    a = work / "archive" / cfg.stem / "C_s0" / "reason.json"
    lr = json.loads(cfg.read_text())["recipe"]["lr"]
    if s.exists():
        d = json.loads(s.read_text())
        rows.append({"config": cfg.stem, "lr": lr, "stability": "passed", "val_loss_before": d["val_loss_before"],
                     "val_loss": d["val_loss"], "final_train_loss": d["final_train_loss"], "train_minutes": d["train_minutes"]})
    elif a.exists():
        rows.append({"config": cfg.stem, "lr": lr, "stability": "broken", "reason": json.loads(a.read_text())["reason"]})
passed = [r for r in rows if r["stability"] == "passed"]
best = min(passed, key=lambda r: r["val_loss"]) if passed else None
# the rule in PLAN.md: within 2% of the best validation loss, the smaller learning rate wins
chosen = min((r for r in passed if r["val_loss"] <= best["val_loss"] * 1.02), key=lambda r: r["lr"]) if best else None
result = {"runs": rows, "selected": chosen and chosen["config"]}
(pathlib.Path("experiments/cpu_lr_pilot") / "result.json").write_text(json.dumps(result, indent=2) + "\n")
print(json.dumps(result, indent=2))
PY
