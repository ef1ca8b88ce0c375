"""The error-driven round (issue 40): the validation replay set's halves and coordinates, the failure
map, the allocation of targeted tasks (with contrastive pairs), the leakage gate and the comparison."""
import json

import pytest

from ccl.learn.errors import (
    HELDOUT,
    MAP,
    ErrorRoundConfig,
    allocate,
    cluster_changes,
    coordinate,
    failure_map,
    golden,
    grade_all,
    oracle_rows,
    targeted_tasks,
    template_coordinates,
)
from ccl.world.tasks import generate_task


def val_task(name: str, seed: int) -> dict:
    return {**generate_task(name, 500_000 + seed, "train"), "dataset": "val_pool"}


def test_halves_alternate_within_each_template():
    tasks = [val_task("sel_weather", 0), val_task("sel_fx", 0), val_task("sel_weather", 1), val_task("sel_weather", 2)]
    halves = {d["task_id"]: d["half"] for d in golden(tasks)}
    assert [halves[t["id"]] for t in tasks] == [MAP, MAP, HELDOUT, MAP]


def test_coordinates_name_the_kind_and_the_gold_tool():
    task = val_task("ch_contact_email", 0)
    coords = [d["coordinate"] for d in golden([task])]
    assert coords == ["first_call|find_contact", "approval|send_email", "stop|final:done"]
    assert coordinate(task, golden([task])[-1]) == "stop|final:done"


def test_the_failure_map_counts_verdicts_and_confusions():
    task = val_task("ch_contact_email", 0)
    gold = golden([task])
    answers = [{"task_id": d["task_id"], "index": d["index"], "text": d["gold"]} for d in gold]
    answers[0]["text"] = json.dumps({"final": "Done.", "status": "done"})  # stops before the first call
    rows = grade_all({task["id"]: task}, gold, answers)
    assert [r["verdict"] for r in rows] == ["premature_stop", "pass", "pass"]
    fmap = failure_map(rows, MAP)
    assert fmap["first_call|find_contact"] == {"decisions": 1, "passed": 0, "failures": {"premature_stop": 1},
                                               "confused_with": {}}
    assert fmap["stop|final:done"] == {"decisions": 1, "passed": 1, "failures": {}, "confused_with": {}}
    assert failure_map(rows, HELDOUT) == {}
    confused = [{"half": MAP, "coordinate": "first_call|get_order", "verdict": "wrong_tool", "tools": ["get_weather"]},
                {"half": MAP, "coordinate": "first_call|get_order", "verdict": "wrong_tool", "tools": [None]}]
    assert failure_map(confused, MAP)["first_call|get_order"]["confused_with"] == {"get_weather": 1}


def test_allocation_follows_failures_and_adds_the_confused_tools_templates():
    coords = template_coordinates()
    fmap = {"first_call|get_order": {"decisions": 10, "passed": 4, "failures": {"wrong_tool": 6},
                                     "confused_with": {"get_weather": 6}},
            "stop|final:done": {"decisions": 10, "passed": 9, "failures": {"wrong_answer": 1}, "confused_with": {}}}
    plan, unreachable = allocate(fmap, ErrorRoundConfig(tasks=12, min_failures=2))
    assert unreachable == []
    assert sum(plan.values()) == 12  # one target (the stop has a single failure): all 12 tasks go to it
    same = {n for n, cs in coords.items() if "first_call|get_order" in cs}
    pairs = {n for n, cs in coords.items() if n not in same and "first_call|get_weather" in cs}
    assert same and pairs and set(plan) <= same | pairs
    assert sum(plan.get(n, 0) for n in same) == sum(plan.get(n, 0) for n in pairs) == 6  # the contrastive pair, half each
    # a target no training template visits gets nothing and is named; a share of one still reaches both groups
    fmap["first_call|find_product"] = {"decisions": 3, "passed": 0, "failures": {"wrong_args": 3}, "confused_with": {}}
    plan, unreachable = allocate(fmap, ErrorRoundConfig(tasks=1, min_failures=2))
    assert unreachable == ["first_call|find_product"]
    assert sum(plan.get(n, 0) for n in same) == sum(plan.get(n, 0) for n in pairs) == 1
    with pytest.raises(ValueError, match="at least 1"):
        allocate(fmap, ErrorRoundConfig(min_failures=0))


def test_a_template_whose_requests_are_all_blocked_stops_instead_of_looping():
    every = {generate_task("term_smalltalk", seed, "train")["request"] for seed in range(900_000, 900_200)}
    with pytest.raises(ValueError, match="cannot be targeted"):
        targeted_tasks({"term_smalltalk": 1}, every)


def test_targeted_tasks_are_fresh_gated_and_solved_by_the_oracle():
    first, _ = targeted_tasks({"sel_weather": 2}, set())
    blocked = {first[0]["request"]}
    tasks, skipped = targeted_tasks({"sel_weather": 2}, blocked)
    assert skipped == 1 and len(tasks) == 2 and all(t["request"] not in blocked for t in tasks)
    assert all(int(t["id"].split(":")[2]) >= 900_000 for t in tasks)
    rows = oracle_rows(tasks)
    assert [r["source"] for r in rows] == ["oracle_err", "oracle_err"]


def test_cluster_changes_count_passes_before_and_after_per_half():
    before = [{"coordinate": "c1", "half": MAP, "verdict": "wrong_tool"}, {"coordinate": "c1", "half": HELDOUT, "verdict": "pass"}]
    after = [{"coordinate": "c1", "half": MAP, "verdict": "pass"}, {"coordinate": "c1", "half": HELDOUT, "verdict": "pass"}]
    assert cluster_changes(before, after, {"c1"}) == {"c1": {
        "target": True, MAP: {"n": 1, "passed_before": 0, "passed_after": 1},
        HELDOUT: {"n": 1, "passed_before": 1, "passed_after": 1}}}
