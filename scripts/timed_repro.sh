#!/usr/bin/env bash
# A study's README command with every output line prefixed by the Unix time, for scripts/stage_times.py.
# Run from a fresh clone's root:
#   bash scripts/timed_repro.sh LOG dvc.yaml           # study 1 (docs/preregistration.md)
#   bash scripts/timed_repro.sh LOG study2/dvc.yaml    # study 2 (docs/preregistration-2.md)
# Study 2's page shows its run's stage times: after a successful run this records them
# (results/study2/stage_times.json, from LOG) and reruns the pipeline, which rebuilds only its report.
set -o pipefail
log=${1:?usage: bash scripts/timed_repro.sh LOG PIPELINE (dvc.yaml or study2/dvc.yaml)}
target=${2:?usage: bash scripts/timed_repro.sh LOG PIPELINE (dvc.yaml or study2/dvc.yaml)}
( bash scripts/install.sh && . .venv/bin/activate && dvc repro "$target" ) 2>&1 \
  | while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$log"
status=${PIPESTATUS[0]}
printf '%s exit %s\n' "$(date +%s.%N)" "$status" >> "$log"
if [ "$status" = 0 ] && [ "$target" = study2/dvc.yaml ]; then
  machine="$(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
  .venv/bin/python -m scripts.stage_times "$log" --json results/study2/stage_times.json \
    --machine "$machine" --commit "$(git rev-parse --short HEAD)" \
    && .venv/bin/dvc repro study2/dvc.yaml
  status=$?
fi
exit "$status"
