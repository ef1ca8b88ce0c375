"""The replay analysis on hand-built graded rows: rates, failure map, paired tests, replay vs episodes."""
from __future__ import annotations

import pytest

from ccl.analysis.replay import (
    FINAL,
    build_configs,
    build_summary,
    episode_success,
    failure_map,
    failure_worst,
    replay_by_split,
    replay_paired,
    replay_strata,
    replay_vs_episode,
)
from ccl.analysis.runs import AlignmentError, AnalyzeConfig

CFG = AnalyzeConfig(n_resamples=200, n_flips=200, main_splits=("eval_id", "eval_ood"))


def row(task: str, index: int, verdict: str, kind: str = "first_call", tools=("get_order",), split: str = "eval_id",
        strict: bool = True, status: str | None = None) -> dict:
    return {"task_id": task, "dataset": split, "index": index, "kind": kind, "ready_tools": list(tools),
            "verdict": verdict, "strict": strict, "status": status, "stopped": status is not None and verdict == "pass",
            "tools": list(tools) if status is None else [], "depth": 1, "template": "t", "family": "f", "turn": index}


def golden(verdicts: list[str]) -> list[dict]:
    """Four decisions on two tasks of eval_id: t1 #0 (get_order), t1 #1 (parallel: a and b), t1 #2 (stop),
    t2 #0 (get_order); ``verdicts`` in that order."""
    shapes = [("t1", 0, "first_call", ("get_order",), None), ("t1", 1, "parallel_group", ("b", "a"), None),
              ("t1", 2, "stop", (), "done"), ("t2", 0, "first_call", ("get_order",), None)]
    return [row(t, i, v, kind, tools, status=status) for (t, i, kind, tools, status), v in zip(shapes, verdicts)]


def test_pooled_rate_failure_map_and_worst_cells():
    runs = {"A_base": golden(["pass", "wrong_args", "repeated_call", "malformed"]),
            "oracle": golden(["pass"] * 4)}
    configs = build_configs(runs, CFG.main_splits)
    assert list(configs) == ["A_base", "oracle"]  # the write-up's order
    c = configs["A_base"].splits["eval_id"]
    assert c.tasks == ("t1", "t2") and c.den.tolist() == [3, 1] and c.num.tolist() == [1, 0]
    table = {r["config"]: r for r in replay_by_split(configs, CFG)["rows"]}
    assert table["A_base"]["eval_id"]["mean"] == 25.0 and table["A_base"]["all"]["mean"] == 25.0
    assert table["A_base"]["eval_ood"] is None and table["A_base"]["decisions"] == 4
    assert table["oracle"]["all"] == {"mean": 100.0, "low": 100.0, "high": 100.0, "n": 2}
    fm = failure_map(configs)["configs"]["A_base"]
    kinds = dict(zip(fm["by_kind"]["rows"], fm["by_kind"]["counts"]))
    cols = fm["by_kind"]["columns"]
    assert kinds["first_call"][cols.index("pass")] == 1 and kinds["first_call"][cols.index("malformed")] == 1
    tools = dict(zip(fm["by_tool"]["rows"], fm["by_tool"]["counts"]))
    # the parallel decision counts under both of its tools; the stop under the final-answer label
    assert fm["by_tool"]["rows"] == ["a", "b", "get_order", FINAL]
    assert tools["a"][cols.index("wrong_args")] == tools["b"][cols.index("wrong_args")] == 1
    assert tools[FINAL][cols.index("repeated_call")] == 1 and fm["by_tool"]["totals"] == [1, 1, 2, 1]
    worst = [(w["axis"], w["label"], w["verdict"]) for w in fm["worst"]]
    # each failing kind cell holds one decision; ties go to the larger share of the row, then the name
    assert worst[:3] == [("kind", "parallel_group", "wrong_args"), ("kind", "stop", "repeated_call"),
                         ("kind", "first_call", "malformed")]
    assert [w["rank"] for w in fm["worst"]] == [1, 2, 3, 1, 2, 3]
    by_kind = {r["config"]: r for r in replay_strata(configs, "kind")["rows"]}
    assert replay_strata(configs, "kind")["columns"] == ["config", "parallel_group", "first_call", "stop"]
    assert by_kind["A_base"]["first_call"] == {"mean": 50.0, "n": 2} and by_kind["A_base"]["stop"]["mean"] == 0.0
    assert "oracle" in failure_map(configs)["configs"] and failure_map(configs)["configs"]["oracle"]["worst"] == []
    # an axis with fewer failing cells than three still ranks from 1
    one = failure_worst(failure_map(build_configs({"teacher": golden(["pass", "pass", "pass", "malformed"])},
                                                  CFG.main_splits)))["rows"]
    assert [(r["axis"], r["rank"], r["cell"]) for r in one] == [("kind", 1, "first_call × malformed"),
                                                                ("tool", 1, "get_order × malformed")]


