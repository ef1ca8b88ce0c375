"""The 21 simulated tools in 12 domains, each declared once as a typed function.

Training domains: contacts, calendar, email, weather, fx, orders, files, tickets,
maths, flights. Held-out domains (never in training, not even as distractors):
inventory, maps. Tools raise :class:`ToolError` for conditions the model must see
(not found, bad value); the runtime turns those into observations.
"""
from __future__ import annotations

import ast
import math
import operator
import re
from typing import Literal, Optional

from ..records import CallOutcome
from .state import World
from .toolkit import REGISTRY, Tool, ToolError, tool

HELD_OUT_DOMAINS = ("inventory", "maps")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
TIME_RE = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


def _norm(s: str) -> str:
    return " ".join(s.split()).casefold()


def _need_date(name: str, value: str) -> None:
    if not DATE_RE.match(value.strip()):
        raise ToolError(CallOutcome.INVALID_ARGUMENT, f"{name} must be a date in YYYY-MM-DD format")


def _currency(world: World, code: str) -> float:
    rate = world.state["fx"].get(code.strip().upper())
    if rate is None:
        raise ToolError(CallOutcome.INVALID_ARGUMENT, f"unknown currency code {code!r}; use ISO 4217 codes")
    return rate


# ---- contacts ----
@tool("contacts")
def find_contact(w: World, name: str) -> dict:
    """Look up a person in the address book by full name.

    Args:
        name: full name of the person, e.g. "Ada Lovelace"
    """
    for c in w.state["contacts"]:
        if _norm(c["name"]) == _norm(name):
            return dict(c)
    raise ToolError(CallOutcome.NOT_FOUND, f"no contact named {name!r}")


# ---- calendar ----
@tool("calendar")
def list_events(w: World, date: str) -> dict:
    """List the calendar events on one day.

    Args:
        date: the day, YYYY-MM-DD
    """
    _need_date("date", date)
    events = [e for e in w.state["events"] if e["date"] == date.strip()]
    return {"date": date.strip(), "events": sorted(events, key=lambda e: e["time"])}


@tool("calendar", side_effect=True)
def create_event(w: World, title: str, date: str, time: str,
                 attendees: Optional[list[str]] = None) -> dict:
    """Create a calendar event.

    Args:
        title: event title
        date: the day, YYYY-MM-DD
        time: start time, 24-hour HH:MM
        attendees: email addresses of invited people (optional)
    """
    _need_date("date", date)
    if not TIME_RE.match(time.strip()):
        raise ToolError(CallOutcome.INVALID_ARGUMENT, "time must be 24-hour HH:MM")
    event_id = w.new_id("EVT", "events")
    w.state["events"].append({"event_id": event_id, "title": title, "date": date.strip(),
                              "time": time.strip(), "attendees": list(attendees or [])})
    return {"event_id": event_id, "created": True}


# ---- email ----
@tool("email", approval=True, side_effect=True)
def send_email(w: World, to: str, subject: str, body: str) -> dict:
    """Send an email.

    Args:
        to: recipient email address
        subject: subject line
        body: message text
    """
    if "@" not in to:
        raise ToolError(CallOutcome.INVALID_ARGUMENT, f"{to!r} is not an email address")
    message_id = w.new_id("MSG", "outbox")
    w.state["outbox"].append({"message_id": message_id, "to": to, "subject": subject, "body": body})
    return {"message_id": message_id, "sent": True}


# ---- weather ----
def _weather(w: World, city: str, source: str) -> dict:
    for name, data in w.state["weather"].items():
        if _norm(name) == _norm(city):
            return {"city": name, **data, "source": source}
    raise ToolError(CallOutcome.NOT_FOUND, f"no weather station for {city!r}")


@tool("weather", fallback="get_weather_backup")
def get_weather(w: World, city: str) -> dict:
    """Current weather for a city.

    Args:
        city: city name
    """
    return _weather(w, city, "primary")


@tool("weather")
def get_weather_backup(w: World, city: str) -> dict:
    """Current weather from the backup provider.

    Args:
        city: city name
    """
    return _weather(w, city, "backup")


# ---- fx ----
@tool("fx")
def get_fx_rate(w: World, base: str, quote: str) -> dict:
    """Exchange rate: units of the quote currency per one unit of the base currency.

    Args:
        base: ISO 4217 code, e.g. USD
        quote: ISO 4217 code, e.g. EUR
    """
    rate = _currency(w, quote) / _currency(w, base)
    return {"base": base.strip().upper(), "quote": quote.strip().upper(), "rate": round(rate, 4)}


