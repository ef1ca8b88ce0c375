"""The post-hoc transcript audit: its checks on hand-written episodes, and what the analysis makes of it."""
from __future__ import annotations

import pytest

from ccl.analysis.contrasts import audit, primary
from ccl.analysis.runs import AnalyzeConfig
from ccl.judge.audit import AUDIT_METRICS, AUDITED, audit_values
from ccl.judge.audit_checks import audit_reasons, audited
from tests.test_analysis import configs_of, row, run

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


def test_audited_rows_keep_every_field_and_add_the_reasons():
    verdict_row = row("t0", "eval_id", 1)
    out = audited(verdict_row, task("INR to GBP?"), record('{"rate": 0.0108}', FX_CALL))
    assert out["audit"] == ["raw_result_answer"] and {k: v for k, v in out.items() if k != "audit"} == verdict_row


def test_audit_values_count_flags_among_strict_successes_only():
    assert audit_values(row("t0", "eval_id", 1)) == dict.fromkeys(AUDIT_METRICS)  # judged before the audit
    flagged = {**row("t0", "eval_id", 1), "audit": ["raw_result_answer"]}
    assert audit_values(flagged) == {AUDITED: False, "audit_raw_result_answer": True,
                                     "audit_unnamed_currency": False, "audit_ignores_request": False}
    failed = {**row("t0", "eval_id", 0), "audit": ["raw_result_answer"]}
    assert audit_values(failed)[AUDITED] is False and audit_values(failed)["audit_raw_result_answer"] is False
    clean = {**row("t0", "eval_id", 1), "audit": []}
    assert audit_values(clean)[AUDITED] is True


def _with_audit(rows: list[dict], flagged: set[int]) -> list[dict]:
    """``rows`` with the raw-result reason on the rows at the given positions."""
    return [{**r, "audit": ["raw_result_answer"] if i in flagged else []} for i, r in enumerate(rows)]


CFG = AnalyzeConfig(n_resamples=100, n_flips=100, main_splits=("eval_id",), primary_splits=("eval_id",))


def test_audit_table_and_the_audited_primary_family_hand_worked():
    runs = {"A_base": _with_audit(run({"eval_id": [0, 0, 0, 0]}), set()),
            # C solves 3 of 4, one of them by handing back a raw result
            "C_s0": _with_audit(run({"eval_id": [1, 1, 1, 0]}), {0, 3})}
    configs = configs_of(runs)
    table = {r["config"]: r for r in audit(configs, CFG)["rows"]}
    c = table["C"]
    # the flag on task 3 (a failure) is not counted: only flagged strict successes are
    assert c["strict"]["mean"] == 75.0 and c["audited"]["mean"] == 50.0
    assert (c["strict_episodes"], c["raw_result_answer"], c["unnamed_currency"], c["episodes"]) == (3, 1, 0, 4)
    assert table["A_base"]["audited"]["mean"] == 0.0
    families = primary(configs, CFG)
    strict, post_hoc = families["success"]["rows"][0], families[AUDITED]["rows"][0]
    assert strict["diff"] == 75.0 and post_hoc["diff"] == 50.0
    assert families[AUDITED]["post_hoc"] and not families["success"]["post_hoc"]


def test_verdicts_judged_before_the_audit_give_no_audit_and_no_audited_family():
    configs = configs_of({"A_base": run({"eval_id": [0, 0]}), "C_s0": run({"eval_id": [1, 0]})})
    assert audit(configs, CFG)["rows"] == []
    assert AUDITED not in primary(configs, CFG)
    # one configuration without the audit is enough to leave the audited family out
    mixed = configs_of({"A_base": _with_audit(run({"eval_id": [0, 0]}), set()), "C_s0": run({"eval_id": [1, 0]})})
    assert AUDITED not in primary(mixed, CFG) and audit(mixed, CFG)["rows"] == []


@pytest.mark.parametrize("answer", ["ORD-1234 noted", "Noted ORD-1234."])
def test_naming_the_identifier_anywhere_counts(answer):
    assert audit_reasons(task("Order ORD-1234 shipped, just confirm", NO_TOOL), record(answer)) == []
