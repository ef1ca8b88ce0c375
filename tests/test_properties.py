"""Property tests (hypothesis) for the parser and the episode loop.

* ``parse_action`` never raises and always returns a well-formed 3-tuple.
* ``Episode.step`` never raises, whatever the assistant writes.
* Under random action sequences the runtime never executes a call the task's role
  forbids, never executes an approval-gated call the scripted approver would deny,
  and records as side effects exactly the executed side-effecting calls.

The runs are derandomised (fixed examples, no example database) so the suite is
deterministic. The last section holds regression tests for four bugs these
properties found (all fixed in ccl/).
"""
from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ccl.episode.runtime import STATUSES, Action, Episode, Limits, format_action, parse_action, scripted_approver
from ccl.judge.validate import validate
from ccl.world.tasks import generate_task
from ccl.world.tools import TOOLS

LIMITS = Limits()
END_REASONS = {None, "final", "parse_errors", "turn_limit", "call_limit"}


def cfg(n: int) -> settings:
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


# ---------------------------------------------------------------- strategies: text
KEYS = ["calls", "tool", "name", "args", "arguments", "parameters", "final", "status"]
# integers too large for a float (309+ digits) once crashed the schema check
huge_ints = st.integers(10**308, 10**400) | st.integers(-(10**400), -(10**308))
bad_expressions = st.sampled_from(["(-8) ** 0.5", "1e308 * 10", "9" * 400 + " * 9", "10 ** 12 ** 2", "1/0",
                                   "2 ** 0.5 ** -1", "(" * 40 + "1" + ")" * 40, "nan", "inf - inf"])
scalars = (st.none() | st.booleans() | st.integers(-10**6, 10**6) | huge_ints
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12) | bad_expressions
           | st.sampled_from(list(STATUSES) + sorted(TOOLS)))
json_values = st.recursive(
    scalars,
    lambda ch: st.lists(ch, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), ch,
                                                          max_size=4),
    max_leaves=20)
arg_values = json_values | huge_ints | bad_expressions  # also as a whole argument value


@st.composite
def jsonish(draw) -> str:
    """JSON text, sometimes truncated, wrapped in prose, fences or think blocks."""
    text = json.dumps(draw(json_values), ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] if draw(st.booleans()) else text[cut:]
    wrap = draw(st.sampled_from(["{}", "```json\n{}\n```", "<think>{}</think>{}", "Sure! {} Done.",
                                 "<think>unfinished {}", "``` {}", "{}{}"]))
    return wrap.replace("{}", text, 1).replace("{}", draw(st.text(max_size=30)))


brackets = st.builds(lambda unit, n: unit * n,
                     st.sampled_from(["[", "{", "]", "}", "[{", '{"a":', '{"calls":[', '[{"tool":"x","args":',
                                      '"', "\\", "<think>", "```", "]["]),
                     st.integers(1, 20_000))
huge = st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=20), st.integers(1_000, 3_000))
near_limit = st.builds(lambda pad: '{"final": "' + "x" * pad + '", "status": "done"}',
                       st.integers(LIMITS.max_action_chars - 40, LIMITS.max_action_chars + 40))
from_bytes = st.binary(max_size=4096).map(lambda b: b.decode("utf-8", errors="replace"))
any_text = st.one_of(st.text(), jsonish(), brackets, huge, near_limit, from_bytes)


def check_parse_result(r, text) -> None:
    assert isinstance(r, tuple) and len(r) == 3
    action, error, strict = r
    assert isinstance(strict, bool)
    assert (action is None) != (error is None), r
    if action is None:
        assert isinstance(error, str) and error
        assert strict is False
        return
    assert isinstance(action, Action)
    assert (action.calls is None) != (action.final is None)
    if action.final is not None:
        assert isinstance(action.final, str) and action.status in STATUSES
    else:
        assert isinstance(action.calls, list) and action.calls
        for c in action.calls:
            assert set(c) == {"tool", "args"} and isinstance(c["tool"], str)
    assert isinstance(text, str) and len(text) <= LIMITS.max_action_chars


