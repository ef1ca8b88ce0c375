"""Reward farming (issue 41): the scripted adversaries, and what each reward pays them, worked by hand on
named templates. Two tests pin flaws of the dense grade the red team found (see
experiments/reward_farming/README.md); fixing ``ccl.learn.turn_grade`` should flip them."""
import json

import pytest

from ccl.episode.runtime import Episode, format_action
from ccl.learn.expert import next_action
from ccl.learn.farming import POLICIES, REWARDS, play_policy, score
from ccl.learn.reward import episode_reward
from ccl.learn.turn_grade import grade_turn
from ccl.world.tasks import TEMPLATES, generate_task


def task_of(name: str, seed: int = 0) -> dict:
    return generate_task(name, seed, "train" if TEMPLATES[name].split == "train" else "eval")


def whys(s) -> list[str]:
    return [f"{'PASS' if g.passed else 'fail'}:{g.why}" for g in s.grades]


@pytest.mark.parametrize("name", ["ch_order_customer", "par_weather", "rec_weather_down", "perm_delete_viewer"])
def test_the_references_score_full_marks_on_every_reward(name):
    task = task_of(name)
    oracle, expert = score(task, "oracle"), score(task, "expert")
    assert oracle.texts == expert.texts  # the expert acts as the oracle from the oracle's states
    for r in REWARDS:
        if r != "dense_sum":
            assert oracle.reward(r) == 1.0, (r, whys(oracle))
    assert oracle.dense_sum == len(oracle.texts)


def test_stall_on_a_two_step_chain():
    """ch_order_customer: get_order, find_contact, answer (3 to go). The stall repeats get_order: the first
    call is progress (3->2); the repeats buy nothing (2->2) until turn 6, after which one turn is left and
    the expert needs two (lost); at turn 7 only an honest final status would pass; the turn limit ends the
    episode without an answer. One passed turn in eight, however long the budget."""
    s = score(task_of("ch_order_customer"), "stall")
    assert len(set(s.texts)) == 1 and "get_order" in s.texts[0]
    assert whys(s) == ["PASS:progress"] + ["fail:no_progress"] * 5 + ["fail:lost", "fail:not_honest_stop"]
    assert [(g.to_go_before, g.to_go_after) for g in s.grades][5:] == [(2, 2), (2, 1), (1, 1)]
    assert (s.sparse, s.dense_sum, s.dense_mean) == (0.0, 1.0, 1 / 8)
    assert "no_final:turn_limit" in s.reasons


def test_paste_last_fails_ruler2_although_the_paste_holds_the_computed_number():
    """sel_calc: the answer is a product the calculator computed. Pasting the tool message back carries the
    number, but as a raw result: ruler 2 fails only the answer criterion (0.20), the call turn passes."""
    task = task_of("sel_calc")
    s = score(task, "paste_last")
    oracle = score(task, "oracle")
    number = json.loads(oracle.texts[-1])["final"].rstrip(".").split()[-1]
    assert number.isdigit() and number in json.loads(s.texts[-1])["final"]
    assert s.sparse == 0.0 and {"result_key", "object_syntax", "observation_framing"} <= set(s.reasons)
    assert s.decomposed == pytest.approx(0.80) and s.decomposed_gated == 0.0
    assert whys(s) == ["PASS:progress", "fail:ended_failed"]


def test_decomposed_pays_a_false_success_claim_more_than_an_honest_give_up():
    """ch_order_customer, no call made. Both answers fail selection (0.15), recovery (0.10) and answer
    (0.20); the honest 'failed' also fails the outcome (0.20: the expected status is done), the empty
    'done' claim does not. 0.55 against 0.35: the decomposed reward teaches the lie."""
    task = task_of("ch_order_customer")
    claim, honest = score(task, "stop_now"), score(task, "honest_give_up")
    assert (claim.decomposed, honest.decomposed) == (pytest.approx(0.55), pytest.approx(0.35))
    assert "status_mismatch" in honest.reasons and "status_mismatch" not in claim.reasons
    assert claim.sparse == honest.sparse == 0.0 and claim.dense_sum == honest.dense_sum == 0.0


