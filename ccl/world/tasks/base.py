"""Template registry and the :class:`Builder` every template uses to make one task.

A template is a function ``build(b: Builder)`` that fills in the request, the
world, the gold dependency graph (nodes with per-argument matching rules), the
expected status, the required answer facts and the oracle's answer template.
Everything a validator or oracle needs is stored on the task as plain JSON.

Gold arguments that depend on earlier results carry a ``ref`` (a path into an
earlier node's observed result). The oracle resolves refs from the real
observations; the gold ``value`` is what a correct episode must send and is
computed here by running the real tool on a copy of the world.
"""
from __future__ import annotations

import copy
import datetime as dt
import random
from dataclasses import dataclass
from typing import Any, Callable

from ..state import (
    CITIES,
    CODE_WORDS,
    CONDITIONS,
    CURRENCIES,
    FILE_KINDS,
    FILE_TOPICS,
    ORDER_STATUSES,
    PRODUCTS,
    World,
    city_pool,
    email_of,
    empty_state,
    fx_rates,
    name_pool,
)
from ..toolkit import ToolError
from ..tools import TOOLS

FAMILIES = ("select", "args", "chain", "parallel", "recovery", "permission", "approval",
            "termination")
SPLITS = ("train", "ood", "unseen")
STATUSES = ("done", "refused", "blocked", "failed")
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@dataclass(frozen=True)
class Template:
    name: str
    family: str
    split: str  # train | ood | unseen (templates belong to exactly one split)
    depth: int  # longest chain of gold calls, forbidden calls included
    build: Callable[["Builder"], None]


TEMPLATES: dict[str, Template] = {}


def template(name: str, family: str, split: str, depth: int) -> Callable:
    assert family in FAMILIES and split in SPLITS, (name, family, split)

    def wrap(fn: Callable[["Builder"], None]) -> Callable[["Builder"], None]:
        if name in TEMPLATES:
            raise ValueError(f"template {name} declared twice")
        TEMPLATES[name] = Template(name, family, split, depth, fn)
        return fn

    return wrap


def A(value: Any, rule: str = "exact", ref: list | None = None,
      refs: list[list] | None = None, say: Any = None) -> dict:
    """A gold argument: matching rule, gold value, optional ref(s) into earlier results.

    ``say`` is what the oracle sends when it differs from the matching value (a full
    title where the rule only checks a keyword, an expression whose value is checked).
    """
    d: dict[str, Any] = {"rule": rule, "value": value}
    if say is not None:
        d["say"] = say
    if ref is not None:
        d["ref"] = ref
    if refs is not None:
        d["refs"] = refs
    return d


def resolve(path: list, results: dict[str, Any]) -> Any:
    """Follow a ref path through observed results.

    Steps: a key or list index; ``{"where": {k: v}}`` picks the first list item with
    item[k] == v; ``{"min": k}`` picks the item with the smallest item[k]; ``"*"``
    maps the rest of the path over a list.
    """
    cur: Any = results[path[0]]
    for i, step in enumerate(path[1:], 1):
        if step == "*":
            return [resolve(["x", *path[i + 1:]], {"x": item}) for item in cur]
        if isinstance(step, dict) and "where" in step:
            (k, v), = step["where"].items()
            cur = next(item for item in cur if item[k] == v)
        elif isinstance(step, dict) and "min" in step:
            cur = min(cur, key=lambda item: (item[step["min"]], str(item)))
        else:
            cur = cur[step]
    return cur


def number_forms(x: float) -> list[str]:
    """Accepted spellings of a number in an answer.

    The number as observed (shortest form), with thousands separators, and for
    money-like values (at most 2 decimals) also with exactly 2 decimals:
    1234.5 -> ["1,234.5", "1,234.50", "1234.5", "1234.50"].
    """
    x = round(float(x), 6)
    if x == int(x):
        forms = {str(int(x)), f"{int(x):,}"}
    else:
        plain = repr(x)
        intpart, frac = plain.split(".")
        forms = {plain, f"{int(intpart):,}.{frac}" if not intpart.startswith("-") else plain}
    if round(x, 2) == x:
        forms |= {f"{x:.2f}", f"{x:,.2f}"}
    return sorted(forms)


