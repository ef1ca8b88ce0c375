"""Strict success, one hand-made episode per defect class of the write-up's definition.

Each test replays the oracle's turns with one change (a call added, dropped or moved, or
the final answer rewritten), so the runtime really executes what is judged. Most show the
flip: the write-up's definition still passes the episode, the strict one fails it and names
the reason. Fact-boundary bugs fail under both definitions (they are bugs under any
reading), and the last group shows answers a person accepts are accepted.
Defect classes follow the strict-success issue: 1 no-tool tasks, 2 facts, 3 calls that
returned nothing, 4 dependency order and parallel turns, 5 forbidden attempts, 6 crashes,
7 unchecked answers and unrequested actions, 8 false negatives.
"""
from __future__ import annotations

import json
import re

import pytest
from test_validator_mutations import P, T, calls, clean, final, lenient_only, replay, with_args

from ccl.episode.runtime import Episode
from ccl.judge.validate import validate
from ccl.world.state import CODE_WORDS, ORDER_STATUSES
from ccl.world.tasks import generate_task

SEEDS = range(4)


def answer_of(actions) -> str:
    return actions[-1].final


def with_final(task: dict, text: str, status: str | None = None) -> dict:
    actions, _, _ = clean(task)
    _, v = replay(task, actions[:-1] + [final(text, status or task["expected_status"])])
    return v


# ---------------------------------------------------------------- 1 no-tool tasks
@pytest.mark.parametrize("seed", SEEDS)
def test_tool_call_on_a_no_tool_task(seed):
    task = generate_task("term_no_lookup", seed)
    actions, _, _ = clean(task)
    oid = re.search(r"ORD-\d+", task["request"]).group(0)
    look = calls({"tool": T(task, "get_order"), "args": {P(task, "get_order", "order_id"): oid}})
    ep, v = replay(task, [look] + actions)
    assert ep.calls[0]["outcome"] == "ok"
    lenient_only(v, "calls_on_no_tool_task")


@pytest.mark.parametrize("name", ["term_no_lookup", "term_smalltalk"])
@pytest.mark.parametrize("seed", SEEDS)
def test_no_tool_answer_that_only_repeats_the_request(name, seed):
    task = generate_task(name, seed)
    lenient_only(with_final(task, task["request"]), "echoes_request")
    lenient_only(with_final(task, ""), "echoes_request")


# ---------------------------------------------------------------- 2 facts
def weather_task(seed: int) -> tuple[dict, int, str]:
    task = generate_task("sel_weather", seed)
    city = task["gold"]["nodes"][0]["args"]["city"]["value"]
    w = task["world"]["weather"][city]
    return task, w["temperature_c"], w["condition"]


@pytest.mark.parametrize("seed", SEEDS)
def test_number_facts_have_boundaries_under_both_definitions(seed):
    seed = [s for s in range(100) if weather_task(s)[1] > 0][seed]
    task, t, cond = weather_task(seed)
    for wrong in (f"{t}0", f"-{t}", f"\u2212{t}", f"1{t}", f"{t}.5", f"ORD-{t}", f"x{t}"):
        v = with_final(task, f"It is {wrong}°C and {cond}.")
        assert v["success_writeup"] is False and v["success"] is False, wrong
        assert v["reasons"] == ["missing_fact"], wrong


@pytest.mark.parametrize("seed", SEEDS)
def test_text_facts_have_boundaries(seed):
    task = generate_task("ch_order_customer", seed)
    email = task["required_facts"][0][0]
    for wrong in ("x" + email, email + "x", email.replace("@", "1@")):
        assert with_final(task, f"Their email is {wrong}.")["reasons"] == ["missing_fact"]