def test_seeds_average_per_task_and_must_answer_the_same_decisions():
    runs = {"C_s0": golden(["pass", "pass", "pass", "pass"]), "C_s1": golden(["pass", "wrong_tool", "pass", "malformed"])}
    c = build_configs(runs, CFG.main_splits)["C"]
    assert c.runs == ("C_s0", "C_s1") and c.splits["eval_id"].num.tolist() == [2.5, 0.5]
    bad = {"C_s0": golden(["pass"] * 4), "C_s1": golden(["pass"] * 4)[:3]}
    with pytest.raises(AlignmentError, match="C_s1 answered other decisions"):
        build_configs(bad, CFG.main_splits)


def test_paired_replay_tests_follow_the_write_up_comparisons():
    runs = {"A_base": golden(["malformed"] * 4), "teacher": golden(["pass", "pass", "wrong_answer", "pass"]),
            "A_fewshot": golden(["malformed"] * 4), "oracle": golden(["pass"] * 4)}
    out = replay_paired(build_configs(runs, CFG.main_splits), CFG)
    rows = {r["comparison"]: r for r in out["rows"]}
    # the oracle made the golden set: its comparison is no test and takes no place in the Holm family
    assert set(rows) == {"A_fewshot_vs_A_base", "teacher_vs_A_base"} and out["n_tests"] == 2
    assert rows["teacher_vs_A_base"]["diff"] == 75.0 and rows["A_fewshot_vs_A_base"]["p"] == 1.0
    assert rows["teacher_vs_A_base"]["decisions"] == 4 and "p_holm" in rows["teacher_vs_A_base"]


def _ranked(n_configs: int) -> tuple[dict, dict]:
    """Configurations k = 0..n-1 over 8 tasks of one decision each: config k passes (replay) and succeeds
    (episode) on the first k tasks; an oracle that passes everything."""
    replay, episodes = {}, {}
    names = ["A_base", "A_fewshot", "B_s0", "C_s0", "Dmix_s0", "Dseq_s0", "teacher"][:n_configs]
    for k, name in enumerate(names):
        replay[name] = [row(f"t{j}", 0, "pass" if j < k else "wrong_tool") for j in range(8)]
        episodes[name] = [{"task_id": f"t{j}", "dataset": "eval_id",
                           "verdict": {"success": j < k, "success_writeup": j <= k}} for j in range(8)]
    replay["oracle"] = [row(f"t{j}", 0, "pass") for j in range(8)]
    episodes["oracle"] = [{"task_id": f"t{j}", "dataset": "eval_id",
                           "verdict": {"success": True, "success_writeup": True}} for j in range(8)]
    return replay, episodes


