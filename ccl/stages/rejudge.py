"""Stage rejudge: every committed transcript judged again by ruler 1 and ruler 2 (issue 37)."""
from __future__ import annotations

from pathlib import Path

from ..analysis.rejudge import Transcripts, by_config, changed_rows, config_of, rejudged
from ..artifacts.inputs import read_rows, split_rows
from ..artifacts.jsonio import write_json, write_jsonl
from ..errors import InputError
from ..vocabulary import RULER1, RULER2

EPISODES = "episodes.jsonl.gz"  # an evaluation run's transcripts (stage evaluate)
TEACHER_PASSES = ("pass1", "pass2")  # the teacher's transcripts on the training pool (stages distill*)
TEACHER_CONFIG = "teacher_acceptance"  # how the report names the teacher's training-pool transcripts


def sources(runs: Path, teacher: Path | None) -> list[Transcripts]:
    """Every run folder of ``runs`` with transcripts, then the teacher's passes (none without ``teacher``:
    study 2 has no teacher of its own)."""
    out = [Transcripts(config_of(d.name), d.name, read_rows(d / EPISODES, "evaluate"))
           for d in sorted(runs.iterdir()) if (d / EPISODES).is_file()]
    if not out:
        raise InputError(f"{runs}: no <run>/{EPISODES}; run the evaluate stages first")
    for name in TEACHER_PASSES if teacher is not None else ():
        out.append(Transcripts(TEACHER_CONFIG, name, read_rows(teacher / f"{name}.jsonl.gz", "distill")))
    return out


def run(data: Path, runs: Path, teacher: Path, out: Path) -> dict:
    """Re-judge every transcript; write ``out/rejudge.json`` (the tallies) and ``out/changed.jsonl``
    (the episodes whose verdict changed), and return the tallies."""
    transcripts = sources(runs, teacher)
    splits = sorted({r["dataset"] for t in transcripts for r in t.rows})
    tasks = {t["id"]: t for s in splits for t in split_rows(data / "tasks", s)}
    episodes = [e for t in transcripts for e in rejudged(tasks, t)]
    result = {"rulers": {RULER1: "ccl/judge/validate.py: the pre-registered strict success (published results)",
                         RULER2: "ccl/judge/ruler2.py: farm-resistant strict success, post hoc"},
              "episodes": len(episodes), "configs": by_config(episodes)}
    changed = changed_rows(episodes)
    write_jsonl(out / "changed.jsonl", changed)
    write_json(out / "rejudge.json", {**result, "changed": len(changed)})
    return result
