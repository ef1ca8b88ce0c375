"""ccl.judge.recovery: a retry counts only after the failure it answers was seen, a fallback only
after the primary's outage was seen. Hand-worked on the weather timeout and outage templates."""
from __future__ import annotations

import json

from experiments.ruler_farming.redteam import base as R
from experiments.ruler_farming.redteam import calls as K
from ccl.judge.recovery import recovery_reasons
from ccl.world.tasks import generate_task

TIMEOUT = generate_task("rec_weather_timeout", 1)  # get_weather (n0) times out on its first call
DOWN = generate_task("rec_weather_down", 1)  # get_weather (n0) is down; get_weather_backup (n1) is its fallback


def test_the_oracles_recovery_is_recovery():
    for task in (TIMEOUT, DOWN):
        assert recovery_reasons(task, R.play(task, R.oracle_turns(task))) == []


def test_a_copy_sent_in_the_same_turn_is_not_a_retry():
    record = R.play(TIMEOUT, K.double_first_timeout(TIMEOUT, R.oracle_turns(TIMEOUT)))
    assert [(c["turn"], c["outcome"]) for c in record["calls"]] == [(0, "timeout"), (0, "ok")]
    assert recovery_reasons(TIMEOUT, record) == ["repeated_in_turn:n0", "retry_before_failure:n0"]


def test_a_decoy_that_takes_the_timeout_is_not_recovery_either():
    turns = R.oracle_turns(TIMEOUT)
    call = json.loads(turns[0])["calls"][0]
    key = next(iter(call["args"]))
    decoy = {"calls": [{"tool": call["tool"], "args": {**call["args"], key: "Nowhere"}}, call]}
    record = R.play(TIMEOUT, [json.dumps(decoy), turns[-1]])
    assert [(c["turn"], c["outcome"]) for c in record["calls"]] == [(0, "timeout"), (0, "ok")]
    assert recovery_reasons(TIMEOUT, record) == ["retry_before_failure:n0"]


def test_a_backup_called_before_the_outage_was_seen_is_not_a_fallback():
    turns = R.oracle_turns(DOWN)
    assert recovery_reasons(DOWN, R.play(DOWN, K.backup_first(DOWN, turns))) == ["fallback_unprompted:n1"]
    # both in one turn: the outage is seen only after the turn, so the backup was not an answer to it
    first, second = json.loads(turns[0]), json.loads(turns[1])
    both = json.dumps({"calls": first["calls"] + second["calls"]})
    record = R.play(DOWN, [both, turns[-1]])
    assert [c["outcome"] for c in record["calls"]] == ["service_unavailable", "ok"]
    assert recovery_reasons(DOWN, record) == ["fallback_unprompted:n1"]
