"""ccl.judge.assignment: each call goes to at most one gold node, and each node learns what its calls
did (returned, answered, repeated in a turn, blind beside a timeout, a fallback before the outage).
Hand-written assistant turns stepped through the real runtime, on the weather timeout and outage
templates (seed 1: Toronto times out on its first call; Oslo's primary is down, the backup is n1)."""
from __future__ import annotations

import copy
import json

from ccl.episode.runtime import Episode
from ccl.judge.assignment import NodeState, assign, call_matches
from ccl.world.tasks import generate_task

TIMEOUT = generate_task("rec_weather_timeout", 1)  # n0: get_weather(Toronto), first call times out
DOWN = generate_task("rec_weather_down", 1)  # n0: get_weather(Oslo), down; n1: get_weather_backup(Oslo)
PAR = generate_task("par_weather", 1)  # n0, n1, n2: get_weather for Berlin, Sydney, Paris in one group


def call(tool: str, **args: object) -> dict:
    return {"tool": tool, "args": args}


def turn(*calls: dict) -> str:
    return json.dumps({"calls": list(calls)})


def final(text: str, status: str = "done") -> str:
    return json.dumps({"final": text, "status": status})


def play(task: dict, *turns: str) -> dict:
    ep = Episode(task)
    for text in turns:
        ep.step(text)
    return ep.record()


def outcomes(record: dict) -> list[tuple[int, str]]:
    return [(c["turn"], c["outcome"]) for c in record["calls"]]


TORONTO = call("get_weather", city="Toronto")
OSLO, OSLO_BACKUP = call("get_weather", city="Oslo"), call("get_weather_backup", city="Oslo")


def test_a_retry_after_the_observed_timeout_answers_the_node():
    record = play(TIMEOUT, turn(TORONTO), turn(TORONTO), final("It is 11°C and stormy in Toronto."))
    assert outcomes(record) == [(0, "timeout"), (1, "ok")]
    a = assign(TIMEOUT, record)
    assert a.node_of == ("n0", "n0") and a.unoffered == ()
    assert a.nodes == (NodeState(id="n0", attempts=(0, 1), returned=1, answered=True, repeats=(), blind=(),
                                 unprompted=()),)


def test_the_same_call_twice_in_one_turn_is_a_repeat_and_blind():
    record = play(TIMEOUT, turn(TORONTO, TORONTO), final("It is 11°C and stormy in Toronto."))
    assert outcomes(record) == [(0, "timeout"), (0, "ok")]
    a = assign(TIMEOUT, record)
    assert a.node_of == ("n0", "n0")
    assert a.node("n0") == NodeState(id="n0", attempts=(0, 1), returned=0, answered=False, repeats=(1,),
                                     blind=(1,), unprompted=())


def test_a_decoy_that_takes_the_timeout_belongs_to_no_node_and_leaves_the_call_blind():
    decoy = call("get_weather", city="Nowhere")
    record = play(TIMEOUT, turn(decoy, TORONTO), final("It is 11°C and stormy in Toronto."))
    assert outcomes(record) == [(0, "timeout"), (0, "ok")]
    a = assign(TIMEOUT, record)
    assert a.node_of == (None, "n0")
    assert a.node("n0") == NodeState(id="n0", attempts=(1,), returned=0, answered=False, repeats=(), blind=(1,),
                                     unprompted=())
    # a proper retry afterwards answers the node; the blind call stays on record
    record = play(TIMEOUT, turn(decoy, TORONTO), turn(TORONTO), final("It is 11°C and stormy in Toronto."))
    assert assign(TIMEOUT, record).node("n0") == NodeState(id="n0", attempts=(1, 2), returned=0, answered=True,
                                                           repeats=(), blind=(1,), unprompted=())


def test_the_backup_first_is_unprompted():
    record = play(DOWN, turn(OSLO_BACKUP), final("It is 33°C in Oslo."))
    assert outcomes(record) == [(0, "ok")]
    a = assign(DOWN, record)
    assert a.node_of == ("n1",)
    assert a.node("n0") == NodeState(id="n0", attempts=(), returned=None, answered=False, repeats=(), blind=(),
                                     unprompted=())
    assert a.node("n1") == NodeState(id="n1", attempts=(0,), returned=0, answered=False, repeats=(), blind=(),
                                     unprompted=(0,))


