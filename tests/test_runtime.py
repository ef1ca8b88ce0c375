"""The episode loop: lenient parsing, strict-schema flag, limits, and bad input that
must become observations rather than crashes."""
import contextlib
import json
import time

from ccl.episode.prompt import NEXT_STEP
from ccl.episode.runtime import Episode, Limits, format_action, parse_action
from ccl.judge.validate import validate
from ccl.world.tasks import TEMPLATES, generate_task
from ccl.world.toolkit import REGISTRY


def results(ep):
    """Decoded observations of the last turn."""
    head, *lines, hint = ep.messages[-1]["content"].splitlines()
    assert head == "Results:" and hint == NEXT_STEP  # every observation ends by asking for the next step
    return [json.loads(line) for line in lines]


def test_parse_lenient_forms_and_strict_flag():
    strict = '{"calls": [{"tool": "get_weather", "args": {"city": "Paris"}}]}'
    a, err, s = parse_action(strict)
    assert err is None and s and a.calls == [{"tool": "get_weather", "args": {"city": "Paris"}}]
    for text in ["```json\n" + strict + "\n```", "<think>hmm {not json}</think>" + strict,
                 'Sure! {"tool": "get_weather", "args": {"city": "Paris"}} done',
                 '[{"tool": "get_weather", "args": {"city": "Paris"}}]',
                 '{"calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}']:
        a, err, s = parse_action(text)
        assert a.calls == [{"tool": "get_weather", "args": {"city": "Paris"}}] and not s, text
    a, err, s = parse_action('{"final": "Hi", "status": "done"}')
    assert (a.final, a.status, s) == ("Hi", "done", True)
    assert parse_action('{"final": "Hi", "status": "ok"}')[1].startswith("status must be one of")
    assert parse_action("I think it is sunny")[1] == "no JSON object found"
    assert parse_action('{"calls": []}')[1].startswith("expected")
    assert "deeper than 32" in parse_action("[" * 5000)[1]
    assert "longer than" in parse_action("x" * 20000)[1]
    assert parse_action(None)[1] == "the assistant message must be text"


def test_format_action_is_canonical():
    a, _, _ = parse_action('{"calls":[{"args":{"b":1,"a":"é"},"tool":"t"}]}')
    assert format_action(a) == '{"calls": [{"tool": "t", "args": {"a": "é", "b": 1}}]}'
    assert parse_action(format_action(a))[2] is True


def test_bad_calls_become_observations():
    task = generate_task("sel_weather", 1)
    ep = Episode(task)
    city = task["gold"]["nodes"][0]["args"]["city"]["value"]
    ep.step(json.dumps({"calls": [
        {"tool": "teleport", "args": {}},
        {"tool": "get_weather", "args": {"city": 5}},
        {"tool": "get_weather", "args": "Paris"},
        {"tool": "get_weather", "args": {"town": "Paris"}},
        {"tool": "get_weather", "args": {"city": "Atlantis"}},
        {"tool": "get_weather", "args": {"city": city}},
    ]}))
    kinds = [r.get("error", {}).get("kind", "ok") for r in results(ep)]
    assert kinds == ["unknown_tool", "invalid_args", "invalid_args", "invalid_args", "not_found", "ok"]
    assert "unknown argument(s) ['town']" in results(ep)[3]["error"]["message"]
    assert not ep.done


@contextlib.contextmanager
def replaced_tool(name, fn):
    """Swap a registered tool's function (Tool is frozen, so set the field directly)."""
    tool = REGISTRY[name]
    original = tool.fn
    object.__setattr__(tool, "fn", fn)
    try:
        yield original
    finally:
        object.__setattr__(tool, "fn", original)


def test_tool_raising_is_reported():
    ep = Episode(generate_task("sel_calc", 1))

    def boom(w, expression):
        raise KeyError("internal")

    with replaced_tool("calculate", boom):
        ep.step('{"calls": [{"tool": "calculate", "args": {"expression": "1+1"}}]}')
    err = results(ep)[0]["error"]
    assert err["kind"] == "tool_error" and "KeyError" in err["message"] and not ep.done


