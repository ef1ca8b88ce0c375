"""ccl.records is the one place that says what a row is: the committed artifacts, the task
files and what the code produces must have exactly the declared fields, and the enums must
serialise as the very strings the artifacts hold."""
import ast
import dataclasses
import json
import sys
import typing
from pathlib import Path

import pytest

from ccl import records as R
from ccl.artifacts.jsonio import dumps, read_json, read_jsonl
from ccl.episode.oracle import OraclePolicy, OracleState
from ccl.episode.runtime import STATUSES, Episode, run_episode
from ccl.judge.judging import JudgedRow
from ccl.judge.ruler2 import Ruler2Verdict
from ccl.judge.validate import validate
from ccl.vocabulary import DIAGNOSTICS, OUTCOMES
from ccl.world.tasks import TEMPLATES, generate_task

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "results" / "runs"
RUN_NAMES = sorted(p.name for p in RUNS.iterdir() if (p / "episodes.jsonl.gz").is_file())


def fields(td: type) -> set[str]:
    return set(typing.get_type_hints(td))


def assert_rows_fit(rows: list[dict], td: type, where: str) -> None:
    """Every row has the record type's required keys and no undeclared one, and every
    declared key occurs in some row (a field no producer writes would be a stale declaration)."""
    assert rows, f"{where}: no rows to check"
    declared, required = fields(td), set(td.__required_keys__)
    seen: set[str] = set()
    for row in rows:
        assert set(row) <= declared, f"{where}: undeclared {sorted(set(row) - declared)} in {td.__name__}"
        assert required <= set(row), f"{where}: missing {sorted(required - set(row))} of {td.__name__}"
        seen |= set(row)
    assert seen == declared, f"{where}: {td.__name__} declares {sorted(declared - seen)}, never written"


@pytest.fixture(scope="module")
def episode_rows() -> dict[str, list[dict]]:
    return {name: list(read_jsonl(RUNS / name / "episodes.jsonl.gz")) for name in RUN_NAMES}


def test_enums_serialise_as_their_values():
    assert dumps({R.Status.DONE: [R.CallOutcome.NOT_FOUND, R.EndReason.FINAL]}) == '{"done":["not_found","final"]}'
    assert json.dumps(R.CallOutcome.INVALID_ARGS) == '"invalid_args"' and f"{R.Status.FAILED}" == "failed"
    assert R.CallOutcome.OK == "ok" and hash(R.CallOutcome.OK) == hash("ok")  # plain strings read back match
    # the parse-error message shows list(STATUSES): plain strings in the prompt's order
    assert STATUSES == ("done", "refused", "blocked", "failed") and all(type(s) is str for s in STATUSES)
    assert str(list(STATUSES)) == "['done', 'refused', 'blocked', 'failed']"


def test_both_bad_argument_outcomes_are_distinct_members():
    # the runtime's schema rejection and a tool's value rejection; the verdict counts both
    assert R.CallOutcome.INVALID_ARGS != R.CallOutcome.INVALID_ARGUMENT
    assert "invalid_args" in fields(R.Diagnostics) and R.PARSE_ERROR not in set(R.CallOutcome)