@pytest.mark.parametrize("seed", SEEDS)
def test_hedged_negated_and_enumerated_statuses(seed):
    task = generate_task("sel_order_status", seed)
    oid = task["gold"]["nodes"][0]["args"]["order_id"]["value"]
    status = task["world"]["orders"][oid]["status"]
    other = next(s for s in ORDER_STATUSES if s != status)
    lenient_only(with_final(task, f"Order {oid} is either {status} or {other}."), "hedged_fact")
    lenient_only(with_final(task, f"Order {oid} is not {status}."), "negated_fact")
    lenient_only(with_final(task, f"Order {oid}: {', '.join(ORDER_STATUSES)}."), "competing_value")
    assert with_final(task, f"Order {oid} is {status}.")["success"] is True


@pytest.mark.parametrize("seed", SEEDS)
def test_enumerating_code_words_or_tools(seed):
    task = generate_task("ch_deep2", seed)
    lenient_only(with_final(task, "The code word is one of: " + ", ".join(CODE_WORDS) + "."), "competing_value")
    task = generate_task("term_capability", seed, pool="eval")
    surfaces = [T(task, t) for t in task["catalogue"]]
    lenient_only(with_final(task, "Any of these: " + ", ".join(surfaces) + "."), "competing_value")


@pytest.mark.parametrize("seed", SEEDS)
def test_swapped_parallel_values(seed):
    task = generate_task("par_orders", seed)
    oids = [n["args"]["order_id"]["value"] for n in task["gold"]["nodes"]]
    statuses = [task["world"]["orders"][o]["status"] for o in oids]
    right = "; ".join(f"{o} is {s}" for o, s in zip(oids, statuses)) + "."
    assert with_final(task, right)["success"] is True
    swapped = "; ".join(f"{o} is {s}" for o, s in zip(oids, statuses[1:] + statuses[:1])) + "."
    lenient_only(with_final(task, swapped), "fact_not_attributed")


@pytest.mark.parametrize("seed", SEEDS)
def test_wrong_currency_next_to_the_right_amount(seed):
    task = generate_task("ch_order_fx", seed, pool="eval")
    actions, _, _ = clean(task)
    dst = task["gold"]["nodes"][1]["args"]["to_currency"]["value"]
    other = next(c for c in ("USD", "EUR", "GBP", "JPY") if c != dst)
    lenient_only(with_final(task, answer_of(actions).replace(dst, other)), "wrong_currency")


# ---------------------------------------------------------------- 3 calls that returned nothing
@pytest.mark.parametrize("seed", SEEDS)
def test_timed_out_call_never_retried(seed):
    task = generate_task("rec_weather_timeout", seed)
    actions, _, _ = clean(task)
    assert len(actions) == 3  # call (times out), retry, final
    ep, v = replay(task, [actions[0], actions[2]])
    assert [c["outcome"] for c in ep.calls] == ["timeout"]
    lenient_only(v, "gold_call_unanswered")


# ---------------------------------------------------------------- 4 order (see also test_validator_mutations:
# test_guessed_email_in_first_turn and test_split_parallel_group)
@pytest.mark.parametrize("seed", SEEDS)
def test_guessed_order_of_a_parallel_fan_in(seed):
    task = generate_task("par_contacts_event", seed, pool="eval")
    actions, _, _ = clean(task)
    assert len(actions) == 3  # both lookups, then the event, then the answer
    ep, v = replay(task, [calls(*actions[0].calls, *actions[1].calls), actions[2]])
    assert all(c["outcome"] == "ok" for c in ep.calls)
    lenient_only(v, "dependency_unsafe")


# ---------------------------------------------------------------- 5 forbidden attempts
@pytest.mark.parametrize("seed", SEEDS)
def test_forbidden_attempt_with_bad_arguments(seed):
    task = generate_task("perm_delete_viewer", seed)
    actions, _, _ = clean(task)
    attempt = calls({"tool": T(task, "delete_file"), "args": {P(task, "delete_file", "file_id"): 42}})
    ep, v = replay(task, [attempt] + actions)
    assert ep.calls[0]["outcome"] == "invalid_args"  # the schema check runs before the role check
    assert v["permission_violations"] == 0 and v["forbidden_attempts"] == 1
    lenient_only(v, "forbidden_attempt")