def test_parse_action_never_raises():
    seen = Counter()

    @cfg(300)
    @given(any_text)
    @example("[" * 5000)
    @example("{" * 40 + "}" * 40)
    @example("x" * 25_000)
    @example('{"final": "ok", "status": "done"}')
    @example('<think>{"calls": []}</think>{"final": "ok", "status": "done"}')
    def check(text):
        r = parse_action(text)
        check_parse_result(r, text)
        seen["too_long" if len(text) > LIMITS.max_action_chars else "action" if r[0] else "error"] += 1
        seen["strict"] += r[2]
        seen["too_deep"] += bool(r[1] and "deeper" in r[1])

    check()
    # the strategies really reach every branch (the counts are deterministic: derandomised)
    assert min(seen[k] for k in ("too_long", "action", "error", "strict", "too_deep")) > 0, seen


@cfg(30)
@given(st.none() | st.integers() | st.binary() | st.lists(st.integers()) | st.dictionaries(st.text(), st.text()))
def test_parse_action_rejects_non_text(value):
    assert parse_action(value) == (None, "the assistant message must be text", False)


# canonical actions round-trip through format_action / parse_action (strict). Strings avoid
# brackets (the depth limit counts them even inside strings, by design) and "<" (a literal
# "<think>" inside a string is covered by test_regression_think_tag_inside_a_json_string_parses).
safe_text = lambda n: st.text(st.characters(exclude_characters="[]{}<"), max_size=n)  # noqa: E731
small_json = st.recursive(st.none() | st.booleans() | st.integers(-999, 999) | safe_text(8),
                          lambda ch: st.lists(ch, max_size=3) | st.dictionaries(safe_text(5), ch, max_size=3),
                          max_leaves=8)
gen_actions = (st.builds(lambda f, s: Action(final=f, status=s), safe_text(40), st.sampled_from(STATUSES))
               | st.builds(lambda cs: Action(calls=cs),
                           st.lists(st.fixed_dictionaries({"tool": safe_text(15),
                                                           "args": st.dictionaries(safe_text(8), small_json,
                                                                                   max_size=4)}),
                                    min_size=1, max_size=4)))


@cfg(150)
@given(gen_actions)
def test_format_then_parse_round_trips(action):
    text = format_action(action)
    parsed, error, strict = parse_action(text)
    assert error is None and strict is True
    assert parsed == action


# ---------------------------------------------------------------- tasks used by the episode properties
TEMPLATE_POOL = {"perm_delete_viewer": "train", "perm_delete_admin": "train", "perm_refund_viewer": "eval",
                 "perm_refund_agent": "eval", "appr_email_denied": "train", "appr_book_denied": "eval",
                 "ch_contact_email": "train", "ch_book_cheapest": "eval", "rec_weather_down": "train",
                 "par_contacts_event": "eval"}
TASKS = [generate_task(name, seed, pool=pool, rename=rename, distractors=distractors)
         for name, pool in TEMPLATE_POOL.items() for seed in range(3)
         for rename, distractors in ((None, None), ("train", 6), ("heldout", None))
         if not (rename == "train" and pool == "eval")]
# tasks whose catalogue offers a role-gated or approval-gated tool the task cannot use
assert any(t["role"] == "viewer" for t in TASKS)
assert any(v == "deny" for t in TASKS for v in t["approvals"].values())
tasks = st.sampled_from(TASKS)


def _collect(obj, strings: set, numbers: set) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            strings.add(k)
            _collect(v, strings, numbers)
    elif isinstance(obj, list):
        for v in obj:
            _collect(v, strings, numbers)
    elif isinstance(obj, str):
        strings.add(obj)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        numbers.add(obj)


def world_values(task: dict) -> tuple[list[str], list[float]]:
    strings, numbers = set(), set()
    _collect(task["world"], strings, numbers)
    _collect([n["args"] for n in task["gold"]["nodes"]], strings, numbers)
    strings |= {"low", "normal", "high", "urgent", "2026-03-01", "09:30", "someone@example.com", "ORD-00000",
                "F-0001", "", " "}
    return sorted(strings), sorted(numbers, key=repr)


JUNK_TOOLS = ["", "rm_rf", "delete", "send_email ", "SEND_EMAIL", "tool", "__init__", "get_weather()"]