def test_records_module_is_dependency_free():
    tree = ast.parse((ROOT / "ccl" / "records.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module in sys.stdlib_module_names, node.module
        elif isinstance(node, ast.Import):
            assert all(a.name.split(".")[0] in sys.stdlib_module_names for a in node.names)


def test_committed_episode_rows_match_the_record_types(episode_rows):
    for name, rows in episode_rows.items():
        records = [r["record"] for r in rows]
        assert_rows_fit(rows, R.EpisodeRow, name)
        assert_rows_fit(records, R.EpisodeRecord, name)
        assert_rows_fit([m for r in records for m in r["messages"]], R.Message, name)
        assert_rows_fit([t for r in records for t in r["turns"]], R.TurnRecord, name)
        actions = [t["action"] for r in records for t in r["turns"] if t["action"] is not None]
        if actions:
            assert_rows_fit(actions, R.ActionRecord, name)
        for r in records:
            assert r["status"] in set(R.Status) | {None} and r["end_reason"] in set(R.EndReason), name
            assert all(c["outcome"] in set(R.CallOutcome) for c in r["calls"]), name


def test_committed_calls_and_observations_match_the_record_types(episode_rows):
    calls = [c for rows in episode_rows.values() for r in rows for c in r["record"]["calls"]]
    assert_rows_fit(calls, R.CallRecord, "calls")
    assert_rows_fit([c["observation"] for c in calls], R.Observation, "observations")
    failed = [c for c in calls if not c["executed"]]  # their observation is an error of their outcome's kind
    assert all(c["observation"]["error"]["kind"] == c["outcome"] for c in failed)
    assert_rows_fit([c["observation"]["error"] for c in failed], R.ErrorInfo, "observation errors")
    effects = [e for rows in episode_rows.values() for r in rows for e in r["record"]["effects"]]
    assert_rows_fit(effects, R.Effect, "effects")


def test_committed_verdict_rows_and_summaries_match_the_record_types():
    summaries, generations = [], []
    for name in RUN_NAMES:
        rows = list(read_jsonl(RUNS / name / "verdicts.jsonl.gz"))
        assert_rows_fit(rows, JudgedRow, name)  # ruler 1's verdict and ruler 2's, each labelled
        assert_rows_fit([r["verdict"] for r in rows], R.LabelledVerdict, name)
        assert_rows_fit([r["ruler2"] for r in rows], Ruler2Verdict, name)
        summary = read_json(RUNS / name / "metrics.json")
        assert_rows_fit(list(summary["splits"].values()) + [summary["pooled_main"]], R.SplitMetrics, name)
        summaries.append(summary)
        generations.append(read_json(RUNS / name / "generation.json"))
    # one record per run: an optional key need only occur in some run
    assert_rows_fit(summaries, R.RunSummary, "every run's metrics.json")
    assert_rows_fit([s["efficiency"] for s in summaries], R.Efficiency, "every run's metrics.json")
    assert_rows_fit(generations, R.GenerationRecord, "every run's generation.json")


def test_row_types_agree_with_the_vocabulary():
    assert fields(R.SplitMetrics) == {"n", *OUTCOMES, *DIAGNOSTICS}
    assert fields(R.Verdict) == {*OUTCOMES, *DIAGNOSTICS, "reasons", "strict_reasons"}
    # a verdict row is an episode row without its transcript, plus the verdict
    assert set(R.TRANSCRIPT_ONLY) == fields(R.EpisodeRow) - fields(R.VerdictRow)
    assert fields(R.VerdictRow) - fields(R.EpisodeRow) == {"verdict"}
    assert fields(JudgedRow) - fields(R.VerdictRow) == {"ruler2"}
    assert fields(R.LabelledVerdict) - fields(R.Verdict) == {"ruler"}


def test_task_files_match_the_task_type(request):
    committed = ROOT / "data" / "v1" / "tasks"
    folder = committed if (committed / "eval_id.jsonl").is_file() else request.getfixturevalue("smoke_data")
    tasks = list(read_jsonl(folder / "eval_id.jsonl"))
    assert_rows_fit(tasks, R.Task, "eval_id")
    assert all(t["expected_status"] in set(R.Status) for t in tasks)


def test_generated_tasks_match_the_task_types():
    tasks = [generate_task(n, s, "eval", rename="heldout" if s == 2 else None) for n in sorted(TEMPLATES)
             for s in range(3)]
    for t in tasks:  # a split file adds dataset and graph_seen
        assert set(t) == fields(R.Task) - {"dataset", "graph_seen"}, t["id"]
    assert_rows_fit([t["gold"] for t in tasks], R.Gold, "gold")
    assert_rows_fit([n for t in tasks for n in t["gold"]["nodes"]], R.GoldNode, "gold nodes")
    assert_rows_fit([a for t in tasks for n in t["gold"]["nodes"] for a in n["args"].values()], R.GoldArg, "args")
    assert_rows_fit([f for t in tasks for f in t["faults"]], R.Fault, "faults")
    assert_rows_fit([e for t in tasks for e in t["expected_side_effects"]], R.ExpectedEffect, "effects")
    assert_rows_fit([t["aliases"] for t in tasks if t["aliases"]], R.Aliases, "aliases")
    assert_rows_fit([t["answer"] for t in tasks], R.AnswerTemplate, "answers")
    assert {f["kind"] for t in tasks for f in t["faults"]} == set(R.FaultKind)
    assert {v for t in tasks for v in t["approvals"].values()} == set(R.Approval)
    assert {t["expected_status"] for t in tasks} == set(R.Status)


def test_the_episode_holds_no_driver_state_and_the_oracle_keeps_its_own():
    task = generate_task("ch_contact_email", 1)
    ep, oracle = Episode(task), OraclePolicy()
    memory = oracle.memory()
    while not ep.done:
        ep.step(oracle.act(ep, memory))
    assert isinstance(memory, OracleState) and not memory.pending and memory.nodes  # the oracle's own memory
    driver_fields = {"oracle", "backend_state", "new_tokens", "prompt_tokens", "printed"}
    assert not driver_fields & {f.name for f in dataclasses.fields(Episode)}
    record = ep.record()
    assert set(record) == fields(R.EpisodeRecord) and set(validate(task, record)) == fields(R.Verdict)
    assert ep.end_reason is R.EndReason.FINAL and record == run_episode(task, OraclePolicy()).record()