def test_replay_predicts_episodes_only_with_enough_configurations():
    replay, episodes = _ranked(3)
    out = replay_vs_episode(build_configs(replay, CFG.main_splits), episode_success(episodes, CFG.main_splits), CFG)
    row3 = next(r for r in out["rows"] if r["split"] == "eval_id")
    assert row3["n_configs"] == 3 and "oracle" not in row3["configs"]
    assert row3["pearson"] == pytest.approx(1.0) and row3["spearman_p"] == pytest.approx(1 / 3, abs=1e-6)
    assert row3["predicts"].startswith("not shown (rank agreement")
    replay, episodes = _ranked(6)
    out = replay_vs_episode(build_configs(replay, CFG.main_splits), episode_success(episodes, CFG.main_splits), CFG)
    row6 = next(r for r in out["rows"] if r["split"] == "eval_id")
    assert row6["spearman_p"] == pytest.approx(2 / 720, abs=1e-6) and row6["predicts"] == "yes"
    points = {(p["config"], p["split"]): p for p in out["points"]}
    assert points[("C", "eval_id")]["replay_pass"] == 37.5 and points[("C", "eval_id")]["episode_writeup"] == 50.0
    assert points[("oracle", "eval_id")]["episode_strict"] == 100.0
    assert next(r for r in out["rows"] if r["split"] == "eval_ood")["predicts"].startswith("too few")


def test_replay_against_episodes_refuses_a_negative_order_missing_episodes_and_constant_rates():
    replay, episodes = _ranked(6)
    for name, rows in episodes.items():  # episode success now falls as replay rises
        if name != "oracle":
            k = sum(r["verdict"]["success"] for r in rows)
            for j, r in enumerate(rows):
                r["verdict"]["success"] = j < 5 - k
    out = replay_vs_episode(build_configs(replay, CFG.main_splits), episode_success(episodes, CFG.main_splits), CFG)
    row = next(r for r in out["rows"] if r["split"] == "eval_id")
    assert row["spearman"] == pytest.approx(-1.0) and row["predicts"] == "no (rho = -1.00)"
    del episodes["C_s0"]  # replayed, but its episodes are missing: left out and said so
    out = replay_vs_episode(build_configs(replay, CFG.main_splits), episode_success(episodes, CFG.main_splits), CFG)
    row = next(r for r in out["rows"] if r["split"] == "eval_id")
    assert "C" not in row["configs"] and row["skipped"] == {"C": "no episode verdicts of C_s0 on eval_id"}
    flat = {n: [dict(r, verdict="wrong_tool") for r in rows] for n, rows in _ranked(4)[0].items() if n != "oracle"}
    out = replay_vs_episode(build_configs(flat, CFG.main_splits), episode_success(_ranked(4)[1], CFG.main_splits), CFG)
    row = next(r for r in out["rows"] if r["split"] == "eval_id")
    assert row["pearson"] is None and row["predicts"].startswith("undefined")  # never NaN in the JSON


def test_summary_records_settings_and_inputs():
    replay, episodes = _ranked(3)
    s = build_summary(build_configs(replay, CFG.main_splits), episode_success(episodes, CFG.main_splits), CFG,
                      {"replay/A_base/verdicts.jsonl.gz": "ab"})
    assert s["configs"] == ["A_base", "A_fewshot", "B", "oracle"] and s["stats"]["n_resamples"] == 200
    assert s["inputs"] == {"replay/A_base/verdicts.jsonl.gz": "ab"}
    assert {"replay_by_split", "replay_paired", "failure_map", "failure_worst", "replay_vs_episode"} <= set(s)


def test_speed_compares_graded_units_per_second_of_the_two_stages():
    from ccl.analysis.replay import speed
    replay = {"A_base": {"decisions": 300, "wall_s": 100.0, "gen_tokens": 5000},
              "oracle": {"decisions": 300, "wall_s": 0.1, "gen_tokens": 0}, "B_s0": None}
    episodes = {"A_base": {"episodes_this_run": 120, "wall_s": 200.0}, "oracle": {"episodes_this_run": 120, "wall_s": 0.1}}
    rows = speed(replay, episodes)["rows"]
    assert [r["run"] for r in rows] == ["A_base"]  # no model output (oracle) or no record (B_s0): no ratio
    assert rows[0]["decisions_per_s"] == 3.0 and rows[0]["episodes_per_s"] == 0.6 and rows[0]["ratio"] == 5.0