def gold_values(task: dict, tool: str, param: str) -> list:
    return [n["args"][param].get("say", n["args"][param]["value"]) for n in task["gold"]["nodes"]
            if n["tool"] == tool and param in n["args"]]


@st.composite
def a_call(draw, task: dict) -> dict:
    """One call: mostly a catalogue tool with well-formed arguments built from the task's
    own values (so gated tools really get reached), sometimes canonical or junk names."""
    aliases = task.get("aliases") or {"tools": {}, "params": {}}
    surface = {aliases["tools"].get(t, t): t for t in task["catalogue"]}
    pick = draw(st.integers(0, 9))
    if pick <= 6:
        name = draw(st.sampled_from(sorted(surface)))
    elif pick <= 8:
        name = draw(st.sampled_from(sorted(TOOLS)))
    else:
        name = draw(st.sampled_from(JUNK_TOOLS))
    canonical = surface.get(name, name if name in TOOLS else None)
    strings, numbers = world_values(task)
    value = (st.sampled_from(strings) | st.sampled_from(numbers or [0]) | st.integers(-5, 500)
             | st.floats(allow_nan=True, allow_infinity=True) | st.none() | st.booleans() | huge_ints
             | bad_expressions
             | st.lists(st.sampled_from(strings), max_size=3) | st.text(max_size=10))
    if canonical is not None and draw(st.integers(0, 4)) > 0:  # mostly well-formed argument names
        args = {}
        for p in TOOLS[canonical].params:
            if not (p.required or draw(st.booleans())):
                continue
            key = aliases["params"].get(canonical, {}).get(p.name, p.name) if draw(st.integers(0, 5)) else p.name
            gold = gold_values(task, canonical, p.name)
            if p.enum:
                typed = st.sampled_from(list(p.enum))
            elif p.type == "string":
                typed = st.sampled_from(strings)
            elif p.type in ("number", "integer"):
                typed = st.sampled_from(numbers or [1]) | st.integers(-5, 500)
            else:
                typed = st.lists(st.sampled_from(strings), max_size=3)
            choice = draw(st.integers(0, 9))
            if gold and choice <= 5:
                args[key] = draw(st.sampled_from(gold))
            elif choice <= 8:
                args[key] = draw(typed)
            else:
                args[key] = draw(value)
    else:
        args = draw(st.dictionaries(st.sampled_from(["city", "file_id", "order_id", "to", "name", "x"])
                                    | st.text(max_size=6), value, max_size=3)
                    | st.sampled_from([None, [], "args", 3]))
    key = draw(st.sampled_from([("tool", "args")] * 4 + [("name", "arguments"), ("name", "parameters")]))
    return {key[0]: name, key[1]: args}


@st.composite
def a_turn(draw, task: dict) -> str:
    kind = draw(st.integers(0, 9))
    if kind <= 6:
        cs = draw(st.lists(a_call(task), min_size=1, max_size=draw(st.sampled_from([2, 3, 8]))))
        shape = draw(st.integers(0, 3))
        if shape == 0 and len(cs) == 1:
            return json.dumps(cs[0])
        if shape == 1:
            return json.dumps(cs)
        if shape == 2:
            return "Let me do that.\n```json\n" + json.dumps({"calls": cs}) + "\n```"
        return json.dumps({"calls": cs})
    if kind <= 8:
        return json.dumps({"final": draw(st.text(max_size=30)),
                           "status": draw(st.sampled_from(list(STATUSES) + ["ok", None]))})
    return draw(st.text(max_size=40))


@st.composite
def scenario(draw) -> tuple[dict, list[str]]:
    task = draw(tasks)
    return task, draw(st.lists(a_turn(task), min_size=1, max_size=10))


def approve_all(task: dict, tool: str, args: dict) -> bool:
    return True


def run(task: dict, texts: list[str], approver=scripted_approver) -> Episode:
    ep = Episode(task, approver)
    for text in texts:
        if ep.done:
            break
        n_msgs = len(ep.messages)
        ep.step(text)
        assert len(ep.messages) in (n_msgs + 1, n_msgs + 2)
    return ep


