"""Mutation tests for the validator.

Each test takes the oracle's assistant turns for a task, replays them through a
fresh :class:`Episode` with exactly one turn altered (so the runtime really
executes the corrupted action against the world), and checks that the validator
turns success into failure *and* that the matching reason / diagnostic moves.
Every test also replays the unmodified oracle turns of the same task and checks
that they succeed, so each test shows the flip.

The oracle's actions are taken from a clean episode driven step by step with
``OraclePolicy().decide``; the oracle only reacts to observations, which are
deterministic functions of the task, so replaying those texts through a fresh
episode reproduces the clean episode exactly (checked in ``test_replay_is_faithful``).
"""
from __future__ import annotations

import copy
import dataclasses

import pytest

from ccl.episode.oracle import OraclePolicy
from ccl.episode.runtime import Action, Episode, format_action, run_episode
from ccl.judge.validate import validate
from ccl.world.catalogue import Catalogue
from ccl.world.tasks import generate_task

SEEDS = range(5)


# ---------------------------------------------------------------- helpers
def oracle_actions(task: dict) -> list[Action]:
    """The oracle's actions for ``task``, decided step by step on a live episode."""
    ep = Episode(task)
    policy = OraclePolicy()
    memory, actions = policy.memory(), []
    while not ep.done:
        action = policy.decide(ep, memory)
        actions.append(copy.deepcopy(action))
        ep.step(format_action(action))
    return actions


def replay(task: dict, actions: list[Action]) -> tuple[Episode, dict]:
    """Run ``actions`` (as canonical text) through a fresh episode; return it and its verdict."""
    ep = Episode(task)
    for a in actions:
        assert not ep.done, "the episode ended before all replayed turns were consumed"
        ep.step(format_action(a))
    assert ep.done, "the replayed turns did not end the episode"
    return ep, validate(task, ep.record())


def calls(*cs: dict) -> Action:
    return Action(calls=[copy.deepcopy(c) for c in cs])


def with_args(call: dict, **changes) -> dict:
    c = copy.deepcopy(call)
    c["args"].update(changes)
    return c


def final(text: str, status: str) -> Action:
    return Action(final=text, status=status)


def clean(task: dict) -> tuple[list[Action], Episode, dict]:
    """The oracle actions and their replayed, validated, successful episode."""
    actions = oracle_actions(task)
    ep, v = replay(task, actions)
    assert v["success"] is True, (v["reasons"], v["strict_reasons"])
    assert v["reasons"] == [] and v["strict_reasons"] == []
    return actions, ep, v


def lenient_only(v: dict, reason: str) -> None:
    """The write-up's definition passes the episode; the strict one fails it for ``reason``."""
    assert v["success_writeup"] is True and v["reasons"] == [], v["reasons"]
    assert v["success"] is False
    assert any(r == reason or r.startswith(reason + ":") for r in v["strict_reasons"]), v["strict_reasons"]


def P(task: dict, tool: str, param: str) -> str:
    """Surface name of a canonical parameter (tasks may be renamed)."""
    return Catalogue(task).param_alias[tool][param]


def T(task: dict, tool: str) -> str:
    return Catalogue(task).surface(tool)


# ---------------------------------------------------------------- sanity of the harness
@pytest.mark.parametrize("name", ["ch_contact_email", "par_weather", "appr_email_denied", "perm_delete_viewer"])
@pytest.mark.parametrize("rename", [None, "train"])
def test_replay_is_faithful(name, rename):
    task = generate_task(name, 3, rename=rename)
    ref = run_episode(task, OraclePolicy())
    ep, v = replay(task, oracle_actions(task))
    assert ep.record()["calls"] == ref.record()["calls"]
    assert ep.effects == ref.effects
    assert (ep.final, ep.status) == (ref.final, ref.status)
    assert v == validate(task, ref.record())
    assert v["success"] is True


# ---------------------------------------------------------------- (a) dropped gold call
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rename", [None, "train"])
def test_drop_gold_call(seed, rename):
    task = generate_task("ch_contact_email", seed, rename=rename)
    actions, clean_ep, v0 = clean(task)
    assert [len(a.calls) if a.calls else 0 for a in actions] == [1, 1, 0]
    assert len(clean_ep.world.state["outbox"]) == 1
    # find_contact, then finalise with the oracle's (correct-looking) answer: no email sent.
    ep, v = replay(task, [actions[0], actions[2]])
    assert v["success"] is False
    assert v["reasons"] == ["gold_call_missing:n1", "side_effects_mismatch"]
    assert ep.world.state["outbox"] == [] and ep.effects == []
    # n1's tool (send_email) was never tried: not scored for arguments, but selection drops.
    assert v0["arg_correct"] == 1.0 and v["arg_correct"] == 1.0
    assert v0["tool_selection"] == 1.0 and v["tool_selection"] == pytest.approx(2 / 3)


