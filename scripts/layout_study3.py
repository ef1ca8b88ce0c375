"""Study 3's paths (docs/preregistration-3.md). Kept apart from ``scripts/layout.py``, which every published
stage of studies 1 and 2 and of the cpu-scale pipeline depends on: adding study 3 there would re-lock them all."""
from __future__ import annotations

from .layout import RESULTS, ROOT

STUDY3 = ROOT / "study3"  # study 3's pipeline, parameters, design and deviations
STUDY3_PARAMS = STUDY3 / "params.yaml"
STUDY3_DESIGN = STUDY3 / "design.yaml"
STUDY3_DATA = ROOT / "data" / "study3"  # its fresh evaluation tasks and DAgger's data
STUDY3_RESULTS = RESULTS / "study3"  # its transcripts and verdicts, power, analysis and report page
STUDY3_RUNS = STUDY3 / "runs"  # its own adapters (C and seed 0 of GRPO and DPO are scale/runs')
STUDY3_PREREG = ROOT / "docs" / "preregistration-3.md"
STUDY3_SITE = ROOT / "web" / "study3"  # its page on the site

# what study 3's page reads, relative to the root it is given (ccl.report.study3.Files)
STUDY3_PAGE_FILES = dict(
    prereg="docs/preregistration-3.md", design="study3/design.yaml", summary="results/study3/summary.json",
    power="results/study3/power.json", times="results/study3/stage_times.json",
    pool_audit="data/study3/pool_audit.json", deviations="study3/deviations.yaml",
    bfcl="results/study3/bfcl/summary.json", dagger="data/study3", dpo_stats="data/scale/dpo/stats.json")
