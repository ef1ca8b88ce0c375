"""The post-hoc transcript audit's checks (now part of ruler 2) on hand-written episodes."""
from __future__ import annotations

import pytest

from ccl.judge.audit_checks import audit_reasons

LOOKUP = {"nodes": [{"id": "n0", "tool": "get_fx_rate"}]}
NO_TOOL = {"nodes": []}


def task(request: str, gold: dict = LOOKUP) -> dict:
    return {"request": request, "gold": gold}


def record(final: str | None, *calls: tuple[dict, dict]) -> dict:
    return {"final": final, "calls": [{"tool": "t", "args": a, "observation": o} for a, o in calls]}


FX_CALL = ({"base": "INR", "quote": "GBP"}, {"ok": True, "result": {"base": "INR", "quote": "GBP", "rate": 0.0108}})


def test_a_sentence_that_answers_has_no_reason():
    assert audit_reasons(task("What's the exchange rate from INR to GBP?"), record("1 INR = 0.0108 GBP.", FX_CALL)) == []


def test_a_tool_result_handed_back_as_the_answer():
    raw = '{"base": "INR", "quote": "GBP", "rate": 0.0108}'
    assert audit_reasons(task("INR to GBP?"), record(raw, FX_CALL)) == ["raw_result_answer"]
    assert audit_reasons(task("INR to GBP?"), record(" [1, 2] ", FX_CALL)) == ["raw_result_answer"]
    # a JSON string or number is not an object handed back; braces inside prose are not JSON
    assert audit_reasons(task("INR to GBP?"), record('"0.0108 GBP"', FX_CALL)) == []
    assert audit_reasons(task("INR to GBP?"), record("The rate is {0.0108} GBP per INR", FX_CALL)) == []


def test_a_currency_nobody_mentioned_is_flagged_one_from_a_tool_result_is_not():
    assert audit_reasons(task("What's the exchange rate from INR to GBP?"),
                         record("1 EUR = 0.0108 GBP.", FX_CALL)) == ["unnamed_currency"]
    via_result = ({"base": "INR"}, {"ok": True, "result": {"note": "quoted against EUR"}})
    assert audit_reasons(task("INR rate?"), record("1 INR = 0.0098 EUR.", via_result)) == []
    # lower-case words that happen to spell a code are not codes
    assert audit_reasons(task("INR to GBP?"), record("1 INR = 0.0108 GBP, eur-ish.", FX_CALL)) == []


def test_a_no_tool_request_naming_an_order_must_be_answered_about_it():
    t = task("I already checked: order ORD-14307 is cancelled. Just confirm you got my message.", NO_TOOL)
    assert audit_reasons(t, record("You're welcome, have a good day!")) == ["ignores_request"]
    assert audit_reasons(t, record("Noted: order ORD-14307 is cancelled.")) == []
    # only no-tool tasks: an answer about a looked-up order may leave its number out
    looked_up = task("What's the status of order ORD-14307?")
    assert audit_reasons(looked_up, record("The order is cancelled.")) == []
    # a no-tool request without identifiers has nothing to name
    assert audit_reasons(task("Thanks, that's all.", NO_TOOL), record("You're welcome!")) == []


def test_no_final_answer_has_no_reason_and_reasons_keep_their_order():
    assert audit_reasons(task("INR to GBP?"), record(None, FX_CALL)) == []
    t = task("Confirm order ORD-1234 please", NO_TOOL)
    assert audit_reasons(t, record('{"rate": 1, "currency": "EUR"}')) == ["raw_result_answer", "unnamed_currency",
                                                                          "ignores_request"]
    assert audit_reasons(t, record("1 USD is ORD-1234")) == ["unnamed_currency"]


@pytest.mark.parametrize("answer", ["ORD-1234 noted", "Noted ORD-1234."])
def test_naming_the_identifier_anywhere_counts(answer):
    assert audit_reasons(task("Order ORD-1234 shipped, just confirm", NO_TOOL), record(answer)) == []