def check_episode_invariants(task: dict, ep: Episode) -> None:
    assert ep.end_reason in END_REASONS
    assert len(ep.turns) <= LIMITS.max_turns
    assert ep.parse_errors <= LIMITS.max_parse_errors
    assert ep.done == (ep.end_reason is not None)
    if ep.end_reason == "final":
        assert isinstance(ep.final, str) and ep.status in STATUSES
    for rec in ep.calls:
        if rec["executed"]:
            assert rec["outcome"] == "ok" and rec["canonical"] in TOOLS
    executed_per_turn = [sum(ep.calls[i]["executed"] for i in t["calls"]) for t in ep.turns]
    assert all(n <= LIMITS.max_calls_per_turn for n in executed_per_turn)
    assert sum(executed_per_turn) <= LIMITS.max_calls_total
    record = ep.record()
    json.dumps(record)  # plain JSON
    v = validate(task, record)
    check_verdict(v)


def check_verdict(v: dict) -> None:
    assert isinstance(v["success"], bool) and isinstance(v["reasons"], list)
    assert v["success_writeup"] == (v["reasons"] == [])
    assert v["success"] == (v["reasons"] == [] and v["strict_reasons"] == [])
    assert v["success"] <= v["success_writeup"]  # the strict definition only removes successes


# ---------------------------------------------------------------- Episode.step never raises
def test_step_never_raises_on_arbitrary_text():
    seen = Counter()

    @cfg(150)
    @given(tasks, st.lists(any_text.filter(lambda s: len(s) < 40_000), min_size=1, max_size=10))
    def check(task, texts):
        ep = run(task, texts)
        check_episode_invariants(task, ep)
        seen[ep.end_reason] += 1

    check()
    assert seen["parse_errors"] > 0 and seen["final"] > 0, seen


def test_step_never_raises_on_random_json():
    seen = Counter()

    call_shaped = st.builds(lambda cs: {"calls": cs}, st.lists(
        st.fixed_dictionaries({"tool": st.sampled_from(sorted(TOOLS)), "args": json_values}), min_size=1, max_size=3))

    @cfg(150)
    @given(tasks, st.lists((json_values | call_shaped).map(json.dumps), min_size=1, max_size=10))
    def check(task, texts):
        ep = run(task, texts)
        check_episode_invariants(task, ep)
        seen[ep.end_reason] += 1
        seen["calls"] += len(ep.calls)

    check()
    assert seen["parse_errors"] > 0 and seen["calls"] > 0, seen


def test_step_never_raises_on_arbitrary_argument_values():
    """Every offered tool called with its own parameter names and arbitrary JSON values
    (huge integers, NaN, infinities, nesting, expressions that do not evaluate)."""
    seen = Counter()

    @cfg(300)
    @given(tasks, st.data())
    def check(task, data):
        ep = Episode(task)
        tool = data.draw(st.sampled_from(task["catalogue"]))
        params = [p.name for p in TOOLS[tool].params]
        args = {ep.catalogue.param_alias[tool][p]: data.draw(arg_values) for p in params}
        ep.step(json.dumps({"calls": [{"tool": ep.catalogue.surface(tool), "args": args}]}))
        ep.step(json.dumps({"final": data.draw(st.text(max_size=40)), "status": "done"}))
        check_episode_invariants(task, ep)
        seen[ep.calls[0]["outcome"]] += 1

    check()
    assert seen["invalid_args"] > 0 and len(seen) > 2, seen


def test_step_after_done_is_an_error():
    ep = Episode(TASKS[0])
    ep.step('{"final": "bye", "status": "done"}')
    with pytest.raises(RuntimeError):
        ep.step('{"final": "again", "status": "done"}')


# ---------------------------------------------------------------- safety under random action sequences
SAFETY_SEEN: Counter = Counter()


