"""The world is transactional and tool time limits are enforced (issue 38).

* Every side-effect tool, driven through success, fast failure (a ToolError or a crash right after the
  tool changed the world), slow failure (it changed the world, then raised past its limit), late success
  and a call that never returns: after every call the world equals the replay of the recorded effects.
* A read-only tool never changes the world, whatever the arguments (so running it on the live world in
  an abandoned worker is safe: ccl/world/execution.py).
* A tool that never returns is abandoned at its limit, reported as a timeout, and its worker thread ends.
"""
from __future__ import annotations

import dataclasses
import json
import threading
import time
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccl.artifacts.jsonio import dumps
from ccl.episode.runtime import Episode, Limits
from ccl.records import Approval, CallOutcome
from ccl.world import execution
from ccl.world.state import World
from ccl.world.tasks import generate_task
from ccl.world.toolkit import ToolError
from ccl.world.tools import TOOLS

LIMIT_S = 0.05
LIMITS = Limits(tool_timeout_s=LIMIT_S)
REAL = dict(TOOLS)  # the tools as declared (the tests below patch TOOLS with faulty ones)
SIDE_EFFECT = sorted(n for n, t in TOOLS.items() if t.side_effect)
READ_ONLY = sorted(n for n, t in TOOLS.items() if not t.side_effect)
# templates whose worlds hold what the side-effect tools act on (orders, files, flights, products, contacts)
WORLD_SOURCES = ("perm_refund_agent", "perm_delete_admin", "ch_book_cheapest", "un_stock_reserve",
                 "ch_contact_email", "ch_contact_event", "sel_fx", "sel_weather", "un_timezone")


def cfg(n: int) -> settings:
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def world_task(tool: str) -> dict:
    """One task whose world merges the source templates' entities, in a role that may call ``tool``,
    with every approval granted and every tool offered under its canonical name."""
    task = generate_task(WORLD_SOURCES[0], 0, pool="eval")
    for name in WORLD_SOURCES[1:]:
        for bucket, value in generate_task(name, 0, pool="eval")["world"].items():
            if isinstance(value, list):
                task["world"][bucket] = task["world"][bucket] + value
            elif isinstance(value, dict):
                task["world"][bucket] = {**task["world"][bucket], **value}
    roles = TOOLS[tool].roles
    return {**task, "role": roles[0] if roles else "user", "catalogue": sorted(TOOLS), "aliases": None,
            "faults": [], "approvals": {t: Approval.APPROVE for t in TOOLS}}


def replay(task: dict, effects: list[dict]) -> dict:
    """The world a clean run of the recorded effects gives."""
    world = World(task["world"])
    for e in effects:
        REAL[e["tool"]].fn(world, **e["args"])
    return world.state


def args_for(tool: str, world: dict) -> st.SearchStrategy:
    """Arguments for ``tool``: mostly ones that name real entities (so calls succeed), some that do not."""
    text = st.text(max_size=12)
    pick = lambda values, junk: st.sampled_from(sorted(values) * 3 + [junk])  # noqa: E731
    emails = [c["email"] for c in world["contacts"]]
    table: dict[str, dict[str, st.SearchStrategy]] = {
        "create_event": {"title": text, "date": st.sampled_from(["2026-05-01"] * 4 + ["May 1"]),
                         "time": st.sampled_from(["09:30"] * 4 + ["25:00"])},
        "send_email": {"to": pick(emails, "nobody"), "subject": text, "body": text},
        "issue_refund": {"order_id": pick(world["orders"], "ORD-1"),
                         "amount": st.sampled_from([-1, 0.5, 12.25, 1.0, 1e9])},
        "delete_file": {"file_id": pick(world["files"], "F-1")},
        "create_ticket": {"title": text, "priority": st.sampled_from(["low", "normal", "high", "urgent"])},
        "book_flight": {"flight_id": pick([f["flight_id"] for f in world["flights"]], "FL-1")},
        "reserve_stock": {"sku": pick(world["products"], "SKU-1"), "quantity": st.integers(-1, 3)},
    }
    return st.fixed_dictionaries(table[tool])


def valid_args(tool: str, world: dict) -> dict:
    """Arguments with which ``tool`` succeeds in the merged world (the first entity of each kind)."""
    return {"create_event": {"title": "sync", "date": "2026-05-01", "time": "09:30"},
            "send_email": {"to": world["contacts"][0]["email"], "subject": "hi", "body": "hello"},
            "issue_refund": {"order_id": sorted(world["orders"])[0], "amount": 1.0},
            "delete_file": {"file_id": sorted(world["files"])[0]},
            "create_ticket": {"title": "printer", "priority": "low"},
            "book_flight": {"flight_id": world["flights"][0]["flight_id"]},
            "reserve_stock": {"sku": sorted(world["products"])[0], "quantity": 1}}[tool]


def faulty(fn: Callable, mode: str) -> Callable:
    """The real tool, then a fault: its change to the world is already made when the fault comes."""
    def run(world: World, **args):
        result = fn(world, **args)
        if mode == "fast_error":
            raise ToolError(CallOutcome.NOT_FOUND, "injected")
        if mode == "fast_crash":
            raise RuntimeError("injected")
        if mode in ("slow_crash", "slow_ok"):
            time.sleep(2 * LIMIT_S)
            if mode == "slow_crash":
                raise RuntimeError("injected late")
        if mode == "hang":
            while True:  # never returns: only the runtime's stop ends it
                pass
        return result
    return run


