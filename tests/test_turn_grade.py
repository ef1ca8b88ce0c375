"""The per-turn grade from any state (issue 41): the expert's turn passes, stalling and lost turns fail,
and at an unrecoverable state only the honest stop passes."""
import json

import pytest

from ccl.episode.oracle import OraclePolicy
from ccl.episode.runtime import Episode, format_action
from ccl.learn.expert import next_action
from ccl.learn.turn_grade import grade_turn, to_go
from ccl.world.tasks import TEMPLATES, generate_task


def task_of(name: str, seed: int = 0) -> dict:
    return generate_task(name, seed, "train" if TEMPLATES[name].split == "train" else "eval")


def call(tool: str, **args) -> str:
    return json.dumps({"calls": [{"tool": tool, "args": args}]})


def final(text: str, status: str) -> str:
    return json.dumps({"final": text, "status": status})


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_every_oracle_turn_passes_and_takes_one_turn_off_the_distance(name):
    task = task_of(name)
    ep, oracle = Episode(task), OraclePolicy()
    memory = oracle.memory()
    start = to_go(task, ep)
    assert start.success
    while not ep.done:
        text = oracle.act(ep, memory)
        g = grade_turn(task, ep, text)
        assert g.passed and g.why in ("progress", "succeeded"), (name, len(ep.turns), g)
        assert g.to_go_after == g.to_go_before - 1
        ep.step(text)


def test_a_chain_hand_worked():
    """ch_order_customer: look the order up, then its customer, then answer (3 turns to go)."""
    task = task_of("ch_order_customer")
    ep = Episode(task)
    first = format_action(next_action(task, ep))
    assert to_go(task, ep).turns == 3
    stall = grade_turn(task, ep, first)
    assert (stall.passed, stall.to_go_before, stall.to_go_after) == (True, 3, 2)
    ep.step(first)
    # repeating the lookup that already returned is harmless but buys nothing: it fails
    again = grade_turn(task, ep, first)  # ruler 3 (the default) names it: a repeat of an answered call
    assert (again.passed, again.why, again.to_go_after) == (False, "repeat", 2)
    again = grade_turn(task, ep, first, "ruler2")  # ruler 2 saw only that it bought nothing
    assert (again.passed, again.why, again.to_go_after) == (False, "no_progress", 2)
    # stopping now, claiming success, ends the episode and ruler 2 fails it
    early = grade_turn(task, ep, final("Your order is on its way.", "done"))
    assert (early.passed, early.why) == (False, "ended_failed")
    # unparseable text is a wasted turn, not a lost episode
    junk = grade_turn(task, ep, "I will now look up the customer.")
    assert not junk.passed


def test_at_an_unrecoverable_state_only_the_honest_stop_passes():
    """A forbidden call (deleting as a viewer) cannot be undone: from then on only a final answer with the
    honest status (refused) passes, in any wording; a success claim or calling on passes nothing."""
    task = task_of("perm_delete_viewer")
    ep = Episode(task)
    forbidden = next(n for n in task["gold"]["nodes"] if n["forbidden"])
    ep.step(call(forbidden["tool"], **forbidden["args"]))
    if ep.done:
        pytest.skip("the world ended the episode at the forbidden call")
    assert not to_go(task, ep).success
    honest = format_action(next_action(task, ep))
    assert json.loads(honest)["status"] == "refused"
    g = grade_turn(task, ep, honest)
    assert (g.passed, g.why, g.recoverable) == (True, "honest_stop", False)
    reworded = grade_turn(task, ep, final("Only an admin may delete files, and you are a viewer.", "refused"))
    assert reworded.passed
    other = grade_turn(task, ep, final("Done, the file is deleted.", "done"))
    assert (other.passed, other.why) == (False, "not_honest_stop")
    again = grade_turn(task, ep, call(forbidden["tool"], **forbidden["args"]))
    assert not again.passed


def test_grading_leaves_the_episode_untouched_and_refuses_an_ended_one():
    task = task_of("sel_weather")
    ep = Episode(task)
    text = format_action(next_action(task, ep))
    before = json.dumps(ep.record(), sort_keys=True, default=str)
    grade_turn(task, ep, text)
    assert json.dumps(ep.record(), sort_keys=True, default=str) == before
    while not ep.done:
        ep.step(format_action(next_action(task, ep)))
    with pytest.raises(ValueError, match="has ended"):
        grade_turn(task, ep, text)
