"""The repository layout: every default path a script uses.

The library (``ccl``) never picks a path or reads the environment: the scripts pass what
they choose here, or what the command line overrides. Imports nothing from ccl, so a
stage that uses it depends on no library module through it.
"""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARAMS = ROOT / "params.yaml"
DVC_YAML = ROOT / "dvc.yaml"
DATA = ROOT / "data" / "v1"  # --data: the data root; task splits are in its tasks/ folder
RESULTS = ROOT / "results"
DAGGER = DATA / "dagger"  # one folder per DAgger iteration (stage dagger_rollout)
REPLAY_GOLDEN = DATA / "replay"  # the frozen decision points (stage build_replay)
VAL_REPLAY = RESULTS / "learn" / "val_replay"  # the validation replay set's answers, one folder per run (issue 40)
REPLAY_RUNS = RESULTS / "replay"  # graded decisions and replay metrics, one folder per configuration
EVAL_RUNS = RESULTS / "runs"  # evaluation transcripts, verdicts and metrics, one folder per configuration
TRAIN_RUNS = ROOT / "runs"  # adapters, one folder per training run
VAL_BASELINE = TRAIN_RUNS / "val_baseline.json"  # the untrained student's validation loss, shared by every run
ARCHIVE = ROOT / "archive"  # training runs that broke the stability rule
STABILITY_LOG = ROOT / "logs" / "stability.jsonl"
SITE = ROOT / "web" / "public"
MODEL_REGISTRY = ROOT / "configs" / "models.yaml"
STUDY2 = ROOT / "study2"  # study 2's pipeline and parameters (docs/preregistration-2.md)
STUDY2_PARAMS = STUDY2 / "params.yaml"
STUDY2_DATA = ROOT / "data" / "study2"  # its fresh evaluation tasks (tasks/) and C's rebuilt rows
STUDY2_RESULTS = RESULTS / "study2"  # its transcripts, verdicts, power, analysis and report page
STUDY2_RUNS = STUDY2 / "runs"  # its adapters (not under runs/, which the first study's report stages read whole)
STUDY2_PREREG = ROOT / "docs" / "preregistration-2.md"
STUDY2_SITE = ROOT / "web" / "study2"  # its page on the site (web/public is the first study's export)
BFCL_SAMPLE = ROOT / "data" / "bfcl" / "sample.json"  # the BFCL questions every configuration answers
BFCL_RESULTS = RESULTS / "bfcl"  # the verdicts and the table (stage bfcl_score)
BFCL_ANSWERS = BFCL_RESULTS / "answers"  # one folder of answers per configuration (stage bfcl)