MODES = ("ok", "fast_error", "fast_crash", "slow_crash", "slow_ok", "hang")
WANT = {"fast_error": CallOutcome.NOT_FOUND, "fast_crash": CallOutcome.TOOL_ERROR,
        "slow_crash": CallOutcome.TIMEOUT, "slow_ok": CallOutcome.TIMEOUT, "hang": CallOutcome.TIMEOUT}


@pytest.mark.parametrize("tool", SIDE_EFFECT)
def test_state_equals_the_replay_of_effects_after_every_call(tool, monkeypatch):
    task = world_task(tool)
    real = TOOLS[tool]
    seen = {m: 0 for m in MODES}
    threads_before = threading.active_count()

    @cfg(10)
    @given(st.lists(st.tuples(args_for(tool, task["world"]), st.sampled_from(MODES)), max_size=3))
    def check(steps):
        ep = Episode(task, limits=LIMITS)
        # every mode once with arguments that succeed (so each fault comes after a real change), then
        # hypothesis's sequence
        fixed = [(valid_args(tool, task["world"]), m) for m in MODES]
        for args, mode in fixed + steps:
            monkeypatch.setitem(TOOLS, tool, dataclasses.replace(real, fn=faulty(real.fn, mode)))
            n_effects = len(ep.effects)
            ep.step(json.dumps({"calls": [{"tool": tool, "args": args}]}))
            call = ep.calls[-1]
            if mode != "ok":  # the injected fault's kind, or the tool's own refusal before the fault
                assert call["outcome"] != CallOutcome.OK and call["executed"] is False, (mode, call)
                seen[mode] += call["outcome"] == WANT[mode]
            assert len(ep.effects) == n_effects + (call["outcome"] == CallOutcome.OK)
            assert dumps(ep.world.state) == dumps(replay(task, ep.effects)), (mode, call)
            if ep.done:
                break
        seen["ok"] += len(ep.effects)

    check()
    # every fault was injected after a real change and reported as its kind; some calls succeeded
    assert all(seen[m] > 0 for m in MODES), seen
    assert threading.active_count() == threads_before and execution.abandoned() == 0


READ_ARGS = st.one_of(st.text(max_size=20), st.integers(-10**6, 10**6), st.floats(allow_nan=False),
                      st.lists(st.text(max_size=5), max_size=3))


@pytest.mark.parametrize("tool", READ_ONLY)
def test_read_only_tools_never_change_the_world(tool):
    task = world_task(tool)
    names = [p.name for p in TOOLS[tool].params]
    samples = {"order_id": sorted(task["world"]["orders"]), "file_id": sorted(task["world"]["files"]),
               "city": sorted(task["world"]["weather"]), "date": [task["world"]["today"]]}

    @cfg(40)
    @given(st.fixed_dictionaries({n: st.sampled_from(samples[n]) | READ_ARGS if n in samples else READ_ARGS
                                  for n in names}))
    def check(args):
        world = World(task["world"])
        before = dumps(world.state)
        ran = execution.run_tool(TOOLS[tool], world, args, 2.0)
        assert not ran.timed_out and ran.state is None
        assert dumps(world.state) == before

    check()


def test_a_tool_that_never_returns_is_abandoned_at_its_limit_and_its_thread_ends(monkeypatch):
    real = TOOLS["create_ticket"]
    monkeypatch.setitem(TOOLS, "create_ticket", dataclasses.replace(real, fn=faulty(real.fn, "hang")))
    task = world_task("create_ticket")
    before = threading.active_count()
    ep = Episode(task, limits=Limits(tool_timeout_s=0.2))
    start = time.perf_counter()
    ep.step('{"calls": [{"tool": "create_ticket", "args": {"title": "printer", "priority": "low"}}]}')
    took = time.perf_counter() - start
    call = ep.calls[0]
    assert call["outcome"] == CallOutcome.TIMEOUT and call["executed"] is False
    assert call["observation"]["error"] == {"kind": "timeout", "message": "the tool took too long", "retryable": True}
    assert ep.effects == [] and ep.world.state["tickets"] == []  # the change it made is not in the world
    assert 0.2 <= took < 0.2 + execution.STOP_GRACE_S  # abandoned at the limit, not after a grace period
    assert threading.active_count() == before and execution.abandoned() == 0
    # the episode goes on: the next call (the real tool again) succeeds and is the first ticket
    monkeypatch.setitem(TOOLS, "create_ticket", real)
    ep.step('{"calls": [{"tool": "create_ticket", "args": {"title": "printer", "priority": "low"}}]}')
    assert ep.calls[1]["result"] == {"ticket_id": "TCK-1001", "priority": "low"}


def test_a_call_blocked_in_c_is_reported_at_its_limit_and_its_late_change_never_lands(monkeypatch):
    """A worker sleeping in C cannot be stopped until the sleep returns: the call is still reported at its
    limit, the worker is counted as abandoned while it sleeps, and the change it makes when it wakes goes
    to its private copy, not to the episode's world."""
    real = TOOLS["create_ticket"]

    def sleepy(world: World, **args):
        time.sleep(1.5)
        return real.fn(world, **args)

    monkeypatch.setitem(TOOLS, "create_ticket", dataclasses.replace(real, fn=sleepy))
    monkeypatch.setattr(execution, "STOP_GRACE_S", 0.05)
    ep = Episode(world_task("create_ticket"), limits=Limits(tool_timeout_s=0.1))
    ep.step('{"calls": [{"tool": "create_ticket", "args": {"title": "late", "priority": "low"}}]}')
    assert ep.calls[0]["outcome"] == CallOutcome.TIMEOUT and execution.abandoned() == 1
    deadline = time.monotonic() + 10
    while execution.abandoned() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert execution.abandoned() == 0  # woke, met the stop and ended
    assert ep.world.state["tickets"] == [] and ep.effects == []
