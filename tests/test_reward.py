"""The reward API (ccl.learn.reward): the oracle gets the maximum at every grain; exploits and wrong
actions get less; no text makes it raise."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccl.episode.scripted import oracle_turns, play, with_answer
from ccl.learn.reward import decision_reward, decomposed, episode_reward, sparse
from ccl.records import ReplayVerdict
from ccl.replay.decisions import decisions
from ccl.world.tasks import TEMPLATES, generate_task


def _task(template: str, seed: int = 0, rename: str | None = None):
    pool = "train" if TEMPLATES[template].split == "train" else "eval"
    return {**generate_task(template, seed, pool, rename=rename), "dataset": pool}  # decisions name the split


@pytest.mark.parametrize("template", sorted(TEMPLATES))
def test_the_oracle_gets_the_maximum_at_every_grain(template):
    for rename in (None, "train", "heldout"):
        task = _task(template, 1, rename)
        reward = episode_reward(task, play(task, oracle_turns(task)))
        assert (reward.sparse, reward.decomposed, reward.reasons) == (1.0, 1.0, ())
        assert reward.criteria == (1.0,) * 7
        for d in decisions(task):
            assert decision_reward(task, d, d["gold"]) == (1.0, ReplayVerdict.PASS)


def test_a_pasted_result_loses_exactly_the_answer_weight():
    task = _task("sel_weather")
    turns = oracle_turns(task)
    record = play(task, oracle_turns(task))
    result = next(c["result"] for c in record["calls"] if c["outcome"] == "ok")
    pasted = play(task, with_answer(task, turns, json.dumps(result)))
    reward = episode_reward(task, pasted)
    assert reward.sparse == 0.0 and reward.decomposed == pytest.approx(0.8)  # answer: weight 0.20
    assert reward.criteria == (1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0)


def test_a_wrong_first_tool_fails_the_first_decision():
    task = _task("sel_weather")
    first = decisions(task)[0]
    wrong = json.dumps({"calls": [{"tool": "get_order", "args": {"order_id": "ORD-11111"}}]})
    assert decision_reward(task, first, wrong)[0] == 0.0
    stop = json.dumps({"final": "It is sunny.", "status": "done"})
    assert decision_reward(task, first, stop) == (0.0, ReplayVerdict.PREMATURE_STOP)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=300))
def test_no_text_makes_the_reward_raise(text):
    task = _task("par_orders")
    turns = oracle_turns(task)
    record = play(task, with_answer(task, turns, text))
    assert sparse(task, record) in (0.0, 1.0)
    assert 0.0 <= decomposed(task, record) <= 1.0
    last = decisions(task)[-1]
    assert decision_reward(task, last, text)[0] in (0.0, 1.0)
