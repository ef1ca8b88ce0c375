"""No tool crashes on arguments its schema accepts (issue 38): every call gives a result that is strict
JSON, or a ToolError the model can act on (invalid_argument, not_found), never a tool_error."""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_transactions import cfg, world_task

from ccl.episode.runtime import Episode
from ccl.records import CallOutcome
from ccl.world.execution import run_tool
from ccl.world.state import World
from ccl.world.toolkit import MAX_LIST, MAX_STRING, Param, validate_args
from ccl.world.tools import TOOLS, calculate

WORLD = world_task("create_ticket")["world"]
ENTITIES = sorted({*WORLD["orders"], *WORLD["files"], *WORLD["products"], *WORLD["weather"], *WORLD["locations"],
                   *(f["flight_id"] for f in WORLD["flights"]), *(c["email"] for c in WORLD["contacts"]),
                   *(c["name"] for c in WORLD["contacts"]), *(v["location_id"] for v in WORLD["locations"].values()),
                   *WORLD["fx"], WORLD["today"], "09:30", *(p["name"] for p in WORLD["products"].values())})

# arithmetic the way a model writes it, including what once crashed: complex results, huge products
number = st.integers(-10**6, 10**6).map(str) | st.floats(allow_nan=False, allow_infinity=False).map(repr) \
    | st.sampled_from(["9" * 150, "1e308", "0", "(-8)", "(-2)", "0.5"])
hard = st.sampled_from(["(-8)**0.5", "(-2)**0.5*3", "*".join(["99999**12"] * 7), "9" * 150 + "/3", "1/0"])
expression = hard | st.recursive(number, lambda e: st.builds(lambda a, op, b: f"({a}{op}{b})", e,
                                                      st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "^"]), e),
                          max_leaves=12)


def value_for(p: Param) -> st.SearchStrategy:
    """Any value the derived schema accepts for ``p`` (tests/test_tool_args checks it with validate_args)."""
    if p.enum:
        return st.sampled_from(p.enum)
    if p.type == "string":
        text = st.text(max_size=MAX_STRING) | st.sampled_from(ENTITIES) | st.just("")
        return expression | text if p.name == "expression" else text
    if p.type == "integer":
        return st.integers() | st.integers(-(10**400), 10**400)
    if p.type == "number":
        return st.sampled_from([1e307, -1e307, 10**306]) | st.floats(allow_nan=False, allow_infinity=False) \
            | st.integers(-(10**307), 10**307)
    item = Param(p.name, p.items or "string", "", True)
    return st.lists(value_for(item), max_size=MAX_LIST)


def args_of(tool: str) -> st.SearchStrategy:
    params = TOOLS[tool].params
    required = {p.name: value_for(p) for p in params if p.required}
    optional = {p.name: value_for(p) for p in params if not p.required}
    return st.fixed_dictionaries(required, optional=optional)


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_no_tool_crashes_on_schema_valid_arguments(tool):
    outcomes: set[str] = set()

    @cfg(150)
    @given(args_of(tool))
    def check(args):
        assert validate_args(TOOLS[tool], args) is None, args  # the strategy stays inside the schema
        ran = run_tool(TOOLS[tool], World(WORLD), args, 5.0)
        assert ran.crash is None and not ran.timed_out, (args, ran)
        if ran.error is not None:
            assert ran.error.kind in (CallOutcome.INVALID_ARGUMENT, CallOutcome.NOT_FOUND)
            outcomes.add(ran.error.kind)
        else:
            json.dumps(ran.result, allow_nan=False)  # a result is strict JSON: no NaN, no Infinity
            outcomes.add(CallOutcome.OK)

    check()
    assert outcomes, tool


@pytest.mark.parametrize("expression, want", [
    ("(-8)**0.5", "the result is not a real number"),  # complex: once a tool_error (math.isfinite(complex))
    ("(-2)**0.5*3", "the result is not a real number"),
    ("*".join(["99999**12"] * 7), "result is not a finite number below 1e15"),  # once OverflowError
    ("9" * 150 + "/3", "result is not a finite number below 1e15"),  # int too large for a float division
])
def test_calculate_refuses_complex_and_overflowing_results(expression, want):
    ep = Episode(world_task("create_ticket"))
    ep.step(json.dumps({"calls": [{"tool": "calculate", "args": {"expression": expression}}]}))
    assert ep.calls[0]["observation"] == {"ok": False, "error": {"kind": "invalid_argument", "message": want}}


def test_calculate_still_answers_ordinary_arithmetic():
    world = World(WORLD)
    assert calculate(world, "(12.5 + 3) * 4") == {"expression": "(12.5 + 3) * 4", "result": 62}
    assert calculate(world, "2 ** -1") == {"expression": "2 ** -1", "result": 0.5}
    assert calculate(world, "(-8) ** 2") == {"expression": "(-8) ** 2", "result": 64}


def test_convert_currency_refuses_an_amount_whose_conversion_overflows():
    # was {"converted": inf}: not a tool error, but a record no strict JSON reader accepts
    world = World(WORLD)
    low, high = min(WORLD["fx"], key=WORLD["fx"].get), max(WORLD["fx"], key=WORLD["fx"].get)
    ran = run_tool(TOOLS["convert_currency"], world, {"amount": 1e307, "from_currency": low, "to_currency": high}, 5.0)
    assert ran.error is not None and (ran.error.kind, ran.error.message) == ("invalid_argument",
                                                                              "amount too large to convert")
    ran = run_tool(TOOLS["convert_currency"], world, {"amount": 10, "from_currency": low, "to_currency": low}, 5.0)
    assert ran.result["converted"] == 10