class Builder:
    """Mutable draft of one task; templates call its helpers, :func:`finish` freezes it."""

    def __init__(self, rng: random.Random, pool: str):
        self.rng, self.pool = rng, pool
        self.today = dt.date(2026, 1, 5) + dt.timedelta(days=rng.randrange(360))
        self.state = empty_state(self.today.isoformat())
        self.state["now_utc"] = f"{self.today.isoformat()}T{rng.randrange(6, 20):02d}:{rng.choice(['05', '20', '35', '50'])}"
        self.request = ""
        self.role = "user"
        self.approvals: dict[str, str] = {}
        self.faults: list[dict] = []
        self.nodes: list[dict] = []
        self.status = "done"
        self.facts: list[list[str]] = []
        self.fact_tools: list[str] = []  # canonical tools whose surface name is a required fact
        self.answer = ""
        self.answer_refs: dict[str, list] = {}
        self.extra_tools: list[str] = []
        self._used: set[str] = set()

    # ---- gold graph ----
    def call(self, tool: str, args: dict[str, dict], deps: tuple[str, ...] = (),
             required: bool = True, forbidden: bool = False, group: str | None = None,
             fallback_for: str | None = None) -> str:
        assert tool in TOOLS, tool
        nid = f"n{len(self.nodes)}"
        self.nodes.append({"id": nid, "tool": tool, "args": args, "deps": list(deps),
                           "required": required, "forbidden": forbidden, "group": group,
                           "fallback_for": fallback_for})
        return nid

    def peek(self, tool: str, **args: Any) -> dict:
        """Run a real tool on a copy of the world (gold values come from the tools themselves)."""
        return TOOLS[tool].fn(World(copy.deepcopy(self.state)), **args)

    def say(self, answer: str, **refs: list) -> None:
        self.answer, self.answer_refs = answer, refs

    def fact(self, *alternatives: str) -> None:
        self.facts.append(list(alternatives))

    def fact_number(self, x: float) -> None:
        self.facts.append(number_forms(x))

    # ---- sampling helpers ----
    def pick(self, options: list, unique_key: str | None = None) -> Any:
        """Random choice; with ``unique_key``, never the same value twice in one task."""
        choices = [o for o in options if unique_key is None or f"{unique_key}:{o}" not in self._used]
        value = self.rng.choice(choices)
        if unique_key is not None:
            self._used.add(f"{unique_key}:{value}")
        return value

    def new_number(self, prefix: str, lo: int, hi: int) -> str:
        while True:
            ident = f"{prefix}-{self.rng.randrange(lo, hi)}"
            if f"id:{ident}" not in self._used:
                self._used.add(f"id:{ident}")
                return ident

    def full_name(self) -> str:
        firsts, lasts = name_pool(self.pool)
        while True:
            name = f"{self.rng.choice(firsts)} {self.rng.choice(lasts)}"
            if f"name:{name}" not in self._used:
                self._used.add(f"name:{name}")
                return name

    def person(self) -> dict:
        name = self.full_name()
        contact = {"name": name, "email": email_of(name),
                   "phone": f"+1-555-{self.rng.randrange(1000, 9999)}"}
        self.state["contacts"].append(contact)
        return contact

    def city(self) -> str:
        c = self.pick(city_pool(self.pool), "city")
        self.state["weather"][c] = {"temperature_c": self.rng.randrange(-8, 36),
                                    "condition": self.rng.choice(CONDITIONS),
                                    "humidity_pct": self.rng.randrange(20, 95)}
        return c

    def with_fx(self) -> None:
        self.state["fx"] = fx_rates(self.rng)

    def currency(self, exclude: tuple[str, ...] = ()) -> str:
        return self.pick([c for c in CURRENCIES if c not in exclude], "ccy")

    def order(self, customer: str | None = None, status: str | None = None) -> str:
        oid = self.new_number("ORD", 10000, 99999)
        self.state["orders"][oid] = {
            "status": status or self.pick(ORDER_STATUSES, "status"),
            "customer": customer or self.full_name(),
            "total": round(self.rng.uniform(15, 900), 2),
            "currency": self.rng.choice(["USD", "EUR", "GBP"]),
        }
        return oid

    def file(self, name: str | None = None, content: str | None = None,
             next_id: str | None = None) -> str:
        fid = self.new_number("F", 1000, 9999)
        if name is None:
            name = f"{self.pick(FILE_TOPICS, 'topic')} {self.rng.choice(FILE_KINDS)}"
        if content is None:
            content = f"Code word: {self.pick(CODE_WORDS, 'word')}."
        self.state["files"][fid] = {"name": name, "content": content, "next": next_id}
        return fid

    def flights(self, origin: str, dest: str, day: str, n: int) -> list[dict]:
        prices = self.rng.sample(range(89, 900), n)
        rows = []
        for price in prices:
            f = {"flight_id": self.new_number("FL", 100, 999), "origin": origin,
                 "destination": dest, "date": day, "price": price, "currency": "USD",
                 "depart": f"{self.rng.randrange(6, 22):02d}:{self.rng.choice(['00', '30'])}"}
            rows.append(f)
        self.state["flights"].extend(rows)
        return rows

    def product(self) -> tuple[str, str]:
        name = self.pick(PRODUCTS, "product")
        sku = self.new_number("SKU", 100, 999)
        self.state["products"][sku] = {"name": name, "in_stock": self.rng.randrange(3, 250)}
        return sku, name

    def location(self, city: str) -> None:
        lat, lon, offset = CITIES[city]
        now = dt.datetime.fromisoformat(self.state["now_utc"]) + dt.timedelta(hours=offset)
        self.state["locations"][city] = {
            "location_id": self.new_number("LOC", 1000, 9999), "lat": lat, "lon": lon,
            "utc_offset": f"{offset:+d}:00", "local_time": now.strftime("%Y-%m-%d %H:%M")}

    def add_event(self, day: str | None = None, title: str | None = None) -> dict:
        day = day or (self.today + dt.timedelta(days=self.rng.randrange(-3, 10))).isoformat()
        ev = {"event_id": f"EVT-{1001 + len(self.state['events'])}",
              "title": title or self.pick(EVENT_TITLES, "event"), "date": day,
              "time": f"{self.rng.randrange(8, 18):02d}:{self.rng.choice(['00', '30'])}",
              "attendees": []}
        self.state["events"].append(ev)
        return ev

    # ---- natural-language arguments ----
    def relative_date(self) -> tuple[str, str]:
        """A relative date phrase and its ISO value, e.g. ("next Friday", "2026-05-15")."""
        kind = self.rng.randrange(4)
        if kind == 0:
            phrase, days = self.rng.choice([("today", 0), ("tomorrow", 1),
                                            ("the day after tomorrow", 2)])
        elif kind == 1:
            days = self.rng.randrange(3, 7)
            phrase = f"in {days} days"
        else:
            wd = self.rng.randrange(7)
            days = (wd - self.today.weekday()) % 7 or 7
            phrase = f"next {WEEKDAYS[wd]}" if kind == 2 else f"this coming {WEEKDAYS[wd]}"
        return phrase, (self.today + dt.timedelta(days=days)).isoformat()

    def time_12h(self) -> tuple[str, str]:
        """A 12-hour time phrase and its 24-hour value, e.g. ("3:30 pm", "15:30")."""
        hour, minute = self.rng.randrange(8, 19), self.rng.choice([0, 15, 30, 45])
        if (hour, minute) == (12, 0) and self.rng.random() < 0.5:
            return "noon", "12:00"
        h12 = hour % 12 or 12
        suffix = self.rng.choice(["am", "AM"]) if hour < 12 else self.rng.choice(["pm", "PM"])
        text = f"{h12}" if minute == 0 and self.rng.random() < 0.5 else f"{h12}:{minute:02d}"
        return f"{text} {suffix}", f"{hour:02d}:{minute:02d}"

    # ---- world padding: unrelated entities so lookups are not trivial ----
    def pad(self, contacts: int = 0, cities: int = 0, orders: int = 0, files: int = 0,
            events: int = 0, products: int = 0) -> None:
        for _ in range(contacts):
            self.person()
        for _ in range(cities):
            self.city()
        for _ in range(orders):
            self.order()
        for _ in range(files):
            self.file()
        for _ in range(events):
            self.add_event()
        for _ in range(products):
            self.product()


EVENT_TITLES = ["Team sync", "Design review", "1:1 check-in", "Budget planning", "Customer call",
                "Sprint retro", "Hiring panel", "Vendor demo", "Quarterly review", "Lunch and learn",
                "Security briefing", "Roadmap workshop"]


def check_tool_result(b: Builder, tool: str, **args: Any) -> dict | None:
    """``peek`` that returns None for a tool error (used for not-found scenarios)."""
    try:
        return b.peek(tool, **args)
    except ToolError:
        return None