def check_safety(sc) -> None:
    task, texts = sc
    ep = run(task, texts)
    check_episode_invariants(task, ep)
    for rec in ep.calls:
        if not rec["executed"]:
            assert "result" not in rec
            continue
        tool = rec["canonical"]
        spec = TOOLS[tool]
        assert tool in task["catalogue"]
        # never a call the role forbids
        assert not spec.roles or task["role"] in spec.roles, rec
        # never an approval-gated call the scripted approver denies
        if spec.approval:
            assert scripted_approver(task, tool, rec["cargs"]) is True
            assert task["approvals"].get(tool) == "approve", rec
    # side effects are exactly the executed side-effecting calls, in order
    assert ep.effects == [{"tool": c["canonical"], "args": c["cargs"]} for c in ep.calls
                          if c["executed"] and TOOLS[c["canonical"]].side_effect]
    # ... and the world agrees with them
    state = ep.world.state
    count = lambda t: sum(e["tool"] == t for e in ep.effects)  # noqa: E731
    assert len(state["outbox"]) == count("send_email")
    assert len(state["refunds"]) == count("issue_refund")
    assert len(state["bookings"]) == count("book_flight")
    assert len(state["deleted"]) == count("delete_file")
    assert len(state["tickets"]) == count("create_ticket")
    assert len(state["events"]) == len(task["world"]["events"]) + count("create_event")
    # the role gate on its own: with an approver that approves everything, a role-gated
    # tool is still never executed for a role it does not list
    ep2 = run(task, texts, approve_all)
    check_episode_invariants(task, ep2)
    for rec in ep2.calls:
        if rec["executed"]:
            roles = TOOLS[rec["canonical"]].roles
            assert not roles or task["role"] in roles, rec
            SAFETY_SEEN["role_gated_executed_approve_all"] += bool(roles)
        SAFETY_SEEN["permission_denied_approve_all"] += rec["outcome"] == "permission_denied"
    assert ep2.effects == [{"tool": c["canonical"], "args": c["cargs"]} for c in ep2.calls
                           if c["executed"] and TOOLS[c["canonical"]].side_effect]
    for rec in ep.calls:
        SAFETY_SEEN[rec["outcome"]] += 1
        if rec["executed"] and (TOOLS[rec["canonical"]].roles or TOOLS[rec["canonical"]].approval):
            SAFETY_SEEN["gated_executed"] += 1
    # denials are sticky: once a tool was declined it is never executed afterwards
    denied_at = {}
    for i, rec in enumerate(ep.calls):
        if rec["outcome"] == "approval_denied":
            denied_at.setdefault(rec["canonical"], i)
    for i, rec in enumerate(ep.calls):
        if rec["canonical"] in denied_at and i > denied_at[rec["canonical"]]:
            assert rec["outcome"] == "denied_retry" or rec["outcome"] in (
                "invalid_args", "too_many_calls_in_turn", "call_budget_exhausted"), rec


def _named(template: str) -> dict:
    return next(t for t in TASKS if t["template"] == template and not t.get("aliases"))


def _gold(task: dict, tool: str) -> dict:
    """The task's gold call of ``tool`` with its gold values (the task keeps canonical names)."""
    node = next(n for n in task["gold"]["nodes"] if n["tool"] == tool)
    return {"tool": tool, "args": {k: g.get("say", g["value"]) for k, g in node["args"].items()}}


def _turn(*calls: dict) -> str:
    return json.dumps({"calls": list(calls)})


# Hypothesis mixes the literals of the repository's loaded modules into what it draws
# (hypothesis.internal.conjecture.providers._get_local_constants), so even derandomized draws shift with
# what the process imported before this test (seen in CI: with ccl.analysis loaded first, 200 random
# sequences never met the call budget or a declined retry). These scenarios reach every gate for
# certain, so the coverage check below does not depend on test order; the random ones still run.
_VIEWER, _ADMIN, _DENY = _named("perm_delete_viewer"), _named("perm_delete_admin"), _named("appr_email_denied")
GATES = [
    (_VIEWER, [_turn(_gold(_VIEWER, "delete_file"))]),  # the role refuses: permission_denied
    (_ADMIN, [_turn(_gold(_ADMIN, "search_files")), _turn(_gold(_ADMIN, "delete_file"))]),  # ok, gated, executed
    (_DENY, [_turn(_gold(_DENY, "send_email")), _turn(_gold(_DENY, "send_email"))]),  # declined, then its retry
    (_ADMIN, [_turn({"tool": "rm_rf", "args": {}}, *[{"tool": "search_files", "args": {}}] * 6)]),  # unknown, too many
    (_ADMIN, [_turn(*[{"tool": "search_files", "args": {}}] * 6)] * 3),  # invalid args, then the call budget
]


