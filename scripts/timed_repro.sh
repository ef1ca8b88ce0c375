#!/usr/bin/env bash
# A study's README command with every output line prefixed by the Unix time, for scripts/stage_times.py.
# Run from a fresh clone's root:
#   bash scripts/timed_repro.sh LOG dvc.yaml           # study 1 (docs/preregistration.md)
#   bash scripts/timed_repro.sh LOG study2/dvc.yaml    # study 2 (docs/preregistration-2.md)
# Study 2's page shows its run's stage times: after a successful run this keeps the log
# (results/study2/repro.log.gz), records the times (results/study2/stage_times.json), reruns the pipeline,
# which rebuilds only its page, and checks the page (scripts/report_study2.py --check).
set -o pipefail
log=${1:?usage: bash scripts/timed_repro.sh LOG PIPELINE (dvc.yaml or study2/dvc.yaml)}
target=${2:?usage: bash scripts/timed_repro.sh LOG PIPELINE (dvc.yaml or study2/dvc.yaml)}
( bash scripts/install.sh && . .venv/bin/activate && dvc repro "$target" ) 2>&1 \
  | while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$log"
status=${PIPESTATUS[0]}
printf '%s exit %s\n' "$(date +%s.%N)" "$status" >> "$log"
if [ "$status" = 0 ] && [ "$target" = study2/dvc.yaml ]; then
  # the log travels with the results (git); its stage times go on the page, which the second repro rebuilds
  # (the only stage that reads them); then the page is held to the pre-registration's promises
  # the environment on PATH: the stages' commands say `python`, which must be the .venv's (as in the run)
  machine="$(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
  ( . .venv/bin/activate \
    && gzip -c "$log" > results/study2/repro.log.gz \
    && python -m scripts.stage_times results/study2/repro.log.gz --json results/study2/stage_times.json \
         --machine "$machine" --commit "$(git rev-parse --short HEAD)" > /dev/null \
    && dvc repro study2/dvc.yaml \
    && python -m scripts.report_study2 --check )
  status=$?
fi
exit "$status"
