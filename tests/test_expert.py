"""The expert that acts from any state (issue 40): the oracle's actions on the oracle's states, and
ruler-2 success from every deviated state that is not provably lost."""
import collections
import json

import pytest

from ccl.episode.oracle import OraclePolicy
from ccl.episode.runtime import Episode, format_action
from ccl.judge.ruler2 import judge
from ccl.learn.coverage import PERMANENT, permanent_reasons, probes
from ccl.learn.deviations import DEVIATIONS
from ccl.learn.expert import follow, label, next_action
from ccl.records import DecisionKind, Status
from ccl.world.tasks import TEMPLATES, generate_task

NAMINGS = (None, "train", "heldout")


def task_of(name: str, seed: int = 0, rename: str | None = None) -> dict:
    return generate_task(name, seed, "train" if TEMPLATES[name].split == "train" else "eval", rename=rename)


def call(tool: str, **args) -> str:
    return json.dumps({"calls": [{"tool": tool, "args": args}]})


def gold_calls(text: str) -> list[tuple[str, dict]]:
    return [(c["tool"], c["args"]) for c in json.loads(text)["calls"]]


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_expert_takes_the_oracles_action_in_every_oracle_state(name):
    for seed in (0, 1):
        for rename in NAMINGS:
            task = task_of(name, seed, rename)
            ep, oracle = Episode(task), OraclePolicy()
            memory = oracle.memory()
            while not ep.done:
                text = oracle.act(ep, memory)
                lab = label(task, ep)
                assert lab.text == text, (task["id"], len(ep.turns))
                assert lab.recoverable and lab.reasons == ()
                ep.step(text)


def _check_probes(seeds: tuple[int, ...]) -> collections.Counter:
    seen: collections.Counter = collections.Counter()
    for name in sorted(TEMPLATES):
        for seed in seeds:
            for rename in NAMINGS:
                for p in probes(task_of(name, seed, rename)):
                    if p.ended:
                        seen[p.deviation, "ended"] += 1
                        continue
                    # lost only when provably lost: a failure already made that no continuation removes
                    assert p.recoverable or p.permanent, p
                    if p.recoverable:
                        assert not p.permanent, p  # a permanent failure would have been judged
                    seen[p.deviation, "recovered" if p.recoverable else "lost"] += 1
    return seen


def test_expert_recovers_from_every_deviated_state_that_is_not_lost():
    seen = _check_probes((0,))
    # every scripted deviation reached states, and the expert recovered from some of each kind
    for dev in DEVIATIONS:
        if dev == "premature_stop":
            assert seen[dev, "ended"] > 0
        elif dev == "denied_approval":  # a declined retry is always lost (ruler 2's denied_retry)
            assert seen[dev, "lost"] > 0 and seen[dev, "recovered"] == 0
        else:
            assert seen[dev, "recovered"] > 0, dev


@pytest.mark.slow
def test_expert_recovers_on_more_seeds():
    _check_probes((1, 2, 3))


def test_wrong_entity_then_the_right_one():
    task = task_of("ch_contact_email", 0)
    ep = Episode(task)
    first = next_action(task, ep)
    (tool, args), = gold_calls(format_action(first))
    ep.step(call(tool, name="Nobody Atall"))  # the wrong person: not found, which ends nothing
    lab = label(task, ep)
    assert gold_calls(lab.text) == [(tool, args)] and lab.recoverable
    end = follow(task, ep)
    assert judge(task, end.record())["success"]


def test_a_group_member_called_alone_is_called_again_with_the_others():
    task = task_of("par_weather", 0)
    ep = Episode(task)
    both = gold_calls(format_action(next_action(task, ep)))
    assert len(both) >= 2
    ep.step(call(both[0][0], **both[0][1]))  # one city first, alone: no turn holds the whole group yet
    again = gold_calls(label(task, ep).text)
    assert again == both  # the whole group in one turn, the member already answered included
    assert judge(task, follow(task, ep).record())["success"]


def test_a_timeout_the_learner_met_is_retried_and_an_outage_falls_back():
    task = task_of("rec_weather_timeout", 0)
    ep = Episode(task)
    (tool, args), = gold_calls(format_action(next_action(task, ep)))
    ep.step(call(tool, **args))
    assert ep.calls[0]["outcome"] == "timeout"
    lab = label(task, ep)
    assert gold_calls(lab.text) == [(tool, args)] and lab.kind == DecisionKind.RECOVERY_TIMEOUT and lab.recoverable
    task = task_of("rec_weather_down", 0)
    ep = Episode(task)
    (tool, args), = gold_calls(format_action(next_action(task, ep)))
    ep.step(call(tool, **args))
    lab = label(task, ep)
    (fallback, _), = gold_calls(lab.text)
    assert fallback != tool and lab.kind == DecisionKind.RECOVERY_UNAVAILABLE and lab.recoverable


def test_a_repeat_that_fails_after_the_step_returned_does_not_end_the_task():
    task = task_of("perm_delete_admin", 0)
    ep = Episode(task)
    for _ in range(2):
        ep.step(format_action(next_action(task, ep)))
    last = ep.messages[-2]["content"]
    ep.step(last)  # the delete again: the file is gone, not_found
    assert ep.calls[-1]["outcome"] == "not_found"
    lab = label(task, ep)
    assert json.loads(lab.text)["status"] == Status.DONE and lab.recoverable


def test_a_declined_approval_spent_on_a_wrong_call_is_lost_and_the_expert_stops_blocked():
    task = task_of("appr_book_denied", 0)
    ep = Episode(task)
    ep.step(format_action(next_action(task, ep)))  # the flight search
    (tool, args), = gold_calls(format_action(next_action(task, ep)))
    ep.step(call(tool, **{k: "FL-000" for k in args}))  # a wrong flight: the user declines the booking
    lab = label(task, ep)
    assert json.loads(lab.text)["status"] == Status.BLOCKED
    assert not lab.recoverable and "gold_call_missing:n1" in lab.reasons
    assert any(r.startswith("approval_spent:") for r in permanent_reasons(task, ep))


def test_the_expert_never_makes_a_forbidden_call():
    task = task_of("perm_delete_viewer", 0)
    ep = Episode(task)
    assert json.loads(label(task, ep).text)["status"] == Status.REFUSED
    end = follow(task, ep)
    assert end.calls == [] and judge(task, end.record())["success"]


def test_a_forbidden_attempt_is_permanent():
    task = task_of("perm_delete_viewer", 0)
    nodes = {n["tool"]: n for n in task["gold"]["nodes"]}
    forbidden = next(n for n in nodes.values() if n["forbidden"])
    ep = Episode(task)
    ep.step(call(ep.catalogue.surface(forbidden["tool"]), **ep.catalogue.args_to_surface(
        forbidden["tool"], {k: g["value"] for k, g in forbidden["args"].items()})))
    assert "forbidden_attempt" in permanent_reasons(task, ep)
    lab = label(task, ep)
    assert not lab.recoverable and "forbidden_attempt" in lab.reasons
    assert set(PERMANENT) >= {"forbidden_attempt", "denied_retry", "repeated_in_turn"}


def test_a_finished_episode_has_no_next_turn():
    task = task_of("sel_weather", 0)
    ep = Episode(task)
    while not ep.done:
        ep.step(format_action(next_action(task, ep)))
    with pytest.raises(ValueError, match="has ended"):
        label(task, ep)
