"""Parallel fan-out (and fan-in): independent calls belong in one turn."""
from __future__ import annotations

from .base import EVENT_TITLES, A, Builder, template


@template("par_weather", "parallel", "train", 1)
def par_weather(b: Builder) -> None:
    cities = [b.city() for _ in range(b.rng.randrange(2, 4))]
    b.pad(cities=1)
    listed = ", ".join(cities[:-1]) + f" and {cities[-1]}"
    b.request = b.pick([f"Compare the current weather in {listed}.",
                        f"What's the weather in {listed} right now?"])
    parts = []
    refs: dict[str, list] = {}
    for i, c in enumerate(cities):
        nid = b.call("get_weather", {"city": A(c)}, group="g0")
        w = b.peek("get_weather", city=c)
        b.fact_number(w["temperature_c"])
        parts.append(f"{{c{i}}}: {{t{i}}}°C, {{w{i}}}")
        refs |= {f"c{i}": [nid, "city"], f"t{i}": [nid, "temperature_c"], f"w{i}": [nid, "condition"]}
    b.say("; ".join(parts) + ".", **refs)


@template("par_orders", "parallel", "train", 1)
def par_orders(b: Builder) -> None:
    oids = [b.order() for _ in range(b.rng.randrange(2, 4))]  # statuses differ within a task
    b.pad(orders=1)
    listed = ", ".join(oids[:-1]) + f" and {oids[-1]}"
    b.request = b.pick([f"What's the status of orders {listed}?",
                        f"Check orders {listed} for me."])
    parts, refs = [], {}
    for i, oid in enumerate(oids):
        nid = b.call("get_order", {"order_id": A(oid)}, group="g0")
        b.fact(b.state["orders"][oid]["status"])
        parts.append(f"{{o{i}}} is {{s{i}}}")
        refs |= {f"o{i}": [nid, "order_id"], f"s{i}": [nid, "status"]}
    b.say("; ".join(parts) + ".", **refs)


@template("par_contacts_event", "parallel", "ood", 2)
def par_contacts_event(b: Builder) -> None:
    p1, p2 = b.person(), b.person()
    b.pad(contacts=1)
    title = b.pick(EVENT_TITLES, "event")
    phrase, day = b.relative_date()
    tphrase, hhmm = b.time_12h()
    b.request = (f"Invite {p1['name']} and {p2['name']} to a '{title}' {phrase} at {tphrase}.")
    n0 = b.call("find_contact", {"name": A(p1["name"])}, group="g0")
    n1 = b.call("find_contact", {"name": A(p2["name"])}, group="g0")
    b.call("create_event", {"title": A([title], "contains", say=title), "date": A(day, "date"),
                            "time": A(hhmm, "time"),
                            "attendees": A([p1["email"], p2["email"]], "set",
                                           refs=[[n0, "email"], [n1, "email"]])}, deps=(n0, n1))
    b.fact(b.peek("create_event", title=title, date=day, time=hhmm)["event_id"])
    b.say("Created {eid} and invited {e0} and {e1}.", eid=["n2", "event_id"], e0=[n0, "email"],
          e1=[n1, "email"])


@template("par_fx", "parallel", "ood", 1)
def par_fx(b: Builder) -> None:
    b.with_fx()
    base = b.currency()
    quotes = [b.currency() for _ in range(3)]
    b.request = f"What are today's rates from {base} to {quotes[0]}, {quotes[1]} and {quotes[2]}?"
    parts, refs = [], {}
    for i, q in enumerate(quotes):
        nid = b.call("get_fx_rate", {"base": A(base), "quote": A(q)}, group="g0")
        b.fact_number(b.peek("get_fx_rate", base=base, quote=q)["rate"])
        parts.append(f"{{q{i}}} {{r{i}}}")
        refs |= {f"q{i}": [nid, "quote"], f"r{i}": [nid, "rate"]}
    b.say(f"1 {base} buys: " + ", ".join(parts) + ".", **refs)


@template("un_stock_parallel", "parallel", "unseen", 1)
def un_stock_parallel(b: Builder) -> None:
    items = [b.product() for _ in range(2)]
    stock = [b.state["products"][sku] for sku, _ in items]
    if stock[0]["in_stock"] == stock[1]["in_stock"]:
        stock[1]["in_stock"] += 1  # distinct counts keep the two facts unambiguous
    b.pad(products=1)
    b.request = f"How many {items[0][1]} and {items[1][1]} units are in stock?"
    parts, refs = [], {}
    for i, (sku, name) in enumerate(items):
        nid = b.call("find_product", {"name": A(name)}, group="g0")
        b.fact_number(b.state["products"][sku]["in_stock"])
        parts.append(f"{{p{i}}}: {{n{i}}}")
        refs |= {f"p{i}": [nid, "name"], f"n{i}": [nid, "in_stock"]}
    b.say("; ".join(parts) + ".", **refs)
