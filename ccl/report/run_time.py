"""The measured time of a study's run, stage by stage, and the attempts before it.

A run record is what ``python -m scripts.stage_times LOG --json OUT`` writes from the time-stamped log
of ``bash scripts/timed_repro.sh``: the seconds before the first stage (the install), each stage's
seconds in run order, the total, the run's exit status and, for a run that stopped, the stage that
failed. The report prints the record as the table ``stage_times`` prints (the same rows, the same
rounding) and says, in one sentence built here, whether the run kept the pre-registered budget.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from .artifacts import RUN_ATTEMPTS, RUN_TIMES, Artifacts, Missing
from .tables import Table, missing_table

# docs/preregistration.md, "Design": issue 22 asks for at most 120 minutes of `dvc repro` on 2 cores, and
# "if it exceeds 120 minutes on the machine it ran on, the report says so" (tests/test_report_promises.py
# reads the number back from the pre-registration).
PREREGISTERED_BUDGET_MIN = 120

INSTALL_STEP = "install (before the first stage)"
TOTAL_STEP = "**all, install included**"


def minutes(seconds: float) -> str:
    """'9 min 34 s', or '58 s' under a minute (whole seconds, rounded)."""
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s} s" if m else f"{s} s"


def time_rows(record: Mapping[str, Any]) -> list[list[str]]:
    """The table's rows: the install, every stage in run order, then the total (bold, as the README's)."""
    return ([[INSTALL_STEP, minutes(record["install_s"])]]
            + [[r["stage"], minutes(r["seconds"])] for r in record["stages"]]
            + [[TOTAL_STEP, f"**{minutes(record['total_s'])}**"]])


def exceeds(record: Mapping[str, Any], budget_min: float) -> bool:
    return record["total_s"] > 60 * budget_min


def budget_sentence(record: Mapping[str, Any], budget_min: float) -> str:
    """The sentence the pre-registration asked for: the total, and whether it exceeded the budget."""
    took = f"The run took {minutes(record['total_s'])} in all, install included"
    if exceeds(record, budget_min):
        return (f"{took}, exceeding the pre-registered budget of {budget_min} minutes on the machine it ran on; "
                "as the pre-registration requires, the study was not shrunk after the fact.")
    return f"{took}, within the pre-registered budget of {budget_min} minutes on the machine it ran on."


def run_time_table(art: Artifacts) -> Table:
    title = "Run time of the study's one run, stage by stage (wall time from its time-stamped log)"
    record = art.get(RUN_TIMES)
    if isinstance(record, Missing):
        return missing_table("run_time", title, record)
    note = ("Each stage from its start to its lock-file update in `dvc repro`'s log (`python -m scripts.stage_times`); "
            "the install is the time before the first stage, the total first line to last.")
    return Table("run_time", title, ["step", "wall time"], time_rows(record), [RUN_TIMES], note=note)


def attempts_of(art: Artifacts) -> list[tuple[str, Mapping[str, Any]]]:
    """(folder, record) of every attempt whose record is present, in order (the published run last)."""
    return [(p.rsplit("/", 1)[0], r) for p in RUN_ATTEMPTS if not isinstance(r := art.get(p), Missing)]


def stopped(attempts: Sequence[tuple[str, Mapping[str, Any]]]) -> list[tuple[str, Mapping[str, Any]]]:
    """The attempts that did not finish (a non-zero exit status)."""
    return [(f, r) for f, r in attempts if r.get("exit_status") not in (0, None)]


def run_time_facts(art: Artifacts, budget_min: float = PREREGISTERED_BUDGET_MIN) -> dict[str, Any] | None:
    """The run's total and budget sentence, its provenance, and the attempts that stopped before it
    (None when the run's record is missing; the table then names the file)."""
    record = art.get(RUN_TIMES)
    if isinstance(record, Missing):
        return None
    earlier = [(f, r) for f, r in attempts_of(art) if f != RUN_TIMES.rsplit("/", 1)[0]]
    return {"total": minutes(record["total_s"]), "budget_min": budget_min,
            "exceeded": exceeds(record, budget_min), "sentence": budget_sentence(record, budget_min),
            "folder": RUN_TIMES.rsplit("/", 1)[0], "machine": record.get("machine"), "commit": record.get("commit"),
            "started": record.get("started_utc"), "exit": record.get("exit_status"),
            "stopped": [{"folder": f, "failed_stage": r.get("failed_stage"), "exit": r.get("exit_status"),
                         "elapsed": minutes(r["total_s"])} for f, r in stopped(earlier)]}
