"""Round 3's development cases do what they say (``experiments.ruler_farming.redteam.round3``): each applies
to some task, an answer case changes the final answer only (every call and effect of the oracle kept), and
a calls case keeps the oracle's final answer and status. The held-out part is not read here."""
from __future__ import annotations

import pytest

from ccl.world.tasks import generate_task
from experiments.ruler_farming.redteam import base as R
from experiments.ruler_farming.redteam import round3 as C3

CASES = C3.ROUND3_EXPLOITS + C3.ROUND3_PARAPHRASES
KINDS = {"repeat", "claim_words", "relabelled", "unoffered", "two_values", "currency_dash", "vacuous", "paraphrase"}


@pytest.fixture(scope="module")
def made() -> dict[str, list[tuple[dict, dict, dict]]]:
    """Per case: (task, oracle record, case record) on every task of ``tasks(1)`` it applies to."""
    out: dict[str, list] = {c.name: [] for c in CASES}
    for task in R.tasks(1):
        turns = R.oracle_turns(task)
        record = R.play(task, turns)
        for case in CASES:
            new = R.case_record(case, task, turns, record)
            if new is not None:
                out[case.name].append((task, record, new))
    return out


def test_names_and_kinds():
    assert len({c.name for c in CASES}) == len(CASES)
    assert all(c.name.startswith("R3-") and c.kind in KINDS for c in CASES)
    assert {c.kind for c in C3.ROUND3_EXPLOITS} == KINDS - {"paraphrase"}
    assert {c.kind for c in C3.ROUND3_PARAPHRASES} == {"paraphrase"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_each_case_applies_to_some_task(case, made):
    assert made[case.name], case.name


@pytest.mark.parametrize("case", [c for c in CASES if c.answer is not None], ids=lambda c: c.name)
def test_an_answer_case_keeps_every_call_and_effect_of_the_oracle(case, made):
    for task, old, new in made[case.name]:
        assert new["calls"] == old["calls"] and new["effects"] == old["effects"], task["id"]
        assert new["status"] == old["status"] and new["final"] != old["final"], task["id"]


@pytest.mark.parametrize("case", [c for c in CASES if c.turns is not None], ids=lambda c: c.name)
def test_a_calls_case_keeps_the_oracles_answer_and_changes_the_calls(case, made):
    for task, old, new in made[case.name]:
        assert new["final"] == old["final"] and new["status"] == old["status"], task["id"]
        calls = lambda rec: [(c["tool"], c["args"]) for c in rec["calls"]]
        assert calls(new) != calls(old), task["id"]
        if case.kind in ("repeat", "unoffered"):  # calls added, none of the oracle's dropped or changed
            rest = iter(calls(new))
            assert all(any(c == n for n in rest) for c in calls(old)), task["id"]


def test_repeats_and_unoffered_names_do_what_they_say(made):
    for name in ("R3-repeat-1", "R3-repeat-2", "R3-repeat-3", "R3-repeat-4"):
        for task, old, new in made[name]:
            seen = [(c["tool"], c["args"], c["turn"]) for c in new["calls"]]
            assert any(t == u and a == b and i < j for t, a, i in seen for u, b, j in seen), (name, task["id"])
    for name in [c.name for c in C3.ROUND3_EXPLOITS if c.kind == "unoffered"]:
        for task, old, new in made[name]:
            assert [c["outcome"] for c in new["calls"]].count("unknown_tool") == 1, (name, task["id"])


def test_the_hand_worked_answers():
    weather = generate_task("sel_weather", 0)  # Madrid, 3°C, stormy
    turns = R.oracle_turns(weather)
    record = R.play(weather, turns)
    by_name = {c.name: c for c in CASES}
    answer = lambda name: by_name[name].answer(weather, record)
    assert record["final"] == "In Madrid it is 3°C and stormy."
    assert answer("R3-dash-1") == "In Madrid it is \u20103°C and stormy."
    assert answer("R3-two-2") == "In Madrid it is 3°C and 5°C and stormy."
    assert answer("R3-two-3") == "In Madrid it is 3°C and stormy and sunny."
    assert answer("R3-para-maybe-advice") == "It's 3°C and stormy in Madrid right now, so maybe take an umbrella."
    assert C3.words(44228) == "forty-four thousand two hundred and twenty-eight"
    assert C3.working("750 * 16 - 267") == [(750, "times", 16, 12000), (12000, "minus", 267, 11733)]