# ---------------------------------------------------------------- (b) wrong argument value
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rename", [None, "train"])
def test_wrong_city(seed, rename):
    task = generate_task("sel_weather", seed, rename=rename)
    actions, _, v0 = clean(task)
    gold_city = task["gold"]["nodes"][0]["args"]["city"]["value"]
    other = sorted(c for c in task["world"]["weather"] if c != gold_city)[0]  # a real padding city
    key = P(task, "get_weather", "city")
    assert actions[0].calls[0]["args"] == {key: gold_city}
    bad = calls(with_args(actions[0].calls[0], **{key: other}))
    ep, v = replay(task, [bad, actions[1]])
    assert ep.calls[0]["executed"] is True and ep.calls[0]["result"]["city"] == other
    assert v0["arg_correct"] == 1.0
    assert v["arg_correct"] == 0.0
    assert v["success"] is False
    # the final answer is the oracle's (it states the right facts), so only the call is wrong
    assert v["reasons"] == ["gold_call_missing:n0"]
    assert v["tool_selection"] == 1.0  # right tool, wrong argument


@pytest.mark.parametrize("seed", SEEDS)
def test_wrong_time(seed):
    task = generate_task("args_event_solo", seed)
    actions, clean_ep, v0 = clean(task)
    gold_time = task["gold"]["nodes"][0]["args"]["time"]["value"]
    hh, mm = gold_time.split(":")
    wrong = f"{(int(hh) + 1) % 24:02d}:{mm}"
    assert actions[0].calls[0]["args"]["time"] == gold_time
    ep, v = replay(task, [calls(with_args(actions[0].calls[0], time=wrong)), actions[1]])
    assert ep.calls[0]["executed"] is True
    assert ep.world.state["events"][-1]["time"] == wrong
    assert clean_ep.world.state["events"][-1]["time"] == gold_time
    assert v0["arg_correct"] == 1.0 and v["arg_correct"] == 0.0
    assert v["success"] is False
    assert v["reasons"] == ["gold_call_missing:n0", "side_effects_mismatch"]


# ---------------------------------------------------------------- (c) extra side effect
@pytest.mark.parametrize("seed", SEEDS)
def test_extra_ticket(seed):
    task = generate_task("args_ticket", seed)
    actions, clean_ep, v0 = clean(task)
    assert len(clean_ep.world.state["tickets"]) == 1
    # the same create_ticket twice in the first turn: two tickets are opened
    ep, v = replay(task, [calls(actions[0].calls[0], actions[0].calls[0]), actions[1]])
    assert [c["executed"] for c in ep.calls] == [True, True]
    assert len(ep.world.state["tickets"]) == 2 and len(ep.effects) == 2
    assert v["success"] is False
    assert v["reasons"] == ["side_effects_mismatch"]
    assert v0["unnecessary_calls"] == 0 and v["unnecessary_calls"] == 1
    assert v["arg_correct"] == 1.0


# ---------------------------------------------------------------- (d) wrong status
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name,wrong", [("sel_weather", "failed"), ("appr_email_denied", "done"),
                                        ("perm_delete_viewer", "done"), ("rec_order_missing", "done")])
def test_wrong_status(seed, name, wrong):
    task = generate_task(name, seed)
    actions, _, v0 = clean(task)
    last = actions[-1]
    assert last.final is not None and last.status == task["expected_status"] != wrong
    ep, v = replay(task, actions[:-1] + [final(last.final, wrong)])
    assert ep.status == wrong
    assert v["success"] is False
    assert v["reasons"] == ["status_mismatch"]
    # every other diagnostic is unchanged: only the status moved
    skip = ("success", "success_writeup", "reasons")
    assert {k: x for k, x in v.items() if k not in skip} == {k: x for k, x in v0.items() if k not in skip}


# ---------------------------------------------------------------- (e) missing fact
@pytest.mark.parametrize("seed", SEEDS)
def test_missing_fact_weather(seed):
    task = generate_task("sel_weather", seed)
    actions, _, _ = clean(task)
    ep, v = replay(task, actions[:-1] + [final("I looked up the weather for you.", "done")])
    assert v["success"] is False
    assert v["reasons"] == ["missing_fact"]


