"""The post hoc repeat audit (issue 41): which repeated calls count, and the per-configuration rates."""
from __future__ import annotations

from ccl.analysis.repeats import audit, repeats_after_answer
from ccl.artifacts.jsonio import write_jsonl


def _call(turn: int, tool: str, args: dict, outcome: str) -> dict:
    return {"turn": turn, "tool": tool, "args": args, "outcome": outcome}


def test_only_repeats_in_a_later_turn_after_a_final_answer_count():
    a = {"order_id": "ORD-1"}
    assert repeats_after_answer({"calls": [_call(0, "get_order", a, "timeout"), _call(1, "get_order", a, "ok")]}) == 0
    assert repeats_after_answer({"calls": [_call(0, "get_order", a, "ok"), _call(1, "get_order", a, "ok"),
                                           _call(2, "get_order", a, "ok")]}) == 2
    assert repeats_after_answer({"calls": [_call(0, "get_order", a, "not_found"), _call(1, "get_order", a, "ok")]}) == 1
    # within one turn ruler 2 already fails it as a blind repeat; other arguments are another call
    assert repeats_after_answer({"calls": [_call(0, "get_order", a, "ok"), _call(0, "get_order", a, "ok")]}) == 0
    assert repeats_after_answer({"calls": [_call(0, "get_order", a, "ok"),
                                           _call(1, "get_order", {"order_id": "ORD-2"}, "ok")]}) == 0


def test_audit_counts_successes_with_repeats_on_the_main_splits(tmp_path):
    run = tmp_path / "X_s0"
    a = {"q": 1}
    rep = {"calls": [_call(0, "t", a, "ok"), _call(1, "t", a, "ok")]}
    clean = {"calls": [_call(0, "t", a, "ok")]}
    write_jsonl(run / "episodes.jsonl.gz", [{"task_id": "1", "record": rep}, {"task_id": "2", "record": clean},
                                            {"task_id": "3", "record": rep}, {"task_id": "4", "record": rep}])
    write_jsonl(run / "verdicts.jsonl.gz", [
        {"task_id": "1", "dataset": "eval_id", "ruler2": {"success": True}},
        {"task_id": "2", "dataset": "eval_ood", "ruler2": {"success": True}},
        {"task_id": "3", "dataset": "eval_id", "ruler2": {"success": False}},  # a failure with a repeat: not counted
        {"task_id": "4", "dataset": "eval_catalog_5", "ruler2": {"success": True}}])  # not a main split
    r = audit(tmp_path)["configs"]["X_s0"]
    assert r == {"episodes": 3, "ruler2_successes": 2, "successes_repeating_an_answered_call": 1,
                 "ruler2_pct": 66.67, "without_repeats_pct": 33.33}
