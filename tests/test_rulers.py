"""Versioned verdicts (issue 37): every verdict row carries ruler 1's verdict and ruler 2's, each
labelled; ruler 1's metrics stay as published; the analysis, the report and the re-judge show both."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ccl.analysis.contrasts import primary, rulers
from ccl.analysis.rejudge import RULER1_ONLY, RULER2_ONLY, by_config, changed_rows, tally
from ccl.analysis.runs import AnalyzeConfig
from ccl.artifacts.jsonio import read_jsonl
from ccl.episode.evaluation import strata
from ccl.episode.oracle import OraclePolicy
from ccl.episode.runtime import run_episode
from ccl.judge.judging import metrics, ruler2_metrics, summarise_ruler2, verdict_row
from ccl.judge.validate import validate
from ccl.report.artifacts import SUMMARY, Artifacts
from ccl.report.tables import RULER_LABELS, check_table, rulers_table
from ccl.stages import judge as judge_stage
from ccl.stages import rejudge as rejudge_stage
from ccl.vocabulary import CRITERIA, RULER1, RULER2
from ccl.world.tasks import generate_task
from tests.test_analysis import configs_of, run

ROOT = Path(__file__).resolve().parents[1]
TASK = generate_task("sel_weather", 3, "eval")


def _episode(final: str | None = None) -> dict:
    """The oracle's episode row on TASK, its final answer replaced when ``final`` is given."""
    row = {"task_id": TASK["id"], "dataset": "eval_id", **strata(TASK), "new_tokens": 0, "prompt_tokens": 0,
           "record": run_episode(TASK, OraclePolicy()).record()}
    if final is not None:
        row["record"] = {**row["record"], "final": final}
    return row


def _pasted() -> dict:
    """The oracle's episode with its answer replaced by the last tool result, as raw JSON."""
    row = _episode()
    return _episode(json.dumps(row["record"]["calls"][-1]["observation"]["result"]))


# ---------------------------------------------------------------- verdict rows

def test_a_verdict_row_carries_both_rulers_each_labelled():
    row = _episode()
    judged = verdict_row(TASK, row)
    assert judged["verdict"] == {**validate(TASK, row["record"]), "ruler": RULER1}
    assert judged[RULER2]["ruler"] == RULER2 and judged[RULER2]["success"] is True
    assert judged[RULER2]["criteria"] == dict.fromkeys(CRITERIA, True)
    assert "record" not in judged and judged["task_id"] == TASK["id"]


def test_a_pasted_tool_result_passes_ruler_1_and_fails_ruler_2():
    judged = verdict_row(TASK, _pasted())
    assert judged["verdict"]["success"] is True  # ruler 1's verdict is what it always was
    assert judged[RULER2]["success"] is False and "raw_result_answer" in judged[RULER2]["reasons"]
    assert judged[RULER2]["criteria"]["answer"] is False


def test_ruler_1_metrics_ignore_ruler_2_and_ruler_2_metrics_hand_worked():
    rows = [verdict_row(TASK, _episode()), verdict_row(TASK, _pasted()), verdict_row(TASK, _episode(""))]
    first = metrics(rows, ["eval_id"])
    stripped = [{**r, "verdict": {k: v for k, v in r["verdict"].items() if k != "ruler"}} for r in rows]
    assert first == metrics(stripped, ["eval_id"])
    second = summarise_ruler2(rows)
    assert second["n"] == 3 and second["success"] == pytest.approx(1 / 3)  # only the oracle's own answer
    # the paste and the empty answer both fail the answer criterion; format holds in all three
    assert second["criteria"]["answer"] == pytest.approx(1 / 3) and second["criteria"]["format"] == 1.0
    by_split = ruler2_metrics(rows, ["eval_id", "eval_ood"])
    assert by_split["ruler"] == RULER2 and by_split["pooled_main"] == second
    assert by_split["splits"]["eval_ood"] == {"n": 0, "success": None, "criteria": dict.fromkeys(CRITERIA)}