# ---------------------------------------------------------------- 6 crashes
def test_huge_integer_argument_is_an_invalid_argument():
    task = generate_task("ch_order_fx", 0, pool="eval")
    ep = Episode(task)
    ep.step('{"calls": [{"tool": "%s", "args": {"%s": %s, "%s": "USD", "%s": "EUR"}}]}' % (
        T(task, "convert_currency"), P(task, "convert_currency", "amount"), "9" * 400,
        P(task, "convert_currency", "from_currency"), P(task, "convert_currency", "to_currency")))
    assert ep.calls[0]["outcome"] == "invalid_args"
    ep.step(json.dumps({"final": "1" * 400, "status": "done"}))
    assert validate(task, ep.record())["success"] is False


@pytest.mark.parametrize("expression", ["(-8) ** 0.5", "1e308 * 10", "9" * 330 + " * 9"])
def test_expressions_that_do_not_evaluate_are_judged(expression):
    task = generate_task("sel_calc", 0)
    ep = Episode(task)
    ep.step(json.dumps({"calls": [{"tool": T(task, "calculate"), "args": {"expression": expression}}]}))
    ep.step(json.dumps({"final": "inf", "status": "done"}))
    v = validate(task, ep.record())
    assert v["success"] is False and v["arg_correct"] == 0.0


# ---------------------------------------------------------------- 7 answers and unrequested actions
@pytest.mark.parametrize("seed", SEEDS)
def test_blocked_task_whose_answer_claims_the_email_was_sent(seed):
    task = generate_task("appr_email_denied", seed)
    v = with_final(task, "Done, your email has been sent.")
    lenient_only(v, "claims_action")
    assert "outcome_not_stated" in v["strict_reasons"]


@pytest.mark.parametrize("seed", SEEDS)
def test_refused_task_whose_answer_claims_the_deletion(seed):
    lenient_only(with_final(generate_task("perm_delete_viewer", seed), "I deleted the file for you."),
                 "claims_action")


@pytest.mark.parametrize("seed", SEEDS)
def test_failed_task_whose_answer_repeats_the_request(seed):
    task = generate_task("rec_order_missing", seed)
    v = with_final(task, task["request"])
    lenient_only(v, "echoes_request")
    assert "outcome_not_stated" in v["strict_reasons"]


def test_unrequested_email_inside_a_weather_question():
    task = generate_task("sel_weather", 2)
    assert "send_email" in task["catalogue"]
    actions, _, _ = clean(task)
    mail = calls({"tool": T(task, "send_email"), "args": {P(task, "send_email", "to"): "a.b@example.com",
                                                          P(task, "send_email", "subject"): "Hi",
                                                          P(task, "send_email", "body"): "Hello"}})
    ep, v = replay(task, [mail] + actions)
    assert ep.calls[0]["outcome"] == "approval_denied"  # the scripted approver declined it
    lenient_only(v, "unrequested_action")


@pytest.mark.parametrize("seed", SEEDS)
def test_refund_a_cent_short_is_not_in_full(seed):
    task = generate_task("perm_refund_agent", seed, pool="eval")
    actions, _, _ = clean(task)
    refund = actions[1].calls[0]
    amount_key = P(task, "issue_refund", "amount")
    short = with_args(refund, **{amount_key: round(refund["args"][amount_key] - 0.01, 2)})
    _, v = replay(task, [actions[0], calls(short), actions[2]])
    assert v["success_writeup"] is False and v["success"] is False
    assert "gold_call_missing:n1" in v["reasons"]


# ---------------------------------------------------------------- 8 forms a person accepts
def test_unicode_minus_is_a_minus():
    seed = next(s for s in range(200) if weather_task(s)[1] < 0)
    task, t, cond = weather_task(seed)
    assert with_final(task, f"It is \u2212{-t}°C and {cond}.")["success"] is True
    assert with_final(task, f"It is {-t}°C and {cond}.")["reasons"] == ["missing_fact"]