def test_the_backup_after_the_observed_outage_answers_the_fallback():
    record = play(DOWN, turn(OSLO), turn(OSLO_BACKUP), final("It is 33°C in Oslo."))
    assert outcomes(record) == [(0, "service_unavailable"), (1, "ok")]
    a = assign(DOWN, record)
    assert a.node_of == ("n0", "n1")
    assert a.node("n0").attempts == (0,) and a.node("n0").returned is None and not a.node("n0").answered
    assert a.node("n1") == NodeState(id="n1", attempts=(1,), returned=1, answered=True, repeats=(), blind=(),
                                     unprompted=())
    # both in one turn: the outage was not yet seen when the backup went out
    both = assign(DOWN, play(DOWN, turn(OSLO, OSLO_BACKUP), final("It is 33°C in Oslo.")))
    assert both.node("n1").unprompted == (1,) and not both.node("n1").answered
    # the outage is the tool's: seen on a call with other arguments, it still prompts the fallback
    other = assign(DOWN, play(DOWN, turn(call("get_weather", city="Bergen")), turn(OSLO_BACKUP), final("33°C.")))
    assert other.node_of == (None, "n1") and other.node("n1").answered and other.node("n1").unprompted == ()


def test_a_call_goes_to_the_first_matching_node_not_yet_answered():
    loose = copy.deepcopy(PAR)
    for n in loose["gold"]["nodes"]:
        n["args"] = {"city": {"rule": "any", "value": None}}  # every get_weather call matches every node
    berlin, sydney = call("get_weather", city="Berlin"), call("get_weather", city="Sydney")
    record = play(loose, turn(berlin, sydney, berlin), final("Done."))
    a = assign(loose, record)
    assert a.node_of == ("n0", "n1", "n2")  # n0 and n1 answered, so the third call fills n2
    record = play(loose, turn(berlin, sydney, berlin, berlin), final("Done."))
    a = assign(loose, record)
    assert a.node_of == ("n0", "n1", "n2", "n0")  # all answered: the first matching node, a repeat there
    assert a.node("n0").repeats == (3,)


def test_calls_the_runtime_refused_unchecked_are_no_nodes_and_unknown_consequential_names_are_listed():
    record = play(TIMEOUT, json.dumps({"calls": [{"tool": "get_weather", "args": "Toronto"},
                                                 call("Send-Email", to="a@b.c"), call("send_mail"),
                                                 call("get_weather", city="Toronto", units="F"),
                                                 call("Dispatch Mail")]}),
                  final("Nothing."))
    assert [c["outcome"] for c in record["calls"]] == ["invalid_args", "unknown_tool", "unknown_tool", "invalid_args",
                                                       "unknown_tool"]
    a = assign(TIMEOUT, record)
    assert a.node_of == (None, None, None, None, None)
    # send_mail says it sends (actions.ACTING_PARTS); dispatch_mail is send_email's train alias
    assert a.unoffered == ((1, "send_email"), (2, "send_email"), (4, "send_email"))
    assert a.node("n0").attempts == () and a.node("nX") is None


def test_malformed_calls_match_nothing_and_raise_nothing():
    record = play(TIMEOUT, turn(TORONTO), turn(TORONTO), final("It is 11°C and stormy in Toronto."))
    node = TIMEOUT["gold"]["nodes"][0]
    bad = [{**record["calls"][1], "cargs": None}, {**record["calls"][1], "cargs": {"city": {"x": [1]}}},
           {**record["calls"][1], "canonical": None}, {**record["calls"][1], "cargs": {"city": float("nan")}}]
    assert [call_matches(node, c) for c in bad] == [False, False, False, False]
    a = assign(TIMEOUT, {**record, "calls": bad})
    assert a.node_of == (None, None, None, None) and not a.node("n0").answered
