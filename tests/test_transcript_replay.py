"""The committed transcripts replay to the very same records: stepping a fresh Episode with each
recorded assistant text gives, byte for byte, the record the run wrote. The runtime's fault paths
(transactional tools, enforced time limits, the linear-time parser) must not move a normal episode."""
from __future__ import annotations

from pathlib import Path

import pytest

from ccl.artifacts.jsonio import dumps, read_jsonl
from ccl.episode.runtime import Episode

ROOT = Path(__file__).resolve().parents[1]
RUNS = sorted(p for p in (ROOT / "results" / "runs").iterdir() if (p / "episodes.jsonl.gz").is_file())
TASKS = ROOT / "data" / "v1" / "tasks"


@pytest.fixture(scope="module")
def tasks() -> dict[tuple[str, str], dict]:
    if not TASKS.is_dir():
        pytest.skip("data/v1/tasks is not checked out (dvc pull)")
    return {(f.stem, t["id"]): t for f in sorted(TASKS.glob("*.jsonl")) for t in read_jsonl(f)}


def replayed(task: dict, record: dict) -> dict:
    """The record a fresh episode writes when fed the recorded assistant texts (the system prompt as
    recorded: a few-shot run overrides it)."""
    ep = Episode(task, system=record["messages"][0]["content"])
    for turn in record["turns"]:
        ep.step(turn["text"])
    return ep.record()


@pytest.mark.parametrize("run", RUNS, ids=[p.name for p in RUNS])
def test_committed_transcripts_replay_to_identical_records(run, tasks):
    rows = list(read_jsonl(run / "episodes.jsonl.gz"))
    assert rows
    for row in rows:
        task = tasks[(row["dataset"], row["task_id"])]
        assert dumps(replayed(task, row["record"])) == dumps(row["record"]), (run.name, row["task_id"])
