#!/usr/bin/env bash
# A study's README command with every output line prefixed by the Unix time, for scripts/stage_times.py.
# Run from a fresh clone's root:
#   bash scripts/timed_repro.sh LOG dvc.yaml           # study 1 (docs/preregistration.md)
#   bash scripts/timed_repro.sh LOG study2/dvc.yaml    # study 2 (docs/preregistration-2.md)
#   bash scripts/timed_repro.sh LOG study3/dvc.yaml    # study 3 (docs/preregistration-3.md)
# Studies 2 and 3 show their run's stage times on their page: after a successful run this keeps the log
# (results/studyN/repro.log.gz), records the times (results/studyN/stage_times.json), reruns the pipeline,
# which rebuilds only its page, and checks the page (scripts/report_studyN.py --check).
set -o pipefail
log=${1:?usage: bash scripts/timed_repro.sh LOG PIPELINE (dvc.yaml, study2/dvc.yaml or study3/dvc.yaml)}
target=${2:?usage: bash scripts/timed_repro.sh LOG PIPELINE (dvc.yaml, study2/dvc.yaml or study3/dvc.yaml)}
( bash scripts/install.sh && . .venv/bin/activate && dvc repro "$target" ) 2>&1 \
  | while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$log"
status=${PIPESTATUS[0]}
printf '%s exit %s\n' "$(date +%s.%N)" "$status" >> "$log"
study=""
case "$target" in study2/dvc.yaml) study=study2 ;; study3/dvc.yaml) study=study3 ;; esac
if [ "$status" = 0 ] && [ -n "$study" ]; then
  # the log travels with the results (git); its stage times go on the page, which the second repro rebuilds
  # (the only stage that reads them); then the page is held to the pre-registration's promises
  # the environment on PATH: the stages' commands say `python`, which must be the .venv's (as in the run)
  machine="$(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores, kernel path $(.venv/bin/python -c 'from ccl.devices import cpu_record; print(cpu_record()["kernel_path"])')"
  ( . .venv/bin/activate \
    && gzip -c "$log" > "results/$study/repro.log.gz" \
    && python -m scripts.stage_times "results/$study/repro.log.gz" --json "results/$study/stage_times.json" \
         --machine "$machine" --commit "$(git rev-parse --short HEAD)" > /dev/null \
    && dvc repro "$study/dvc.yaml" \
    && python -m "scripts.report_$study" --check )
  status=$?
fi
exit "$status"
