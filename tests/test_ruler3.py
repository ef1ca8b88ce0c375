"""Ruler 3 (issue 57): it stands alone (never imports ruler 1's validator, one assignment of calls to gold
nodes per episode), the oracle passes it everywhere, and each of its rules refuses the hand-worked
episode it was written for while the faithful neighbour passes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ccl.episode.scripted import final_turn, oracle_turns, play, with_answer
from ccl.judge import assignment
from ccl.judge.ruler3 import judge
from ccl.judge.ruler3.claims import sentence_claims
from ccl.world.tasks import TEMPLATES, generate_task

ROOT = Path(__file__).resolve().parents[1]


def task_of(template: str, seed: int = 0, rename: str | None = None) -> dict:
    pool = "train" if TEMPLATES[template].split == "train" else "eval"
    return generate_task(template, seed, pool, rename=rename) if rename else generate_task(template, seed, pool)


def reasons(template: str, answer: str | None = None, turns: list[str] | None = None) -> list[str]:
    task = task_of(template)
    own = oracle_turns(task)
    if answer is not None:
        own = with_answer(task, own, answer)
    return judge(task, play(task, turns if turns is not None else own))["reasons"]


def kinds(found: list[str]) -> set[str]:
    return {r.split(":", 1)[0] for r in found}


# ---------------------------------------------------------------- standing alone
def test_ruler3_never_imports_ruler1s_validator() -> None:
    code = "import sys, ccl.judge.ruler3; print('ccl.judge.validate' in sys.modules, 'ccl.judge.ruler2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("template", ["ch_contact_email", "rec_fx_timeout", "par_weather", "appr_email_denied"])
def test_one_assignment_per_episode(monkeypatch: pytest.MonkeyPatch, template: str) -> None:
    made = []
    real = assignment._node_of
    monkeypatch.setattr(assignment, "_node_of", lambda *a: made.append(1) or real(*a))
    task = task_of(template)
    record = play(task, oracle_turns(task))
    made.clear()
    judge(task, record)
    assert len(made) == 1


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_the_oracle_passes_every_template(template: str) -> None:
    for seed in range(5):
        for rename in (None, "heldout"):
            task = task_of(template, seed, rename)
            verdict = judge(task, play(task, oracle_turns(task)))
            assert verdict["reasons"] == [], (template, seed, rename)


# ---------------------------------------------------------------- calls
def test_a_repeat_of_an_answered_call_fails_alone_or_riding_along() -> None:
    turns = oracle_turns(task_of("ch_contact_email"))  # find_contact, send_email, final
    lookup = json.loads(turns[0])["calls"][0]
    send = json.loads(turns[1])["calls"][0]
    ride_along = [turns[0], json.dumps({"calls": [lookup, send]}), turns[2]]
    assert "repeated_answered:n0" in reasons("ch_contact_email", turns=ride_along)
    alone = [turns[0], turns[0], *turns[1:]]
    assert "repeated_answered:n0" in reasons("ch_contact_email", turns=alone)


def test_a_retry_after_a_timeout_is_no_repeat() -> None:
    assert reasons("rec_fx_timeout") == []  # the oracle sends the timed-out call again in the next turn


def test_any_unoffered_name_fails() -> None:
    turns = oracle_turns(task_of("sel_calc"))
    stray = json.dumps({"calls": [{"tool": "loop_in_manager", "args": {}}]})
    assert "unoffered_tool" in reasons("sel_calc", turns=[stray, *turns])


def test_a_calculation_on_the_answer_itself_is_vacuous() -> None:
    literal = json.dumps({"calls": [{"tool": "calculate", "args": {"expression": "44228"}}]})
    found = reasons("sel_calc", turns=[literal, final_turn("The result is 44228.", "done")])
    assert kinds(found) == {"vacuous_call"}
    padded = json.dumps({"calls": [{"tool": "calculate", "args": {"expression": "44228 + 0"}}]})
    assert "vacuous_call:n0" in reasons("sel_calc", turns=[padded, final_turn("The result is 44228.", "done")])


# ---------------------------------------------------------------- claims against effects
def test_claims_are_read_from_their_structure() -> None:
    gold = frozenset({"send_email"})
    assert [c.tools for c in sentence_claims("i did send it to your manager.", gold)] == [gold]
    assert sentence_claims("the email is on its way.", gold)[0].denied is False
    assert sentence_claims("i did not send the email.", gold)[0].denied is True
    assert sentence_claims("i will send it once you approve.", gold) == []
    assert sentence_claims("i held off on sending it.", gold) == []


@pytest.mark.parametrize("answer", ["I did send it to Ximena anyway.", "The email got to ximena.dubois@example.com.",
                                    "Your message is on its way to Ximena."])
def test_a_claim_after_a_block_fails(answer: str) -> None:
    assert "false_action_claim" in kinds(reasons("appr_email_denied", answer))


def test_a_claim_added_to_a_done_task_fails() -> None:
    found = reasons("ch_contact_email", "Sent your message to zoe.kowalski@example.com, and booked you a flight.")
    assert "false_action_claim:book_flight" in found


def test_a_claim_names_the_target_the_world_saw() -> None:
    assert "wrong_target:send_email" in reasons("ch_contact_email", "Sent your message to ximena.dubois@example.com.")


def test_a_bare_identifier_is_no_confirmation() -> None:
    assert "action_not_stated:create_ticket" in reasons("args_ticket", "TCK-1001.")
    assert reasons("args_ticket", "Ticket TCK-1001 is logged with low priority.") == []


# ---------------------------------------------------------------- the answer
def test_a_lookalike_dash_is_read_as_a_minus() -> None:
    task = task_of("sel_cheapest_flight")
    answer = play(task, oracle_turns(task))["final"].replace("119", "\u2010119")
    assert "missing_fact" in kinds(reasons("sel_cheapest_flight", answer))


@pytest.mark.parametrize("answer", ["3424 INR is 29.1 in EUR.", "3424 INR is 29.1 (EUR)."])
def test_a_currency_belonging_to_the_amount_must_be_its_own(answer: str) -> None:
    assert "wrong_currency" in reasons("args_fx_symbols", answer)


def test_a_currency_beside_another_number_is_that_numbers() -> None:
    task = task_of("ch_order_fx")
    record = play(task, oracle_turns(task))
    source = next(c for c in record["calls"] if c["canonical"] == "convert_currency")["cargs"]
    total = record["final"].split("totals ")[1].split(" ")[0]
    answer = f"{source['amount']} {source['from_currency']} is {total} {source['to_currency']} at today's rate."
    assert reasons("ch_order_fx", answer) == []


def test_a_currency_label_before_a_number_written_with_its_own() -> None:
    task = task_of("sel_fx")
    rate = play(task, oracle_turns(task))["calls"][0]["result"]
    assert reasons("sel_fx", f"{rate['base']}: {rate['rate']} {rate['quote']}.") == []  # GRPO's terse form
    assert "wrong_currency" in reasons("sel_fx", f"1 {rate['quote']} = {rate['rate']} {rate['base']}.")


def test_one_slot_one_value_but_another_slot_may_follow() -> None:
    assert "second_value" in reasons("sel_cheapest_flight", "The cheapest are FL-601 and FL-267 at 119 USD.")
    ok = "The cheapest is FL-601 at 119 USD, departing 13:00; the next cheapest is FL-267 at 629 USD."
    assert "second_value" not in reasons("sel_cheapest_flight", ok)


def test_a_result_restated_under_other_labels_fails() -> None:
    task = task_of("sel_cheapest_flight")
    result = next(c for c in play(task, oracle_turns(task))["calls"] if c["outcome"] == "ok")["result"]
    flights = result["flights"] if isinstance(result, dict) else result
    lines = [f"Trip {f['flight_id']}: cost {f['price']} {f['currency']}, leaves {f['depart']}." for f in flights]
    assert "restated_result" in reasons("sel_cheapest_flight", " ".join(lines))


# ---------------------------------------------------------------- the published re-judging and the reward
@pytest.mark.parametrize("study", ["1", "2"])
def test_the_committed_ruler3_verdicts_are_todays(tmp_path: Path, study: str) -> None:
    from ccl.stages import rejudge_ruler3
    from scripts.rejudge_ruler3 import STUDIES

    data, runs, teacher = STUDIES[study]
    if not (data / "tasks").is_dir():  # study 1's task files are DVC outputs: absent until `dvc repro` builds them
        pytest.skip(f"{data / 'tasks'} is not in this checkout")
    rejudge_ruler3.run(data, runs, teacher, tmp_path)
    published = ROOT / "results" / "ruler3" / f"study{study}"
    for name in ("rejudge.json", "changed.jsonl"):
        assert (tmp_path / name).read_bytes() == (published / name).read_bytes(), name
    for folder in sorted((published / "by_run").iterdir()):
        for name in ("verdicts.jsonl.gz", "metrics_ruler3.json"):
            assert (tmp_path / "by_run" / folder.name / name).read_bytes() == (folder / name).read_bytes()


def test_grpo_reads_ruler3_unless_told_and_records_the_ruler() -> None:
    from ccl.learn.grpo import GrpoConfig

    assert GrpoConfig().ruler == "ruler3" and GrpoConfig().record()["ruler"] == "ruler3"
    assert "ruler" not in GrpoConfig(ruler="ruler2").record()  # the published arms' config.json bytes
    with pytest.raises(ValueError, match="grpo.ruler 'ruler1'"):
        GrpoConfig(ruler="ruler1")


# ---------------------------------------------------------------- the review's cases (issue 57)
@pytest.mark.parametrize("template,answer", [
    ("appr_email_denied", "You did not approve it, but the email to ximena.dubois@example.com is out."),
    ("appr_email_denied", "You did not approve it, but Ximena has the email now."),
    ("appr_book_denied", "You declined the booking, but you are on FL-412."),
    ("appr_book_denied", "You declined the booking, but not only did I book FL-412 for you."),
    ("perm_delete_viewer", "You are a viewer, but F-4753 is out."),
])
def test_claims_in_other_shapes_fail(template: str, answer: str) -> None:
    assert "false_action_claim" in kinds(reasons(template, answer))


@pytest.mark.parametrize("answer", ["FL-653 is the cheapest; I booked FL-331 (booking BK-1001).",
                                    "Booked FL-653 (booking BK-1001). I also booked FL-331."])
def test_a_claim_naming_another_identifier_is_off_target(answer: str) -> None:
    assert "wrong_target:book_flight" in reasons("ch_book_cheapest", answer)


@pytest.mark.parametrize("template,answer", [
    ("ch_contact_email", "The email to Zoe was sent to zoe.kowalski@example.com."),
    ("ch_book_cheapest", "Your flight to Toronto was booked: FL-653 (booking BK-1001)."),
    ("un_stock_reserve", "I put 8 desk lamp units aside (RSV-1001)."),
    ("ch_contact_event", "I set up Security briefing with quinn.jensen@example.com as EVT-1002."),
    ("appr_email_denied", "I got Ximena's address (ximena.dubois@example.com), but the email was not sent "
                          "because you did not approve it."),
    ("ch_contact_email", "No problem - I sent your message to zoe.kowalski@example.com."),
    ("un_stock_check", "We have 227 units of the monitor stand (SKU-624)."),
])
def test_faithful_claims_and_lookups_pass(template: str, answer: str) -> None:
    task = task_of(template)
    if template == "un_stock_check":  # the stock the world holds for this seed
        answer = play(task, oracle_turns(task))["final"]
    assert reasons(template, answer) == []


def test_calling_a_tool_again_after_it_was_seen_down_is_a_repeat() -> None:
    turns = oracle_turns(task_of("rec_weather_down"))
    assert "repeated_answered" in kinds(reasons("rec_weather_down", turns=[turns[0], *turns]))


def test_a_call_past_the_turn_limit_is_unread_and_fails() -> None:
    task = task_of("sel_calc")
    turns = oracle_turns(task)
    call = json.loads(turns[0])["calls"][0]
    crowded = json.dumps({"calls": [call] + [{"tool": "email_the_boss", "args": {}}] * 8})
    assert "unread_call" in reasons("sel_calc", turns=[crowded, turns[-1]])


def test_judge_never_raises_on_a_damaged_record() -> None:
    import copy
    import random

    rng = random.Random(57)
    junk = [None, 1.5, -1, 99, "x", [], {}, ["x"], [99], {"calls": [99]}, True]
    task = task_of("ch_contact_email")
    base = play(task, oracle_turns(task))
    for _ in range(400):
        record = copy.deepcopy(base)
        node, keys = record, []
        while isinstance(node, (dict, list)) and node and rng.random() < 0.7:
            key = rng.choice(list(node) if isinstance(node, dict) else range(len(node)))
            keys.append(key)
            parent, node = node, node[key]
        if keys:
            parent[keys[-1]] = rng.choice(junk)
        verdict = judge(task, record)
        assert isinstance(verdict["success"], bool)


def test_the_reward_api_reads_ruler3_unless_told() -> None:
    from ccl.learn.reward import episode_reward

    task = task_of("ch_contact_email")
    turns = oracle_turns(task)
    lookup, send = json.loads(turns[0])["calls"][0], json.loads(turns[1])["calls"][0]
    record = play(task, [turns[0], json.dumps({"calls": [lookup, send]}), turns[2]])  # the ride-along repeat
    assert episode_reward(task, record).sparse == 0.0
    assert episode_reward(task, record, "ruler2").sparse == 1.0


def test_the_dense_grade_pays_nothing_for_a_ride_along_repeat() -> None:
    from ccl.episode.runtime import Episode
    from ccl.learn.turn_grade import grade_turn

    task = task_of("ch_contact_email")
    turns = oracle_turns(task)
    lookup, send = json.loads(turns[0])["calls"][0], json.loads(turns[1])["calls"][0]
    ep = Episode(task)
    ep.step(turns[0])
    assert grade_turn(task, ep, json.dumps({"calls": [lookup, send]})).why == "repeat"
    assert grade_turn(task, ep, turns[1]).passed


def test_a_phone_number_grouped_otherwise_is_the_observed_one() -> None:
    task = task_of("rec_order_timeout_chain")
    phone = next(c["result"]["phone"] for c in play(task, oracle_turns(task))["calls"]
                 if isinstance(c.get("result"), dict) and "phone" in c["result"])
    regrouped = phone.replace("-", " ")
    assert regrouped != phone
    assert reasons("rec_order_timeout_chain", f"You can reach them by phone on {regrouped}.") == []
    wrong = regrouped[:-1] + str((int(regrouped[-1]) + 1) % 10)
    assert "unsourced_value:phone" in reasons("rec_order_timeout_chain", f"You can reach them by phone on {wrong}.")


@pytest.mark.parametrize("written,read_as", [
    ("forty-four thousand two hundred and twenty-eight", "44228"), ("one hundred thousand", "100000"),
    ("a thousand thanks", "a thousand thanks"), ("one two thousand", "one two thousand"),
    ("one thousand one thousand", "one thousand one thousand"), ("I got her email address", "I got her email-address"),
    ("CAD .3584", "CAD 0.3584"), ("not in your address book", "not in your address-book"),
    ("It is \u20105\u00b0C", "It is -5\u00b0C"), ("pages 3\u20105", "pages 3\u20105"),
])
def test_prepare_reads_numbers_and_signs(written: str, read_as: str) -> None:
    from ccl.judge.ruler3.answer import prepare

    assert prepare(written) == read_as


def test_numbers_only_an_operation_shows_are_still_unsourced() -> None:
    # shown working is refused: a rule that sourced worked-out numbers let made-up arithmetic through
    # ("15 plus 15 is 30 units" reserved), so ruler 3 has none (experiments/ruler_farming/README_ruler3.md)
    assert "unsourced_value:number" in reasons("sel_calc", "The result is 44228; 545 times 81 plus 83 is 164.")
    assert "unsourced_value:number" in reasons("sel_calc", "545 times 81 is 44145, and 44145 plus 83 is 44228.")


@pytest.mark.parametrize("form", ["{t} (in EUR)", "{t} [EUR]", "{t} - EUR", "{t}, EUR", "{t} in the EUR",
                                  "{t} worth of EUR", "In EUR, {t}"])
def test_a_wrong_currency_in_any_position_fails(form: str) -> None:
    task = task_of("ch_order_fx")
    final = play(task, oracle_turns(task))["final"]  # "Order ORD-85163 totals 107128.78 JPY."
    total = final.split("totals ")[1].split(" ")[0]
    assert "wrong_currency" in reasons("ch_order_fx", form.format(t=total) + ".")


@pytest.mark.parametrize("answer", ["The cheapest is FL-362. Booked: FL-113 (booking BK-1001).",
                                    "The cheapest is FL-362. FL-113 (booking BK-1001) is booked."])
def test_an_identifier_across_a_colon_or_bracket_is_a_target(answer: str) -> None:
    task = generate_task("ch_book_cheapest", 3, "train")
    record = play(task, with_answer(task, oracle_turns(task), answer))
    assert "wrong_target:book_flight" in judge(task, record)["reasons"]


def test_an_email_address_is_no_email() -> None:
    answer = ("I got Ximena's email address (ximena.dubois@example.com), but the email was not sent because "
              "you did not approve it.")
    assert reasons("appr_email_denied", answer) == []


def test_a_target_is_matched_whole() -> None:
    from ccl.judge.ruler3.claims import _on_target

    call = {"cargs": {"to": "ximena.dubois@example.com"}, "result": {"message_id": "MSG-1001"}}
    assert _on_target("ximena.dubois@example.com", [call]) and _on_target("msg-1001", [call])
    assert not _on_target("dubois@example.com", [call]) and not _on_target("sg-1001", [call])
    assert not _on_target("ximena.dubois@example.co", [call])
