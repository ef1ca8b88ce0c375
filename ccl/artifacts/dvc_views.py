"""What DVC's own views show: one small metrics file per configuration (``dvc metrics show`` prints
them as one compact table, ``dvc metrics diff`` compares experiments) and CSV series for ``dvc
plots`` (training loss per run, strict success per split with its interval, GRPO's monitors per run). Every number is
copied from the analysis summary or a run's step log, never recomputed.
"""
from __future__ import annotations

import csv
import io
from contextlib import ExitStack
from pathlib import Path

from .inputs import read_record, read_rows
from .jsonio import atomic_folder, atomic_write_bytes, write_json
from .shapes import GrpoStepLog, GrpoValLog, StepLog


def metrics(summary: dict) -> dict[str, dict[str, float]]:
    """Per configuration: strict success in percent by main split and pooled (``all``), and the
    write-up's (lenient) definition pooled (``all_writeup``)."""
    out: dict[str, dict[str, float]] = {}
    for row in summary["success_by_split"]["rows"]:
        cells = {k: v for k, v in row.items() if isinstance(v, dict) and "mean" in v}
        out[row["config"]] = {split: cell["mean"] for split, cell in cells.items()}
    for row in summary["leniency"]["rows"]:
        if row["split"] == "all" and row["config"] in out:  # the analysis pooled it over the main splits
            out[row["config"]]["all_writeup"] = row["writeup"]["mean"]
    return out


def success_rows(summary: dict) -> dict[str, list[dict]]:
    """Per split (main splits and ``all``): each configuration's strict success with its interval."""
    by_split: dict[str, list[dict]] = {}
    for row in summary["success_by_split"]["rows"]:
        for split, cell in row.items():
            if isinstance(cell, dict) and "mean" in cell:
                by_split.setdefault(split, []).append(
                    {"config": row["config"], "strict_success_pct": cell["mean"], "low": cell["low"],
                     "high": cell["high"], "n": cell["n"]})
    return by_split


def loss_rows(log: Path) -> list[dict]:
    return [{"step": r["step"], "loss": r["loss"]} for r in read_rows(log, "train", StepLog, need_rows=True)]


# GRPO's monitors (ccl.learn.grpo), one plot each: per step from train_log.jsonl, and the greedy validation
# readings from val_log.jsonl (step k: after k updates)
GRPO_SERIES = ("reward", "success", "kl", "zero_spread_groups", "flagged")
GRPO_VAL_SERIES = ("val_success", "val_flagged")


def is_grpo(run: Path) -> bool:
    summary = run / "summary.json"
    return summary.is_file() and read_record(summary, "train").get("method") == "grpo"


def grpo_rows(run: Path) -> dict[str, list[dict]]:
    """Per monitor, its (step, value) rows; steps without a value (no update: KL) are left out."""
    out: dict[str, list[dict]] = {}
    for name, series, shape in (("train_log.jsonl", GRPO_SERIES, GrpoStepLog),
                                ("val_log.jsonl", GRPO_VAL_SERIES, GrpoValLog)):
        rows = read_rows(run / name, "grpo_train", shape, need_rows=True)
        for key in series:
            out[key] = [{"step": r["step"], key: r[key]} for r in rows if r.get(key) is not None]
    return out


def _csv(rows: list[dict]) -> bytes:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue().encode()


def write(summary_path: Path, runs: Path, metrics_dir: Path, plots_dir: Path) -> dict[str, int]:
    """Rebuild both folders whole (a configuration or run that is gone leaves no file behind), each in a
    temporary folder swapped in only when both are complete: a bad input leaves the previous views as they were."""
    summary = read_record(summary_path, "analyze")
    logs = sorted(runs.glob("*/train_log.jsonl"))
    with ExitStack() as stack:
        metrics_tmp, plots_tmp = (stack.enter_context(atomic_folder(f)) for f in (metrics_dir, plots_dir))
        table = metrics(summary)
        for config, values in table.items():
            write_json(metrics_tmp / f"{config}.json", values)
        for split, rows in success_rows(summary).items():
            atomic_write_bytes(plots_tmp / "strict_success" / f"{split}.csv", _csv(rows))
        for log in logs:
            _write_run(log, plots_tmp)
    return {"configs": len(table), "runs": len(logs)}


def _write_run(log: Path, plots: Path) -> None:
    """A run's series: GRPO's monitors, or any other method's training loss."""
    run = log.parent
    series = grpo_rows(run) if is_grpo(run) else {"train_loss": loss_rows(log)}
    for key, rows in series.items():
        if rows:
            folder = key if key == "train_loss" else f"grpo_{key}"
            atomic_write_bytes(plots / folder / f"{run.name}.csv", _csv(rows))