def test_slow_tool_is_a_timeout_and_its_effect_is_undone():
    ep = Episode(generate_task("args_ticket", 2), limits=Limits(tool_timeout_s=0.01))
    original = REGISTRY["create_ticket"].fn

    def slow(w, title, priority):
        out = original(w, title=title, priority=priority)
        time.sleep(0.05)
        return out

    with replaced_tool("create_ticket", slow):
        ep.step('{"calls": [{"tool": "create_ticket", "args": {"title": "x", "priority": "low"}}]}')
    assert results(ep)[0]["error"]["kind"] == "timeout"
    assert ep.world.state["tickets"] == [] and ep.effects == []


def test_limits_parse_errors_turns_calls():
    task = generate_task("sel_weather", 1)
    ep = Episode(task)
    ep.step("nonsense")
    assert not ep.done
    ep.step("more nonsense")
    assert ep.end_reason == "parse_errors" and ep.parse_errors == 2

    ep = Episode(task)
    call = '{"calls": [{"tool": "calculate", "args": {"expression": "1"}}]}'
    for _ in range(8):
        ep.step(call)
    assert ep.end_reason == "turn_limit" and len(ep.turns) == 8
    v = validate(task, ep.record())
    assert not v["success"] and "no_final:turn_limit" in v["reasons"]

    ep = Episode(task)
    seven = json.dumps({"calls": [{"tool": "get_weather", "args": {"city": "Paris"}}] * 7})
    ep.step(seven)
    kinds = [r.get("error", {}).get("kind") for r in results(ep)]
    assert kinds[6] == "too_many_calls_in_turn" and kinds.count("too_many_calls_in_turn") == 1
    ep.step(json.dumps({"calls": [{"tool": "get_weather", "args": {"city": "Paris"}}] * 6}))
    assert not ep.done
    ep.step(json.dumps({"calls": [{"tool": "get_weather", "args": {"city": "Paris"}}] * 5}))
    kinds = [r.get("error", {}).get("kind") for r in results(ep)]
    assert kinds.count("call_budget_exhausted") == 2 and ep.end_reason == "call_limit"


def test_step_after_end_is_an_error():
    ep = Episode(generate_task("term_smalltalk", 1))
    ep.step('{"final": "bye", "status": "done"}')
    try:
        ep.step('{"final": "again", "status": "done"}')
    except RuntimeError as e:
        assert "already finished" in str(e)
    else:
        raise AssertionError("expected RuntimeError")


def test_structured_final_is_read_as_canonical_json_but_not_strict():
    action, error, strict = parse_action('{"final": {"rate": 0.0094, "base": "INR"}, "status": "done"}')
    assert error is None and strict is False
    assert action.final == '{"base":"INR","rate":0.0094}' and action.status == "done"
    action, error, _ = parse_action('{"final": null, "status": "done"}')
    assert action is None and error == "final must be a string"


def test_head_end_finds_the_longest_shared_head():
    from ccl.episode.prompt import system_prompt
    from ccl.episode.prompt_head import FEWSHOT, STATIC_HEAD, head_end
    task = generate_task(sorted(TEMPLATES)[0], 0, "eval")
    plain, fewshot = system_prompt(task), system_prompt(task, fewshot=True)
    wrapped = "<|im_start|>system\n" + fewshot  # as a chat template puts text before it
    assert head_end(plain) == len(STATIC_HEAD)
    assert head_end(fewshot) == len(STATIC_HEAD) + len(FEWSHOT)
    assert head_end(wrapped) == len("<|im_start|>system\n") + len(STATIC_HEAD) + len(FEWSHOT)
    assert fewshot[head_end(fewshot):] == plain[head_end(plain):]  # the same task part after either head
    assert head_end("no head here") is None