@pytest.fixture(scope="module")
def cpu_data(tmp_path_factory):
    """The cpu profile's task files the committed transcripts were judged against: the checkout's (a DVC
    output), or, on a clean clone without them, built by build_datasets (seconds; byte-identical)."""
    data = ROOT / "data" / "v1"
    if (data / "tasks" / "eval_id.jsonl").is_file():
        return data
    out = tmp_path_factory.mktemp("cpu_data")
    subprocess.run([sys.executable, "-m", "scripts.build_datasets", "--profile", "cpu", "--out", str(out)],
                   cwd=ROOT, check=True, capture_output=True)
    return out


@pytest.mark.parametrize("name", ["oracle", "C_s0"])
def test_the_judge_stage_keeps_ruler_1_metrics_byte_identical(tmp_path, name, cpu_data):
    committed = ROOT / "results" / "runs" / name
    (tmp_path / name).mkdir()
    for f in ("episodes.jsonl.gz", "generation.json"):
        shutil.copy(committed / f, tmp_path / name / f)
    judge_stage.run(name, cpu_data, tmp_path)
    assert (tmp_path / name / "metrics.json").read_bytes() == (committed / "metrics.json").read_bytes()
    rows = list(read_jsonl(tmp_path / name / "verdicts.jsonl.gz"))
    assert all(r["verdict"]["ruler"] == RULER1 and r[RULER2]["ruler"] == RULER2 for r in rows)
    second = json.loads((tmp_path / name / judge_stage.RULER2_METRICS).read_text())
    assert second["pooled_main"]["success"] == sum(r[RULER2]["success"] for r in rows) / len(rows)


# ---------------------------------------------------------------- analysis

CFG = AnalyzeConfig(n_resamples=100, n_flips=100, main_splits=("eval_id",), primary_splits=("eval_id",))


def _with_ruler2(rows: list[dict], passes: list[int]) -> list[dict]:
    return [{**r, RULER2: {"ruler": RULER2, "success": bool(p)}} for r, p in zip(rows, passes)]


def test_rulers_table_and_the_ruler_2_primary_family_hand_worked():
    runs = {"A_base": _with_ruler2(run({"eval_id": [0, 0, 0, 0]}), [0, 0, 0, 0]),
            # C: ruler 1 passes tasks 0-2; ruler 2 fails task 0 (a pasted result) and passes task 3
            "C_s0": _with_ruler2(run({"eval_id": [1, 1, 1, 0]}), [0, 1, 1, 1])}
    table = {(r["config"], r["split"]): r for r in rulers(configs_of(runs), CFG)["rows"]}
    assert set(table) == {("A_base", "eval_id"), ("A_base", "all"), ("C", "eval_id"), ("C", "all")}
    c = table[("C", "all")]
    assert c[RULER1]["mean"] == 75.0 and c[RULER2]["mean"] == 75.0
    assert (c["ruler1_only"], c["ruler2_only"], c["episodes"]) == (1, 1, 4)
    families = primary(configs_of(runs), CFG)
    assert families[RULER2]["post_hoc"] and not families["success"]["post_hoc"]
    assert families[RULER2]["rows"][0]["diff"] == 75.0


def test_verdicts_without_ruler_2_give_no_rulers_table_and_no_ruler_2_family():
    plain = {"A_base": run({"eval_id": [0, 0]}), "C_s0": run({"eval_id": [1, 0]})}
    assert rulers(configs_of(plain), CFG)["rows"] == [] and RULER2 not in primary(configs_of(plain), CFG)
    mixed = {"A_base": _with_ruler2(run({"eval_id": [0, 0]}), [0, 0]), "C_s0": run({"eval_id": [1, 0]})}
    assert rulers(configs_of(mixed), CFG)["rows"] == [] and RULER2 not in primary(configs_of(mixed), CFG)


# ---------------------------------------------------------------- report

