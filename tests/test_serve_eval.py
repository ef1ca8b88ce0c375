"""Stage serve_eval (scripts/serve_eval.py): the student, the teacher and the chain through the server on the
smoke study; the served student's verdicts are the episode loop's (evaluation's) on the same tasks."""
from __future__ import annotations

import json

import pytest
from subproc import run_py

from ccl.artifacts.jsonio import read_jsonl


@pytest.mark.slow  # about half a minute or more on 2 cores: CI runs it (.ci/run), the default suite does not
def test_serve_eval_measures_three_setups_and_the_student_scores_as_in_evaluation(smoke_study, tmp_path):
    study = smoke_study
    out = tmp_path / "serve"
    run_py("-m", "scripts.serve_eval", "--profile", "smoke", "--run", "C_s0", "--data", str(study / "data" / "v1"),
           "--runs", str(study / "runs"), "--out", str(out))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["order"] == ["student", "teacher", "chain"] == sorted(summary["setups"], key=summary["order"].index)
    assert summary["tasks"] == 2
    episodes, requests = list(read_jsonl(out / "episodes.jsonl.gz")), list(read_jsonl(out / "requests.jsonl.gz"))
    for setup, row in summary["setups"].items():
        mine = [r for r in requests if r["setup"] == setup]
        assert row["episodes"] == 2 and row["requests"] == len(mine) > 0
        assert row["fallback_rate"] == sum(r["fallbacks"] > 0 for r in mine) / len(mine)
        assert row["success"]["k"] == sum(e["success"] for e in episodes if e["setup"] == setup)
    # alone, a provider never falls back; in the chain, every fallback went to the teacher for a recorded reason
    assert all(r["fallbacks"] == 0 for r in requests if r["setup"] != "chain")
    chain = [r for r in requests if r["setup"] == "chain"]
    assert all(r["provider"] == summary["setups"]["teacher"]["model"] for r in chain if r["fallbacks"])
    assert all(r["passed_over"] and set(r["passed_over"]) <= {"malformed", "context_overflow", "timeout", "error"}
               for r in chain if r["fallbacks"])
    # the served student decides as evaluation's episode loop did on the same tasks (same turn length)
    verdicts = {v["task_id"]: v["verdict"] for v in read_jsonl(study / "results" / "runs" / "C_s0" / "verdicts.jsonl.gz")}
    for e in episodes:
        if e["setup"] == "student":
            assert (e["success"], e["success_writeup"]) == (verdicts[e["task_id"]]["success"],
                                                           verdicts[e["task_id"]]["success_writeup"]), e["task_id"]