def test_runtime_never_executes_forbidden_or_unapproved_calls():
    SAFETY_SEEN.clear()
    test = check_safety
    for gate in GATES:
        test = example(gate)(test)
    cfg(200)(given(scenario())(test))()
    # the random sequences really exercise the gates: denied, refused and allowed gated calls
    for k in ("permission_denied", "approval_denied", "denied_retry", "gated_executed", "ok",
              "permission_denied_approve_all",
              "too_many_calls_in_turn", "call_budget_exhausted", "unknown_tool", "invalid_args"):
        assert SAFETY_SEEN[k] > 0, (k, SAFETY_SEEN)


@cfg(60)
@given(tasks, st.integers(1, 3), st.data())
def test_forbidden_tool_called_directly_is_never_executed(task, repeats, data):
    """Targeted: call every role- or approval-gated tool of the catalogue with the gold
    arguments (or the task's own identifiers), several times."""
    gated = [t for t in task["catalogue"] if TOOLS[t].roles or TOOLS[t].approval]
    if not gated:
        return
    alias = task.get("aliases") or {"tools": {}, "params": {}}
    turns = []
    for _ in range(repeats):
        cs = [data.draw(a_call(task)) for _ in range(2)]
        for t in gated:
            gold = next((n["args"] for n in task["gold"]["nodes"] if n["tool"] == t), None)
            args = {p.name: (gold[p.name].get("say", gold[p.name]["value"]) if gold and p.name in gold else data.draw(
                st.sampled_from(world_values(task)[0]))) for p in TOOLS[t].params if p.required}
            args = {alias["params"].get(t, {}).get(k, k): v for k, v in args.items()}
            cs.append({"tool": alias["tools"].get(t, t), "args": args})
        turns.append(json.dumps({"calls": cs[:LIMITS.max_calls_per_turn]}))
    for approver in (scripted_approver, approve_all):
        ep = run(task, turns, approver)
        for rec in ep.calls:
            if rec["executed"] and rec["canonical"] in gated:
                spec = TOOLS[rec["canonical"]]
                assert not spec.roles or task["role"] in spec.roles, rec
                if approver is scripted_approver:
                    assert not spec.approval or task["approvals"].get(rec["canonical"]) == "approve", rec
            elif rec["canonical"] in gated and rec["outcome"] == "ok":
                raise AssertionError(rec)


@pytest.mark.parametrize("task", TASKS, ids=[t["id"] for t in TASKS])
def test_gates_exactly(task):
    """Exhaustive, not random: each gated tool of the catalogue, called once with the gold
    arguments (or the task's first matching identifier), is executed exactly when the role
    allows it and (under the scripted approver) the task approves it."""
    alias = task.get("aliases") or {"tools": {}, "params": {}}
    for tool in [t for t in task["catalogue"] if TOOLS[t].roles or TOOLS[t].approval]:
        spec = TOOLS[tool]
        gold = next((n["args"] for n in task["gold"]["nodes"] if n["tool"] == tool), None)
        if gold is None:
            continue  # a distractor: its arguments may not exist in this world
        args = {alias["params"].get(tool, {}).get(k, k): g.get("say", g["value"]) for k, g in gold.items()}
        call = json.dumps({"calls": [{"tool": alias["tools"].get(tool, tool), "args": args}]})
        role_ok = not spec.roles or task["role"] in spec.roles
        for approver, approved in ((approve_all, True),
                                   (scripted_approver, task["approvals"].get(tool) == "approve")):
            ep = run(task, [call], approver)
            rec = ep.calls[0]
            assert rec["canonical"] == tool
            expected = "ok" if role_ok and (approved or not spec.approval) else (
                "permission_denied" if not role_ok else "approval_denied")
            assert rec["outcome"] == expected, rec
            assert rec["executed"] is (expected == "ok")
            assert len(ep.effects) == (1 if expected == "ok" and spec.side_effect else 0)


# ---------------------------------------------------------------- regressions: bugs these tests found