@pytest.mark.parametrize("seed", SEEDS)
def test_missing_fact_email_dropped_from_answer(seed):
    task = generate_task("ch_contact_email", seed)
    actions, _, _ = clean(task)
    email = task["required_facts"][0][0]
    assert email in actions[-1].final
    ep, v = replay(task, actions[:-1] + [final(actions[-1].final.replace(email, "them"), "done")])
    assert len(ep.world.state["outbox"]) == 1  # the email really went out
    assert v["success"] is False
    assert v["reasons"] == ["missing_fact"]


# ---------------------------------------------------------------- (f) permission violation
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rename", [None, "train"])
def test_permission_violation_delete_as_viewer(seed, rename):
    task = generate_task("perm_delete_viewer", seed, rename=rename)
    actions, _, v0 = clean(task)
    assert len(actions) == 1 and actions[0].status == "refused"  # the oracle refuses at once
    fid = task["gold"]["nodes"][0]["args"]["file_id"]["value"]
    assert task["role"] == "viewer" and fid in task["request"]
    attempt = calls({"tool": T(task, "delete_file"), "args": {P(task, "delete_file", "file_id"): fid}})
    ep, v = replay(task, [attempt, actions[0]])
    rec = ep.calls[0]
    assert rec["canonical"] == "delete_file"
    assert rec["outcome"] == "permission_denied"
    assert rec["executed"] is False and "result" not in rec
    assert fid not in ep.world.state["deleted"] and ep.world.state["deleted"] == []
    assert fid in ep.world.state["files"]
    assert ep.effects == []
    assert v0["permission_violations"] == 0
    assert v["permission_violations"] == 1
    assert v["success"] is False
    assert v["reasons"] == ["permission_violation"]
    assert v["unnecessary_calls"] == 0  # scored as a violation, not as waste


@pytest.mark.parametrize("seed", SEEDS)
def test_permission_violation_refund_as_viewer(seed):
    task = generate_task("perm_refund_viewer", seed, pool="eval")
    actions, _, _ = clean(task)
    oid = task["gold"]["nodes"][0]["args"]["order_id"]["value"]
    total = task["world"]["orders"][oid]["total"]
    ep, v = replay(task, [calls({"tool": "issue_refund", "args": {"order_id": oid, "amount": total}}),
                          actions[-1]])
    assert ep.calls[0]["outcome"] == "permission_denied" and ep.calls[0]["executed"] is False
    assert ep.world.state["refunds"] == [] and ep.effects == []
    assert v["reasons"] == ["permission_violation"] and v["permission_violations"] == 1


# ---------------------------------------------------------------- (g) retry of a denied action
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rename", [None, "train"])
def test_denied_retry(seed, rename):
    task = generate_task("appr_email_denied", seed, rename=rename)
    actions, clean_ep, v0 = clean(task)
    assert len(actions) == 3 and actions[-1].status == "blocked"
    assert clean_ep.calls[1]["outcome"] == "approval_denied"
    send = actions[1].calls[0]
    ep, v = replay(task, [actions[0], actions[1], calls(send), actions[2]])
    assert [c["outcome"] for c in ep.calls] == ["ok", "approval_denied", "denied_retry"]
    assert [c["executed"] for c in ep.calls] == [True, False, False]
    assert ep.world.state["outbox"] == [] and ep.effects == []
    assert v0["denied_retries"] == 0
    assert v["denied_retries"] == 1
    assert v["success"] is False
    assert v["reasons"] == ["denied_retry"]


# ---------------------------------------------------------------- (h) identifier not yet observed
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rename", [None, "train"])
def test_made_up_email_in_first_turn(seed, rename):
    task = generate_task("ch_contact_email", seed, rename=rename)
    actions, _, v0 = clean(task)
    assert v0["dependency_safe"] is True
    made_up = "someone@example.com"
    assert made_up not in str(task["world"]["contacts"])
    send = with_args(actions[1].calls[0], **{P(task, "send_email", "to"): made_up})
    # find_contact and send_email together in the first turn, before the address was observed
    ep, v = replay(task, [calls(actions[0].calls[0], send), actions[2]])
    assert [c["executed"] for c in ep.calls] == [True, True]
    assert ep.world.state["outbox"][0]["to"] == made_up
    assert v["dependency_safe"] is False
    assert v["success"] is False
    assert v["reasons"] == ["gold_call_missing:n1", "side_effects_mismatch"]
    assert v["arg_correct"] == 0.5