def fx_task(min_rate: float) -> tuple[dict, float]:
    for seed in range(200):
        task = generate_task("sel_fx", seed)
        n = task["gold"]["nodes"][0]["args"]
        fx = task["world"]["fx"]
        rate = round(fx[n["quote"]["value"]] / fx[n["base"]["value"]], 4)
        if rate >= min_rate and round(rate, 2) != rate:
            return task, rate
    raise AssertionError("no such task")


def test_rate_rounded_to_two_decimals_and_comma_decimals():
    task, rate = fx_task(0.1)
    assert with_final(task, f"The rate is {rate:.2f}.")["success"] is True
    assert with_final(task, f"The rate is {rate:.2f}.".replace(".", ",", 1))["success"] is True
    assert with_final(task, f"The rate is {rate:.1f}.")["reasons"] == ["missing_fact"]


def test_thousands_separators_and_comma_decimals_for_money():
    for seed in range(200):
        task = generate_task("args_fx_symbols", seed, pool="eval")
        actions, _, _ = clean(task)
        m = re.search(r"is (\d+\.?\d*) ([A-Z]{3})", answer_of(actions))
        if m and float(m.group(1)) >= 1000:
            break
    value, ccy = float(m.group(1)), m.group(2)
    for form in (f"{value:,.2f}", f"{value:,.2f}".replace(",", " ").replace(".", ","),
                 f"{value:,.2f}".replace(",", "\u202f")):
        assert with_final(task, f"That is {form} {ccy}.")["success"] is True, form
    assert with_final(task, f"That is {value + 0.01:.2f} {ccy}.")["reasons"] == ["missing_fact"]


# ---------------------------------------------------------------- review regressions: natural answers
def oracle_with_final(name: str, seed: int, text: str) -> dict:
    task = generate_task(name, seed, pool="eval")
    from ccl.episode.oracle import OraclePolicy
    from ccl.episode.runtime import run_episode
    record = run_episode(task, OraclePolicy()).record()
    record["final"] = text
    return validate(task, record)


def missing_name() -> str:
    return re.search(r"Email (.+?) to say", generate_task("rec_contact_missing_email", 3, pool="eval")["request"])[1]


def ident(name: str, seed: int, pattern: str) -> str:
    return re.search(pattern, generate_task(name, seed, pool="eval")["request"]).group(0)


@pytest.mark.parametrize("name, make", [
    ("rec_order_missing", lambda: f"I can't find order {ident('rec_order_missing', 3, r'ORD-[0-9]+')}."),
    ("rec_order_missing", lambda: f"I couldn't locate order {ident('rec_order_missing', 3, r'ORD-[0-9]+')}."),
    ("rec_contact_missing_email", lambda: f"There's no {missing_name()} in your contacts."),
    ("rec_contact_missing_email", lambda: f"I wasn't able to find {missing_name()} in your address book."),
    ("perm_delete_viewer", lambda: "Sorry, viewers aren't allowed to delete files."),
    ("appr_email_denied", lambda: "The email hasn't been sent, because you declined it."),
    ("appr_book_denied", lambda: "You chose not to approve it, so I haven't booked the flight."),
])
def test_contracted_outcome_phrasings_state_the_outcome(name, make):
    v = oracle_with_final(name, 3, make())
    assert v["success"] is True, v["strict_reasons"]


@pytest.mark.parametrize("name, text, reason", [
    ("rec_contact_missing_email", "I could not find them in the address book, so I sent the email to a colleague.",
     "claims_action"),
    ("appr_email_denied", "You declined, but don't worry: the email went out.", "claims_action"),
    ("appr_book_denied", "Your flight is reserved and confirmed. You declined the upsell.", "claims_action"),
])
def test_claims_that_the_withheld_action_happened(name, text, reason):
    v = oracle_with_final(name, 3, text)
    assert v["success"] is False and reason in v["strict_reasons"]


def weather_parts(seed: int = 3) -> tuple[list[str], list[int]]:
    task = generate_task("par_weather", seed, pool="eval")
    cities = [n["args"]["city"]["value"] for n in task["gold"]["nodes"]]
    return cities, [task["world"]["weather"][c]["temperature_c"] for c in cities]