def test_the_report_shows_both_rulers_side_by_side_labelled():
    cell = {"mean": 75.0, "low": 50.0, "high": 100.0, "n": 4}
    low = {"mean": 50.0, "low": 25.0, "high": 75.0, "n": 4}
    block = {"columns": [], "note": "n", "rows": [{"config": "C", "split": "all", RULER1: cell, RULER2: low,
                                                   "ruler1_only": 1, "ruler2_only": 0, "episodes": 4}]}
    table = rulers_table(Artifacts(root=ROOT, files={SUMMARY: {"rulers": block}}))
    check_table(table)
    assert table.columns[2:4] == ["ruler 1: pre-registered", "ruler 2: farm-resistant, post hoc"]
    assert table.columns[2:4] == [RULER_LABELS[RULER1], RULER_LABELS[RULER2]]
    assert table.rows == [["C", "all", "75.0 [50.0, 100.0] n=4", "50.0 [25.0, 75.0] n=4", "1", "0", "4"]]
    empty = rulers_table(Artifacts(root=ROOT, files={SUMMARY: {"rulers": {**block, "rows": []}}}))
    assert empty.missing and "ruler 2" in empty.missing


# ---------------------------------------------------------------- re-judging

def _judged(config: str, split: str, template: str, first: bool, second: bool) -> dict:
    return {"config": config, "run": f"{config}_s0", "split": split, "task_id": f"{template}:1", "template": template,
            RULER1: {"success": first, "reasons": [], "strict_reasons": []},
            RULER2: {"success": second, "reasons": [] if second else ["raw_result_answer", "result_key:x"]},
            "final": "{}"}


def test_rejudge_tallies_and_changed_episodes_hand_worked():
    episodes = [_judged("C", "eval_id", "sel_fx", True, True), _judged("C", "eval_id", "sel_fx", True, False),
                _judged("C", "eval_ood", "sel_weather", False, True), _judged("C", "eval_ood", "sel_fx", False, False),
                _judged("C", "train_pool", "sel_fx", True, False)]
    t = tally(episodes[:4])
    assert t["n"] == 4 and t[RULER1] == {"successes": 2, "rate": 0.5} and t[RULER2] == {"successes": 2, "rate": 0.5}
    assert (t[RULER1_ONLY], t[RULER2_ONLY]) == (1, 1)
    assert t[f"{RULER1_ONLY}_by_reason"] == {"raw_result_answer": 1, "result_key": 1}
    assert t[f"{RULER2_ONLY}_by_template"] == {"sel_weather": 1}
    c = by_config(episodes)["C"]
    assert c["pooled_main"]["n"] == 4  # train_pool is no main split
    assert sorted(c["splits"]) == ["eval_id", "eval_ood", "train_pool"] and c["splits"]["train_pool"][RULER1_ONLY] == 1
    changed = changed_rows(episodes)
    assert [(r["split"], r["direction"]) for r in changed] == [("eval_id", RULER1_ONLY), ("eval_ood", RULER2_ONLY),
                                                               ("train_pool", RULER1_ONLY)]
    assert changed[0][f"{RULER2}_reasons"] == ["raw_result_answer", "result_key:x"] and changed[0]["final"] == "{}"


def test_the_rejudge_stage_reads_committed_transcripts(tmp_path, cpu_data):
    runs = tmp_path / "runs"
    (runs / "oracle").mkdir(parents=True)
    shutil.copy(ROOT / "results" / "runs" / "oracle" / "episodes.jsonl.gz", runs / "oracle")
    result = rejudge_stage.run(cpu_data, runs, ROOT / "data" / "v1" / "teacher", tmp_path / "out")
    oracle = result["configs"]["oracle"]["pooled_main"]
    assert oracle[RULER1]["rate"] == oracle[RULER2]["rate"] == 1.0 and oracle[RULER1_ONLY] == 0
    teacher = result["configs"][rejudge_stage.TEACHER_CONFIG]
    assert teacher["pooled_main"] is None and list(teacher["splits"]) == ["train_pool"]
    written = json.loads((tmp_path / "out" / "rejudge.json").read_text())
    changed = list(read_jsonl(tmp_path / "out" / "changed.jsonl"))
    assert written["changed"] == len(changed) == teacher["splits"]["train_pool"][RULER1_ONLY] + \
        teacher["splits"]["train_pool"][RULER2_ONLY]