@tool("fx")
def convert_currency(w: World, amount: float, from_currency: str, to_currency: str) -> dict:
    """Convert an amount of money between currencies.

    Args:
        amount: amount in the source currency
        from_currency: ISO 4217 code of the source currency
        to_currency: ISO 4217 code of the target currency
    """
    rate = round(_currency(w, to_currency) / _currency(w, from_currency), 4)
    converted = round(amount * rate, 2)
    if not math.isfinite(converted):  # e.g. 1e308 yen in dollars: no JSON number holds the answer
        raise ToolError(CallOutcome.INVALID_ARGUMENT, "amount too large to convert")
    return {"amount": amount, "from_currency": from_currency.strip().upper(),
            "to_currency": to_currency.strip().upper(), "converted": converted}


# ---- orders ----
def _order(w: World, order_id: str) -> dict:
    order = w.state["orders"].get(order_id.strip().upper())
    if order is None:
        raise ToolError(CallOutcome.NOT_FOUND, f"no order {order_id!r}")
    return order


@tool("orders")
def get_order(w: World, order_id: str) -> dict:
    """Look up an order: status, customer name, total and currency.

    Args:
        order_id: order identifier, e.g. ORD-10423
    """
    return {"order_id": order_id.strip().upper(), **_order(w, order_id)}


@tool("orders", approval=True, roles=("support_agent",), side_effect=True)
def issue_refund(w: World, order_id: str, amount: float) -> dict:
    """Refund (part of) an order to the customer.

    Args:
        order_id: order identifier
        amount: amount to refund, in the order's currency
    """
    order = _order(w, order_id)
    if amount <= 0 or amount > order["total"]:
        raise ToolError(CallOutcome.INVALID_ARGUMENT, f"refund must be between 0 and {order['total']}")
    refund_id = w.new_id("RF", "refunds")
    w.state["refunds"].append({"refund_id": refund_id, "order_id": order_id.strip().upper(),
                               "amount": amount})
    return {"refund_id": refund_id, "amount": amount, "currency": order["currency"]}


# ---- files ----
@tool("files")
def search_files(w: World, query: str) -> dict:
    """Find files whose name contains the query.

    Args:
        query: part of the file name
    """
    q = _norm(query)
    hits = [{"file_id": fid, "name": f["name"]} for fid, f in sorted(w.state["files"].items())
            if q and q in _norm(f["name"]) and fid not in w.state["deleted"]]
    return {"matches": hits}


@tool("files")
def read_file(w: World, file_id: str) -> dict:
    """Read a file's content by its identifier.

    Args:
        file_id: file identifier, e.g. F-2093
    """
    fid = file_id.strip().upper()
    f = w.state["files"].get(fid)
    if f is None or fid in w.state["deleted"]:
        raise ToolError(CallOutcome.NOT_FOUND, f"no file {file_id!r}")
    return {"file_id": fid, **f}


@tool("files", approval=True, roles=("admin",), side_effect=True)
def delete_file(w: World, file_id: str) -> dict:
    """Delete a file.

    Args:
        file_id: file identifier
    """
    fid = file_id.strip().upper()
    if fid not in w.state["files"] or fid in w.state["deleted"]:
        raise ToolError(CallOutcome.NOT_FOUND, f"no file {file_id!r}")
    w.state["deleted"].append(fid)
    return {"file_id": fid, "deleted": True}


# ---- tickets ----
@tool("tickets", side_effect=True)
def create_ticket(w: World, title: str, priority: Literal["low", "normal", "high", "urgent"]) -> dict:
    """Open a support ticket.

    Args:
        title: short summary of the problem
        priority: how urgent the problem is
    """
    ticket_id = w.new_id("TCK", "tickets")
    w.state["tickets"].append({"ticket_id": ticket_id, "title": title, "priority": priority})
    return {"ticket_id": ticket_id, "priority": priority}


# ---- maths ----
_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow}


def evaluate_expression(expression: str) -> float:
    """Safely evaluate arithmetic (numbers, + - * / // % **, parentheses); bounded size."""
    if len(expression) > 200:
        raise ToolError(CallOutcome.INVALID_ARGUMENT, "expression longer than 200 characters")
    try:
        tree = ast.parse(expression.replace("^", "**").replace("×", "*"), mode="eval")
    except (SyntaxError, ValueError):
        raise ToolError(CallOutcome.INVALID_ARGUMENT, f"cannot parse expression {expression!r}") from None

    def ev(node: ast.AST) -> float:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Pow) and (abs(b) > 12 or abs(a) > 1e6):
                raise ToolError(CallOutcome.INVALID_ARGUMENT, "exponent too large")
            try:
                value = _BINOPS[type(node.op)](a, b)
            except ZeroDivisionError:
                raise ToolError(CallOutcome.INVALID_ARGUMENT, "division by zero") from None
            if isinstance(value, complex):  # a negative number to a fractional power
                raise ToolError(CallOutcome.INVALID_ARGUMENT, "the result is not a real number")
            return value
        raise ToolError(CallOutcome.INVALID_ARGUMENT, "only numbers and + - * / % ** ( ) are allowed")

    try:
        value = ev(tree)
        finite = math.isfinite(value)
    except (OverflowError, RecursionError):  # a product too large for a float; nesting deeper than the stack
        raise ToolError(CallOutcome.INVALID_ARGUMENT, "result is not a finite number below 1e15") from None
    if not finite or abs(value) > 1e15:
        raise ToolError(CallOutcome.INVALID_ARGUMENT, "result is not a finite number below 1e15")
    return value