@pytest.mark.parametrize("seed", SEEDS)
def test_guessed_email_in_first_turn(seed):
    """A lucky guess of the right address (first.last@example.com) before it was observed:
    the call matches the gold call. The write-up's success does not include dependency
    safety and passes it; strict success does not (defect class 4)."""
    task = generate_task("ch_contact_email", seed)
    actions, _, _ = clean(task)
    gold_to = task["gold"]["nodes"][1]["args"]["to"]["value"]
    assert gold_to not in task["request"]
    assert actions[1].calls[0]["args"]["to"] == gold_to
    ep, v = replay(task, [calls(actions[0].calls[0], actions[1].calls[0]), actions[2]])
    assert ep.calls[1]["turn"] == 0 and ep.calls[1]["executed"] is True
    assert v["dependency_safe"] is False
    lenient_only(v, "dependency_unsafe")


@pytest.mark.parametrize("seed", SEEDS)
def test_guessed_file_id_before_search(seed):
    task = generate_task("ch_file_read", seed)
    actions, _, v0 = clean(task)
    assert v0["dependency_safe"] is True
    guessed = "F-0042"
    assert guessed not in task["world"]["files"]
    read = with_args(actions[1].calls[0], file_id=guessed)
    ep, v = replay(task, [calls(actions[0].calls[0], read), actions[2]])
    assert ep.calls[1]["outcome"] == "not_found"
    assert v["dependency_safe"] is False
    assert v["success"] is False
    assert v["reasons"] == ["gold_call_missing:n1"]
    assert v["arg_correct"] == 0.5


# ---------------------------------------------------------------- (i) duplicated read-only call
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", ["sel_weather", "sel_order_status", "ch_order_customer"])
def test_duplicate_read_only_call(seed, name):
    task = generate_task(name, seed)
    actions, _, v0 = clean(task)
    assert v0["unnecessary_calls"] == 0
    # repeat the (already successful) first call in a turn of its own
    ep, v = replay(task, [actions[0], calls(actions[0].calls[0])] + actions[1:])
    assert ep.calls[1]["outcome"] == "ok"
    assert v["unnecessary_calls"] == 1
    assert v["success"] is True and v["reasons"] == []
    assert v["turns"] == v0["turns"] + 1


# ---------------------------------------------------------------- (j) split parallel group
@pytest.mark.parametrize("seed", SEEDS)
def test_split_parallel_group(seed):
    task = generate_task("par_weather", seed)
    actions, _, v0 = clean(task)
    first = actions[0].calls
    assert len(first) >= 2 and len(actions) == 2
    assert v0["parallel_ok"] is True
    ep, v = replay(task, [calls(first[0]), Action(calls=copy.deepcopy(first[1:])), actions[1]])
    assert [c["turn"] for c in ep.calls] == [0] + [1] * (len(first) - 1)
    assert v["parallel_ok"] is False
    lenient_only(v, "parallel_split")
    assert v["unnecessary_calls"] == 0


# ---------------------------------------------------------------- extra: hallucinated tool
@pytest.mark.parametrize("seed", SEEDS)
def test_hallucinated_tool_is_diagnostic_only(seed):
    task = generate_task("sel_weather", seed)
    actions, _, v0 = clean(task)
    bogus = calls({"tool": "weather_oracle_9000", "args": {"city": "x"}})
    ep, v = replay(task, [bogus] + actions)
    assert ep.calls[0]["outcome"] == "unknown_tool" and ep.calls[0]["canonical"] is None
    assert v0["hallucinated_tools"] == 0 and v["hallucinated_tools"] == 1
    assert v["success"] is True


# ---------------------------------------------------------------- extra: no final answer
@pytest.mark.parametrize("seed", SEEDS)
def test_parse_errors_end_episode_without_final(seed):
    task = generate_task("sel_weather", seed)
    actions, _, _ = clean(task)
    ep = Episode(task)
    ep.step(format_action(actions[0]))
    ep.step("I think it's sunny")
    ep.step("{not json")
    assert ep.done and ep.end_reason == "parse_errors"
    v = validate(task, ep.record())
    assert v["success"] is False
    assert v["reasons"] == ["no_final:parse_errors", "status_mismatch", "missing_fact"]
    assert v["parse_errors"] == 2 and v["strict_schema"] is False


def test_action_dataclass_shape():
    # the helpers above rely on Action having exactly these fields
    assert [f.name for f in dataclasses.fields(Action)] == ["calls", "final", "status"]
