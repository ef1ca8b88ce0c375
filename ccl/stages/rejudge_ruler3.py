"""Stage rejudge_ruler3 (issue 57): every published run's committed transcripts judged by ruler 3, beside
rulers 1 and 2; nothing regenerated, no published verdict or metric rewritten.

Per run it writes ruler 3's verdict rows (``by_run/<run>/verdicts.jsonl.gz``: the episode's place and
``ruler3``, the verdict) and metrics (``by_run/<run>/metrics_ruler3.json``, in the shape of
``metrics_ruler2.json``), beside the judge stage's files of rulers 1 and 2 under a folder of its own,
so the published study outputs keep their bytes. Over all runs: ``rejudge.json`` (per configuration,
pooled over the main splits and per split: successes under each ruler, and the episodes on which
rulers 2 and 3 disagree) and ``changed.jsonl`` (each such episode with its calls and answer).
"""
from __future__ import annotations

from pathlib import Path

from ..analysis.rejudge import Transcripts, by_config, changed_rows3, rejudged, tally3
from ..artifacts.inputs import split_rows
from ..artifacts.jsonio import write_json, write_jsonl
from ..judge.judging import ruler_metrics
from ..vocabulary import RULER1, RULER2, RULER3
from .rejudge import sources

RULERS_NOTE = {RULER1: "ccl/judge/validate.py: the pre-registered strict success (published results)",
               RULER2: "ccl/judge/ruler2.py: farm-resistant strict success (issue 37), post hoc",
               RULER3: "ccl/judge/ruler3/: repeats, unoffered names and claims against effects (issue 57), post hoc"}


def _write_run(out: Path, source: Transcripts, episodes: list[dict]) -> None:
    rows = [{"task_id": e["task_id"], "dataset": e["split"], "template": e["template"], RULER3: e[RULER3]}
            for e in episodes]
    folder = out / "by_run" / source.run
    write_jsonl(folder / "verdicts.jsonl.gz", rows)
    write_json(folder / "metrics_ruler3.json", ruler_metrics(rows, sorted({r["dataset"] for r in rows}), RULER3))


def run(data: Path, runs: Path, teacher: Path | None, out: Path) -> dict:
    """Re-judge every transcript under ``runs`` (and the teacher's passes under ``teacher``, if given)."""
    transcripts = sources(runs, teacher)
    splits = sorted({r["dataset"] for t in transcripts for r in t.rows})
    tasks = {t["id"]: t for s in splits for t in split_rows(data / "tasks", s)}
    episodes, records = [], {}
    for source in transcripts:
        mine = rejudged(tasks, source, with_ruler3=True)
        _write_run(out, source, mine)
        episodes += mine
        records.update({(source.run, r["task_id"]): r["record"] for r in source.rows})
    changed = changed_rows3(episodes, records)
    result = {"rulers": RULERS_NOTE, "episodes": len(episodes), "configs": by_config(episodes, tally3)}
    write_jsonl(out / "changed.jsonl", changed)
    write_json(out / "rejudge.json", {**result, "changed": len(changed)})
    return result