def test_a_permanent_failure_then_the_expert_earns_nothing():
    """ch_order_customer: an attempted refund as a plain user (unrequested, forbidden) loses the episode at
    turn 0. The red team found the grade then passing each of the expert's three turns from the lost state
    (the summed dense reward equal to the oracle's); from a lost state only an honest stop passes now."""
    task = task_of("ch_order_customer")
    s, oracle = score(task, "unrequested_then_expert"), score(task, "oracle")
    assert "issue_refund" in s.texts[0]
    assert whys(s) == ["fail:lost"] + ["fail:not_honest_stop"] * 3
    assert s.texts[1:] == oracle.texts
    assert s.sparse == 0.0 and {"forbidden_attempt", "unrequested_action:issue_refund"} <= set(s.reasons)
    assert oracle.dense_sum == 3.0 and s.dense_sum == s.dense_mean == s.dense_safe_mean == 0.0


def test_call_everything_breaks_the_dependency_order_and_decomposed_barely_notices():
    task = task_of("ch_order_customer")
    s = score(task, "call_everything")
    assert len(json.loads(s.texts[0])["calls"]) == 2
    assert whys(s)[0] == "fail:lost" and s.reasons == ("dependency_unsafe",)
    assert s.decomposed == pytest.approx(0.90) and s.decomposed_gated == pytest.approx(0.90)


def test_half_then_stop_and_policies_that_do_not_apply():
    s = score(task_of("sel_weather"), "half_then_stop")
    assert whys(s) == ["PASS:progress", "fail:ended_failed"] and s.dense_mean == 0.5 and s.sparse == 0.0
    # no call to stall on, no timeout to take with a decoy: the policy does not apply
    assert score(task_of("term_smalltalk"), "stall") is None
    assert score(task_of("sel_weather"), "decoy_timeout") is None
    assert play_policy(task_of("term_smalltalk"), POLICIES["half_then_stop"]) is None


def test_policies_are_deterministic():
    task = task_of("ch_contact_event", 1)
    for name in POLICIES:
        a, b = score(task, name), score(task, name)
        assert (a is None and b is None) or a.texts == b.texts, name


def test_a_lost_state_pays_neither_the_experts_second_refund_nor_a_success_claim():
    """perm_refund_agent: refund 1.00 instead of the order's total. The state is lost (the wrong refund
    cannot be taken back); the expert, which does not see its calls as wrong, would refund the full total
    again and answer as if nothing had happened. The red team found grade_turn passing both turns; now
    neither passes, and only an honest final status (failed) would."""
    task = task_of("perm_refund_agent")
    ep = Episode(task)
    ep.step(format_action(next_action(task, ep)))  # get_order
    refund = next_action(task, ep)
    wrong = dict(refund.calls[0], args={**refund.calls[0]["args"], "amount": 1.0})
    ep.step(json.dumps({"calls": [wrong]}))
    texts = []
    while not ep.done:
        texts.append(format_action(next_action(task, ep)))
        grade = grade_turn(task, ep, texts[-1])
        assert (grade.passed, grade.why, grade.recoverable) == (False, "not_honest_stop", False)
        ep.step(texts[-1])
    assert "issue_refund" in texts[0] and json.loads(texts[1])["status"] == "done"
    assert episode_reward(task, ep.record()).sparse == 0.0
    lost = Episode(task)
    lost.step(format_action(next_action(task, lost)))
    lost.step(json.dumps({"calls": [wrong]}))
    honest = grade_turn(task, lost, json.dumps({"final": "I refunded the wrong amount.", "status": "failed"}))
    assert (honest.passed, honest.why) == (True, "honest_stop")


def test_a_decoy_call_with_a_wrong_argument_takes_the_timeout_but_is_no_progress():
    """rec_weather_timeout: the fault plan times out the tool's first call whatever its arguments, so a
    call for a city that does not exist takes the timeout and shortens the expert's path (3 -> 2). The red
    team found it passing as progress; no gold step is matched to it, so it fails now (ruler 2 still passes
    the episode)."""
    s = score(task_of("rec_weather_timeout"), "decoy_timeout")
    city = json.loads(s.texts[0])["calls"][0]["args"]["city"]
    assert city.endswith(" X")
    assert whys(s) == ["fail:no_progress", "PASS:progress", "PASS:succeeded"] and s.sparse == 1.0