@tool("maths")
def calculate(w: World, expression: str) -> dict:
    """Evaluate an arithmetic expression.

    Args:
        expression: arithmetic such as (12.5 + 3) * 4
    """
    value = evaluate_expression(expression)
    value = round(value, 6)
    return {"expression": expression, "result": int(value) if value == int(value) else value}


# ---- flights ----
@tool("flights")
def search_flights(w: World, origin: str, destination: str, date: str) -> dict:
    """Search flights between two cities on a day.

    Args:
        origin: departure city
        destination: arrival city
        date: travel day, YYYY-MM-DD
    """
    _need_date("date", date)
    hits = [f for f in w.state["flights"] if _norm(f["origin"]) == _norm(origin)
            and _norm(f["destination"]) == _norm(destination) and f["date"] == date.strip()]
    return {"flights": sorted(hits, key=lambda f: f["flight_id"])}


@tool("flights", approval=True, side_effect=True)
def book_flight(w: World, flight_id: str) -> dict:
    """Book a seat on a flight.

    Args:
        flight_id: flight identifier from search_flights
    """
    fid = flight_id.strip().upper()
    if not any(f["flight_id"] == fid for f in w.state["flights"]):
        raise ToolError(CallOutcome.NOT_FOUND, f"no flight {flight_id!r}")
    booking_id = w.new_id("BK", "bookings")
    w.state["bookings"].append({"booking_id": booking_id, "flight_id": fid})
    return {"booking_id": booking_id, "flight_id": fid}


# ---- inventory (held out) ----
@tool("inventory")
def find_product(w: World, name: str) -> dict:
    """Look up a product in the warehouse: SKU and units in stock.

    Args:
        name: product name
    """
    for sku, p in sorted(w.state["products"].items()):
        if _norm(p["name"]) == _norm(name):
            return {"sku": sku, **p}
    raise ToolError(CallOutcome.NOT_FOUND, f"no product named {name!r}")


@tool("inventory", side_effect=True)
def reserve_stock(w: World, sku: str, quantity: int) -> dict:
    """Reserve units of a product for an order.

    Args:
        sku: product SKU, e.g. SKU-535
        quantity: number of units
    """
    p = w.state["products"].get(sku.strip().upper())
    if p is None:
        raise ToolError(CallOutcome.NOT_FOUND, f"no product with SKU {sku!r}")
    if quantity <= 0 or quantity > p["in_stock"]:
        raise ToolError(CallOutcome.INVALID_ARGUMENT, f"quantity must be between 1 and {p['in_stock']}")
    p["in_stock"] -= quantity
    reservation_id = w.new_id("RSV", "reservations")
    w.state["reservations"].append({"reservation_id": reservation_id, "sku": sku.strip().upper(),
                                    "quantity": quantity})
    return {"reservation_id": reservation_id, "quantity": quantity, "remaining": p["in_stock"]}


# ---- maps (held out) ----
@tool("maps")
def geocode(w: World, place: str) -> dict:
    """Resolve a place name to a location identifier and coordinates.

    Args:
        place: city or place name
    """
    for name, loc in w.state["locations"].items():
        if _norm(name) == _norm(place):
            return {"place": name, **{k: loc[k] for k in ("location_id", "lat", "lon")}}
    raise ToolError(CallOutcome.NOT_FOUND, f"unknown place {place!r}")


@tool("maps")
def get_local_time(w: World, location_id: str) -> dict:
    """Current local date and time at a location (from the company clock).

    Args:
        location_id: identifier returned by geocode
    """
    for loc in w.state["locations"].values():
        if loc["location_id"] == location_id.strip().upper():
            return {"location_id": loc["location_id"], "local_time": loc["local_time"],
                    "utc_offset": loc["utc_offset"]}
    raise ToolError(CallOutcome.NOT_FOUND, f"no location {location_id!r}")


TOOLS: dict[str, Tool] = REGISTRY
TRAIN_TOOLS = sorted(n for n, t in TOOLS.items() if t.domain not in HELD_OUT_DOMAINS)
HELD_OUT_TOOLS = sorted(n for n, t in TOOLS.items() if t.domain in HELD_OUT_DOMAINS)
