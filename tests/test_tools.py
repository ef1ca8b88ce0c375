"""Tool declarations: schemas derived from signatures, argument validation, tool behaviour."""
import pytest

from ccl.judge.answers import fact_present
from ccl.judge.matching import arg_matches
from ccl.world.state import World, empty_state
from ccl.world.tasks.base import number_forms
from ccl.world.toolkit import ToolError, validate_args
from ccl.world.tools import HELD_OUT_TOOLS, TOOLS, evaluate_expression


def test_twenty_one_tools_in_twelve_domains():
    assert len(TOOLS) == 21
    assert len({t.domain for t in TOOLS.values()}) == 12
    assert HELD_OUT_TOOLS == ["find_product", "geocode", "get_local_time", "reserve_stock"]
    assert sorted(n for n, t in TOOLS.items() if t.approval) == ["book_flight", "delete_file", "issue_refund", "send_email"]
    assert {n: t.roles for n, t in TOOLS.items() if t.roles} == {"issue_refund": ("support_agent",), "delete_file": ("admin",)}
    assert TOOLS["get_weather"].fallback == "get_weather_backup"


def test_schema_is_derived_from_signature_and_docstring():
    s = TOOLS["create_event"].json_schema()
    assert s["description"] == "Create a calendar event."
    assert s["parameters"]["required"] == ["title", "date", "time"]
    assert s["parameters"]["properties"]["attendees"] == {
        "type": "array", "items": {"type": "string"},
        "description": "email addresses of invited people (optional)"}
    assert TOOLS["create_ticket"].json_schema()["parameters"]["properties"]["priority"]["enum"] == [
        "low", "normal", "high", "urgent"]
    assert TOOLS["convert_currency"].param("amount").type == "number"
    assert TOOLS["reserve_stock"].param("quantity").type == "integer"


@pytest.mark.parametrize("tool,args,error", [
    ("get_weather", {}, "missing required argument 'city'"),
    ("get_weather", {"city": 3}, "city must be a string"),
    ("get_weather", {"city": "Paris", "units": "C"}, "unknown argument(s) ['units']"),
    ("reserve_stock", {"sku": "SKU-1", "quantity": 2.5}, "quantity must be an integer"),
    ("reserve_stock", {"sku": "SKU-1", "quantity": True}, "quantity must be an integer"),
    ("create_ticket", {"title": "x", "priority": "p1"}, "priority must be one of"),
    ("create_event", {"title": "x", "date": "d", "time": "t", "attendees": "a@b.c"}, "attendees must be a list"),
    ("get_weather", {"city": "x" * 1001}, "longer than 1000"),
    ("get_weather", ["Paris"], "args must be a JSON object"),
])
def test_validate_args_rejects(tool, args, error):
    assert error in validate_args(TOOLS[tool], args)


def test_validate_args_accepts_int_for_number_and_optional_missing():
    assert validate_args(TOOLS["convert_currency"], {"amount": 5, "from_currency": "USD", "to_currency": "EUR"}) is None
    assert validate_args(TOOLS["create_event"], {"title": "x", "date": "2026-01-01", "time": "10:00"}) is None


def test_tools_behave():
    state = empty_state("2026-03-10")
    state["fx"] = {"USD": 1.0, "EUR": 0.9, "JPY": 150.0}
    state["orders"]["ORD-12345"] = {"status": "shipped", "customer": "A B", "total": 100.0, "currency": "USD"}
    w = World(state)
    assert TOOLS["get_fx_rate"].fn(w, base="eur", quote=" JPY ") == {"base": "EUR", "quote": "JPY", "rate": 166.6667}
    assert TOOLS["convert_currency"].fn(w, amount=10, from_currency="USD", to_currency="EUR")["converted"] == 9.0
    with pytest.raises(ToolError, match="unknown currency code"):
        TOOLS["get_fx_rate"].fn(w, base="XXX", quote="EUR")
    with pytest.raises(ToolError) as e:
        TOOLS["get_order"].fn(w, order_id="ORD-99999")
    assert e.value.kind == "not_found"
    with pytest.raises(ToolError, match="refund must be between"):
        TOOLS["issue_refund"].fn(w, order_id="ORD-12345", amount=150)
    assert TOOLS["create_ticket"].fn(w, title="t", priority="low")["ticket_id"] == "TCK-1001"
    assert TOOLS["create_ticket"].fn(w, title="t", priority="low")["ticket_id"] == "TCK-1002"
    with pytest.raises(ToolError, match="24-hour"):
        TOOLS["create_event"].fn(w, title="x", date="2026-03-11", time="3pm")


@pytest.mark.parametrize("expr,value", [("2 + 3 * 4", 14), ("(12.5 + 3) * 4", 62.0), ("2^10", 1024),
                                         ("-3 + 10 // 3", 0), ("7 % 4", 3)])
def test_calculator(expr, value):
    assert evaluate_expression(expr) == value


@pytest.mark.parametrize("expr", ["9**9**9", "__import__('os')", "a + 1", "1/0", "1" * 300, "10**20 * 10**20"])
def test_calculator_refuses_unsafe_or_huge(expr):
    with pytest.raises(ToolError):
        evaluate_expression(expr)


@pytest.mark.parametrize("rule,gold,value,ok", [
    ("exact", "Paris", "  paris ", True), ("exact", "Paris", "Pariss", False),
    ("exact", "EUR", "euro", False), ("exact", "New  York", "new york", True),
    ("date", "2026-03-11", "2026-03-11", True), ("date", "2026-03-11", "2026-03-11T09:00", True),
    ("date", "2026-03-11", "tomorrow", False), ("date", "2026-03-11", "2026-03-111", False),
    ("time", "15:30", "15:30", True), ("time", "09:00", "9:00", True), ("time", "15:30", "15:30:00", True),
    ("time", "15:30", "3:30 pm", False),
    ("number", 12.5, 12.5, True), ("number", 12.5, 12.504, True), ("number", 12.5, 12.6, False),
    ("number", 12.5, "12.5", False), ("integer", 3, 3, True), ("integer", 3, 3.0, False),
    ("contains", ["printer"], "Printer jammed", True), ("contains", ["printer"], "Jammed", False),
    ("set", ["a@x.com", "b@x.com"], ["B@x.com", "a@x.com"], True), ("set", ["a@x.com"], ["a@x.com", "c@x.com"], False),
    ("expr", 14, "2 + 3*4", True), ("expr", 14, "2+3", False), ("expr", 14, "import os", False),
    ("substring_of", "budget notes", "Budget", True), ("substring_of", "budget notes", "", False),
    ("substring_of", "budget notes", "roadmap", False), ("any", None, "whatever", True),
])
def test_matching_rules(rule, gold, value, ok):
    assert arg_matches(rule, gold, value) is ok


def test_number_forms_and_facts():
    assert number_forms(1234.5) == ["1,234.5", "1,234.50", "1234.5", "1234.50"]
    assert number_forms(0.9213) == ["0.9213"]
    assert number_forms(15) == ["15", "15.00"]
    assert fact_present(number_forms(1234.5), "That is 1,234.50 EUR.")
    assert fact_present(number_forms(0.9213), "about 0.92")  # a rate rounded to 2 decimals
    assert not fact_present(number_forms(0.9213), "about 0.9")
    assert fact_present(["Sunny"], "It is  SUNNY today")
