#!/usr/bin/env bash
# The README's first command with every output line prefixed by the Unix time, for
# scripts/stage_times.py. Run from a fresh clone's root:  bash scripts/timed_repro.sh LOG
set -o pipefail
log=${1:?usage: bash scripts/timed_repro.sh LOG}
( bash scripts/install.sh && . .venv/bin/activate && dvc repro ) 2>&1 \
  | while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done > "$log"
status=${PIPESTATUS[0]}
printf '%s exit %s\n' "$(date +%s.%N)" "$status" >> "$log"
exit "$status"