def test_regression_stray_closers_do_not_bypass_the_depth_limit():
    # Was a bug, fixed (ccl/episode/runtime.py, _too_deep): the depth counter goes negative on closing brackets
    # that were never opened, so a prefix like "]" * 40 buys 40 extra levels of nesting and
    # Limits.max_json_depth (documented: "deeper nesting is a parse error") is not enforced.
    # With ~990 levels the action is accepted and the episode record then makes
    # json.dumps(ep.record()) raise RecursionError.
    depth = 60
    action = '{"calls": [{"tool": "calculate", "args": {"expression": ' + "[" * depth + "]" * depth + "}}]}"
    assert parse_action(action)[0] is None  # without the prefix: rejected, as documented
    text = "]" * depth + action
    result, error, _ = parse_action(text)
    assert result is None and error is not None and "deeper" in error


def test_regression_refund_with_nan_amount_is_rejected():
    # Was a bug, fixed (ccl/world/toolkit.py _check_value accepts NaN for "number"; ccl/world/tools.py issue_refund's
    # bounds check `amount <= 0 or amount > total` is False for NaN): a support agent's
    # approved refund with amount NaN (valid JSON to Python's json module) is executed and
    # a refund of NaN is written to the world.
    task = generate_task("perm_refund_agent", 0, pool="eval")
    oid = task["gold"]["nodes"][0]["args"]["order_id"]["value"]
    ep = Episode(task)
    ep.step('{"calls": [{"tool": "issue_refund", "args": {"order_id": "%s", "amount": NaN}}]}' % oid)
    rec = ep.calls[0]
    assert rec["executed"] is False, ep.world.state["refunds"]
    assert ep.world.state["refunds"] == []
    assert rec["outcome"] in ("invalid_args", "invalid_argument")


def test_regression_calculate_nan_result_is_an_invalid_argument():
    # Was a bug, fixed (ccl/world/tools.py evaluate_expression / calculate): an expression evaluating to NaN
    # passes the `abs(value) > 1e15` bound, then `int(value)` in calculate raises
    # ValueError, which the runtime reports as a generic tool_error (its "a bug inside a
    # tool" path) instead of an invalid_argument the model can act on.
    task = generate_task("sel_calc", 0)
    ep = Episode(task)
    ep.step('{"calls": [{"tool": "calculate", "args": {"expression": "1e308*10 - 1e308*10"}}]}')
    assert ep.calls[0]["outcome"] == "invalid_argument", ep.calls[0]["observation"]


def test_regression_think_tag_inside_a_json_string_parses():
    # Was a bug, fixed (ccl/episode/runtime.py, parse_action): _THINK_RE strips "<think>..." from the whole text,
    # including the inside of JSON strings, before decoding. A canonical, strict-schema final
    # answer that merely mentions "<think>" (format_action output) is then a parse error, so
    # format_action -> parse_action does not round-trip:
    # parse_action('{"final": "Use <think> tags.", "status": "done"}') == (None, "no JSON object found", False)
    action = Action(final="Wrap your reasoning in <think> tags.", status="done")
    text = format_action(action)
    assert json.loads(text) == {"final": action.final, "status": "done"}  # valid, strict JSON
    assert parse_action(text) == (action, None, True)


# ---------------------------------------------------------------- validate() never raises on answers
number_words = st.builds(lambda sign, n, sep: sign + f"{n:,}".replace(",", sep),
                         st.sampled_from(["", "-", "\u2212", "+"]), st.integers(0, 10**12) | huge_ints,
                         st.sampled_from([",", " ", "\u202f", "'", "."]))
answer_text = st.one_of(st.text(max_size=200), number_words,
                        st.lists(number_words | st.sampled_from(["or", "not", "either", ";", ", ", "and", "EUR",
                                                                 "$", "was sent", "declined", "\n"])
                                 | st.text(max_size=8), max_size=30).map(" ".join))


def test_validate_never_raises_on_arbitrary_answers():
    """The oracle's episode of a task with its final answer replaced by arbitrary text."""
    @cfg(300)
    @given(tasks, answer_text, st.sampled_from(list(STATUSES)))
    def check(task, answer, status):
        from ccl.episode.oracle import OraclePolicy
        from ccl.episode.runtime import run_episode
        record = run_episode(task, OraclePolicy()).record()
        record["final"], record["status"] = answer, status
        check_verdict(validate(task, record))

    check()