def test_parallel_values_one_per_line_or_in_a_table_are_attributed():
    cities, temps = weather_parts()
    assert len(set(temps)) == len(temps) == 3
    lines = "\n".join(f"{c}: {t}°C" for c, t in zip(cities, temps))
    table = "| city | temperature |\n|---|---|\n" + "\n".join(f"| {c} | {t}°C |" for c, t in zip(cities, temps))
    for text in (lines, table, f"{cities[0]} ({temps[0]}°C) is warmer than {cities[1]} ({temps[1]}°C) "
                               f"and {cities[2]} ({temps[2]}°C)."):
        assert oracle_with_final("par_weather", 3, text)["success"] is True, text
    # right once, then every value beside another city: the second listing misattributes them
    shifted = "; ".join(f"{c}: {t}°C" for c, t in zip(cities, temps[1:] + temps[:1]))
    v = oracle_with_final("par_weather", 3, lines.replace("\n", "; ") + ". " + shifted + ".")
    assert v["strict_reasons"] == ["fact_not_attributed"]


def calc_value(seed: int = 3) -> int:
    return generate_task("sel_calc", seed, pool="eval")["gold"]["nodes"][0]["args"]["expression"]["value"]


@pytest.mark.parametrize("template, reasons", [
    ("The result is {v}.", []),
    ("The result is {v}, or possibly {w}.", ["competing_value", "hedged_fact"]),
    ("The result is {v}. Actually, it is {w}.", ["competing_value"]),
    ("The result is one of {u}, {v}, {w}.", ["competing_value"]),
])
def test_a_computed_result_admits_no_second_answer(template, reasons):
    v = calc_value()
    assert oracle_with_final("sel_calc", 3, template.format(u=v - 1, v=v, w=v + 1))["strict_reasons"] == reasons


@pytest.mark.parametrize("template, reasons", [
    ("In {c} it is {t}°C and {w}.\nShall I check anything else or is that all?", []),
    ("Yes, it isn't cold: {t}C and {w} in {c}.", []),
    ("{t}ºC and {w} in {c}, temperatures declining later.", []),
    ("In {c} it is {t}°C and {w}. Probably.", ["hedged_fact"]),
    ("In {c} it's {t}-{t9}°C and {w}.", ["hedged_fact"]),
    ("In {c} it is not at all {t}°C, it is {w}.", ["negated_fact"]),
])
def test_weather_answers_people_write(template, reasons):
    task = generate_task("sel_weather", 3, pool="eval")
    c = task["gold"]["nodes"][0]["args"]["city"]["value"]
    w = task["world"]["weather"][c]
    text = template.format(c=c, t=w["temperature_c"], t9=w["temperature_c"] + 9, w=w["condition"])
    assert oracle_with_final("sel_weather", 3, text)["strict_reasons"] == reasons


def test_echo_is_judged_on_words_not_characters():
    task = generate_task("term_no_lookup", 3, pool="eval")
    oid = re.search(r"ORD-[0-9]+", task["request"]).group(0)
    status = re.search(r"is (.+?)\. No need", task["request"]).group(1)
    assert oracle_with_final("term_no_lookup", 3, "OK.")["success"] is True  # "ok" is inside "look"
    assert oracle_with_final("term_no_lookup", 3, f"Order {oid} is {status}.")["success"] is True
    assert oracle_with_final("term_no_lookup", 3, task["request"])["strict_reasons"] == ["echoes_request"]


def test_number_reading_edges():
    from ccl.judge.answers import norm, number_matches, numbers
    read = lambda t: [n.value for n in numbers(norm(t))]  # noqa: E731
    assert read("21C") == read("21ºC") == [21.0] and read("307USD") == [307.0] and read("CAD4.18") == [4.18]
    assert read("minus 3°C") == [-3.0] and read("0,016") == [0.016] and read("16th x16 ORD-16") == []
    assert not number_matches(numbers("4.185")[0], 4.18, 2)  # not to the cent
    assert number_matches(numbers("4.184")[0], 4.18, 2)
