"""The artifacts the report and the site read, each with the stage that writes it.

Reporting reads only these files (never the library's internals), so a rerun that
changes a result changes the report. A missing artifact is a value of its own kind,
``Missing``, that says which file and which stage produces it, so every page can print
that instead of a blank table.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..artifacts.inputs import read_record, read_rows
from ..artifacts.jsonio import sha256_file
from ..artifacts.shapes import GrpoStepLog, GrpoValLog, Shape, StepLog
from ..config import read_yaml
from ..errors import InputError

# The report's layout, the one place it is declared: the root is a repository-shaped folder
# the calling script passes (--root), and these names, relative to it, are also what the
# pages show as each number's source, so that a reader can find and hash the file.
SUMMARY = "results/summary.json"
REPLAY_SUMMARY = "results/replay_summary.json"
DATA_MANIFEST = "data/v1/manifest.json"
LEAKAGE = "data/v1/leakage_audit.json"
TEACHER_SUMMARY = "data/v1/teacher/summary.json"
VARIANTS_LISTING = "data/v1/variants/variants.json"
STABILITY_LOG = "logs/stability.jsonl"
TRAIN_RUNS = "runs"  # runs/<run>/summary.json and train_log.jsonl
ARCHIVE = "archive"  # archive/<run>/reason.json
EVAL_RUNS = "results/runs"  # results/runs/<name>/episodes.jsonl.gz and verdicts.jsonl.gz
TASKS = "data/v1/tasks"
REPORT = "results/report.md"
REPLAY_GOLDEN = "data/v1/replay"  # data/v1/replay/<split>.jsonl: the frozen decisions
REPLAY_RUNS = "results/replay"  # results/replay/<name>/verdicts.jsonl.gz: graded actions
SERVE_SUMMARY = "results/serve/summary.json"
POWER = "results/power.json"
PREREGISTRATION = "docs/preregistration.md"  # quoted by its SHA-256, never parsed
TEACHER_PILOT = "experiments/teacher_coverage_pilot/result.json"
# the learning arms (issue 40)
EXPERT_COVERAGE = "results/learn/expert_coverage.json"
DAGGER = "data/v1/dagger"  # data/v1/dagger/iter<k>/stats.json: one DAgger iteration's data
ERR_STATS = "data/v1/err/stats.json"
ERR_CLUSTERS = "results/learn/err_clusters.json"
REPEAT_AUDIT = "results/learn/repeat_audit.json"  # issue 41, post hoc
# the external yardstick (issue 42)
BFCL_SUMMARY = "results/bfcl/summary.json"
BFCL_LEADERBOARD = "configs/bfcl_leaderboard.yaml"  # published numbers, copied by hand with their source
# the study's one run, timed stage by stage (issue 43): each attempt's record, derived from its time-stamped
# log by `python -m scripts.stage_times LOG --json`; the last is the run every number comes from
RUN_ATTEMPTS = ("experiments/cpu_rerun_attempt_1/stage_times.json", "experiments/cpu_rerun_attempt_2/stage_times.json")
RUN_TIMES = RUN_ATTEMPTS[-1]
# ruler 3 (issue 57) beside rulers 1 and 2 on every published transcript; changed.jsonl beside it lists each
# episode rulers 2 and 3 judge differently (named in the notes, not read)
RULER3_REJUDGE = "results/ruler3/study1/rejudge.json"
RULER3_CHANGED = "results/ruler3/study1/changed.jsonl"
# what the report says where results/summary.json was written before the primary contrasts existed
SUMMARY_WITHOUT_PRIMARY = f"`{SUMMARY}` predates the primary contrasts; rerun the `analyze` stage."
# ... and before the judge stages wrote ruler 2's verdicts beside ruler 1's (ccl/judge/ruler2.py)
SUMMARY_WITHOUT_RULER2 = f"`{SUMMARY}` predates ruler 2's verdicts; rerun the judge and analyze stages."

# artifact -> (what it is, the stage that writes it)
PRODUCERS: dict[str, tuple[str, str]] = {
    SUMMARY: ("statistics over every evaluated configuration", "analyze"),
    REPLAY_SUMMARY: ("decision-point replay statistics and failure map", "analyze_replay"),
    DATA_MANIFEST: ("dataset hashes, sizes and composition", "build_datasets"),
    LEAKAGE: ("train/eval leakage audit", "build_datasets"),
    TEACHER_SUMMARY: ("teacher-generation record", "accept_teacher"),
    VARIANTS_LISTING: ("SFT training variants", "build_sft"),
    STABILITY_LOG: ("stability-rule record of every training run", "train"),
    SERVE_SUMMARY: ("student, teacher and fallback chain served through the OpenAI-compatible server", "serve_eval"),
    POWER: ("the design's minimum detectable effects", "power"),
    TEACHER_PILOT: ("teacher coverage pilot on training tasks", "bash experiments/teacher_coverage_pilot/run.sh"),
    EXPERT_COVERAGE: ("the any-state expert's reach from deviated states", "expert_coverage"),
    ERR_STATS: ("the error-driven round's training set", "err_data"),
    ERR_CLUSTERS: ("the validation replay set per coordinate, before and after", "err_compare"),
    REPEAT_AUDIT: ("ruler-2 successes that repeat an answered call", "repeat_audit"),
    BFCL_SUMMARY: ("every configuration on BFCL, checked by BFCL's checker", "bfcl_score"),
    BFCL_LEADERBOARD: ("published BFCL numbers with their source", "a hand copy from the BFCL leaderboard's data files"),
    RULER3_REJUDGE: ("every published transcript judged by rulers 1, 2 and 3", "rejudge_ruler3"),
    **{p: ("a timed attempt of the study's run, stage by stage",
           f"python -m scripts.stage_times {p.rsplit('/', 1)[0]}/repro.log.gz --json {p}") for p in RUN_ATTEMPTS},
}


@dataclass(frozen=True)
class Missing:
    """An artifact that is not there; renders as a sentence naming it and its stage."""

    path: str
    stage: str
    what: str = ""

    def message(self) -> str:
        what = f" ({self.what})" if self.what else ""
        if " " in self.stage:  # a command outside the pipeline (a pilot), not a stage name
            return f"Not available: `{self.path}`{what} is missing; it is written by `{self.stage}`."
        return (f"Not available: `{self.path}`{what} is missing; it is written by the "
                f"`{self.stage}` stage (`dvc repro {self.stage}`).")


@dataclass
class Artifacts:
    """Every artifact the report reads, loaded once from a repository root."""

    root: Path
    files: dict[str, Any] = field(default_factory=dict)  # path -> parsed content or Missing
    runs: dict[str, dict] = field(default_factory=dict)  # training run name -> summary.json
    train_logs: dict[str, list[dict]] = field(default_factory=dict)  # run name -> train_log.jsonl rows
    archived: dict[str, dict] = field(default_factory=dict)  # archived run -> its reason record
    preference: dict[str, dict] = field(default_factory=dict)  # DPO run name -> summary.json (method "dpo")
    preference_logs: dict[str, list[dict]] = field(default_factory=dict)  # DPO run name -> its step log
    rl: dict[str, dict] = field(default_factory=dict)  # GRPO run name -> summary.json (method "grpo")
    rl_logs: dict[str, list[dict]] = field(default_factory=dict)  # GRPO run name -> its step log (the monitors)
    rl_val: dict[str, list[dict]] = field(default_factory=dict)  # GRPO run name -> its validation readings
    rl_config: dict[str, dict] = field(default_factory=dict)  # GRPO run name -> its config.json
    dagger: dict[int, dict] = field(default_factory=dict)  # DAgger iteration -> its stats.json
    preregistration_sha256: str | None = None  # of PREREGISTRATION, None when the file is absent

    def get(self, path: str) -> Any:
        return self.files[path]


def _read(path: Path, stage: str, shape: type[Shape] | None = None) -> Any:
    """A YAML file, a JSON Lines file's rows (checked against ``shape``) or a JSON object, read by the
    one reader (``ccl.artifacts.inputs``): a bad file is one line naming it and ``stage``."""
    if path.suffix == ".yaml":
        return read_yaml(path, InputError)
    if path.suffix == ".jsonl":
        return read_rows(path, stage, shape)
    return read_record(path, stage)


def load_one(root: Path, rel: str, stage: str, what: str = "") -> Any:
    """The artifact ``rel`` under ``root``, parsed, or ``Missing`` naming it and ``stage`` when it is absent."""
    p = Path(root) / rel
    return _read(p, stage) if p.exists() else Missing(rel, stage, what)


def load_artifacts(root: Path) -> Artifacts:
    root = Path(root)
    art = Artifacts(root=root)
    for rel, (what, stage) in PRODUCERS.items():
        art.files[rel] = load_one(root, rel, stage, what)
    for summary in sorted((root / TRAIN_RUNS).glob("*/summary.json")):
        name, record = summary.parent.name, _read(summary, "train")
        log = summary.parent / "train_log.jsonl"
        method = record.get("method")
        # DPO and GRPO runs (stages dpo_train, grpo_train) have other losses and metrics: each is tabled on its own
        runs, logs = {"dpo": (art.preference, art.preference_logs),
                      "grpo": (art.rl, art.rl_logs)}.get(method, (art.runs, art.train_logs))
        runs[name] = record
        stage = {"dpo": "dpo_train", "grpo": "grpo_train"}.get(method, "train")
        logs[name] = _read(log, stage, GrpoStepLog if method == "grpo" else StepLog) if log.exists() else []
        if method == "grpo":
            val = summary.parent / "val_log.jsonl"
            art.rl_val[name] = _read(val, stage, GrpoValLog) if val.exists() else []
            config = summary.parent / "config.json"
            art.rl_config[name] = _read(config, stage) if config.exists() else {}
    prereg = root / PREREGISTRATION
    art.preregistration_sha256 = sha256_file(prereg) if prereg.is_file() else None
    for reason in sorted((root / ARCHIVE).glob("*/reason.json")):
        art.archived[reason.parent.name] = _read(reason, "train")
    for stats in (root / DAGGER).glob("iter*/stats.json"):
        art.dagger[int(stats.parent.name[4:])] = _read(stats, "dagger_rollout")
    art.dagger = dict(sorted(art.dagger.items()))
    return art

# Study 2 (docs/preregistration-2.md): its page reads these, relative to the same root
STUDY2_PREREG = "docs/preregistration-2.md"
STUDY2_SUMMARY = "results/study2/summary.json"
STUDY2_POWER = "results/study2/power.json"
STUDY2_TIMES = "results/study2/stage_times.json"  # scripts/timed_repro.sh writes it after the run
STUDY2_POOL_AUDIT = "data/study2/pool_audit.json"
STUDY2_DEVIATIONS = "study2/deviations.yaml"  # the run's deviations from the pre-registration, one sentence each
STUDY2_RUNS = "study2/runs"  # each adapter's summary.json; GRPO's step logs and samples
STUDY2_DAGGER = "data/study2/dagger"  # each DAgger iteration's stats.json
STUDY2_RULER3 = "results/ruler3/study2/rejudge.json"  # its transcripts judged by rulers 1, 2 and 3 (issue 57)
STUDY2_RULER3_CHANGED = "results/ruler3/study2/changed.jsonl"
STUDY2_RULER3_STAGE = "study2/dvc.yaml:rejudge_ruler3"  # the stage that writes both
