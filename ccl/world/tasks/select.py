"""Tool-selection templates: one call to the right tool among distractors."""
from __future__ import annotations

from .base import A, Builder, template


@template("sel_weather", "select", "train", 1)
def sel_weather(b: Builder) -> None:
    c = b.city()
    b.pad(cities=2)
    b.request = b.pick([f"What's the weather like in {c} right now?",
                        f"Current weather for {c}, please.",
                        f"Is it warm in {c} at the moment? Tell me the conditions there."])
    b.call("get_weather", {"city": A(c)})
    w = b.peek("get_weather", city=c)
    b.fact_number(w["temperature_c"])
    b.fact(w["condition"])
    b.say("In {city} it is {t}°C and {cond}.", city=["n0", "city"], t=["n0", "temperature_c"],
          cond=["n0", "condition"])


@template("sel_fx", "select", "train", 1)
def sel_fx(b: Builder) -> None:
    b.with_fx()
    base, quote = b.currency(), b.currency()
    b.request = b.pick([f"What's the exchange rate from {base} to {quote}?",
                        f"How many {quote} do I get for one {base} today?",
                        f"Give me the current {base}/{quote} rate."])
    b.call("get_fx_rate", {"base": A(base), "quote": A(quote)})
    b.fact_number(b.peek("get_fx_rate", base=base, quote=quote)["rate"])
    b.say("1 {base} = {rate} {quote}.", base=["n0", "base"], rate=["n0", "rate"], quote=["n0", "quote"])


@template("sel_order_status", "select", "train", 1)
def sel_order_status(b: Builder) -> None:
    oid = b.order()
    b.pad(orders=2)
    b.request = b.pick([f"What's the status of order {oid}?",
                        f"Can you check where my order {oid} is?",
                        f"Has order {oid} shipped yet?"])
    b.call("get_order", {"order_id": A(oid)})
    b.fact(b.state["orders"][oid]["status"])
    b.say("Order {oid} is {status}.", oid=["n0", "order_id"], status=["n0", "status"])


@template("sel_calc", "select", "train", 1)
def sel_calc(b: Builder) -> None:
    x, y, z = b.rng.randrange(12, 999), b.rng.randrange(12, 99), b.rng.randrange(2, 500)
    form = b.rng.randrange(3)
    if form == 0:
        b.request, expr = f"What is {x} times {y} plus {z}?", f"{x} * {y} + {z}"
    elif form == 1:
        b.request, expr = f"Compute ({x} + {z}) * {y} for me.", f"({x} + {z}) * {y}"
    else:
        b.request, expr = f"What do I get if I subtract {z} from {x} multiplied by {y}?", f"{x} * {y} - {z}"
    value = b.peek("calculate", expression=expr)["result"]
    b.call("calculate", {"expression": A(value, "expr", say=expr)})
    b.fact_number(value)
    b.say("The result is {r}.", r=["n0", "result"])


@template("sel_contact_email", "select", "train", 1)
def sel_contact_email(b: Builder) -> None:
    p = b.person()
    b.pad(contacts=3)
    b.request = b.pick([f"What's {p['name']}'s email address?",
                        f"I need the email for {p['name']}.",
                        f"Look up how to email {p['name']}."])
    b.call("find_contact", {"name": A(p["name"])})
    b.fact(p["email"])
    b.say("{name}'s email is {email}.", name=["n0", "name"], email=["n0", "email"])


@template("sel_events", "select", "train", 1)
def sel_events(b: Builder) -> None:
    phrase, day = b.relative_date()
    titles = [b.add_event(day)["title"] for _ in range(b.rng.randrange(1, 4))]
    b.pad(events=3)
    b.request = b.pick([f"What's on my calendar {phrase}?",
                        f"Do I have any meetings {phrase}?",
                        f"List my events for {phrase}."])
    b.call("list_events", {"date": A(day, "date")})
    for t in titles:
        b.fact(t)
    b.say("On {date} you have: {titles}.", date=["n0", "date"], titles=["n0", "events", "*", "title"])


@template("sel_cheapest_flight", "select", "ood", 1)
def sel_cheapest_flight(b: Builder) -> None:
    o, d = b.city(), b.city()
    phrase, day = b.relative_date()
    rows = b.flights(o, d, day, b.rng.randrange(3, 5))
    b.flights(d, o, day, 2)
    best = min(rows, key=lambda f: f["price"])
    b.request = f"Find me the cheapest flight from {o} to {d} {phrase}."
    b.call("search_flights", {"origin": A(o), "destination": A(d), "date": A(day, "date")})
    b.fact(best["flight_id"])
    b.fact_number(best["price"])
    cheapest = ["n0", "flights", {"min": "price"}]
    b.say("The cheapest is {fid} at {price} {ccy}, departing {dep}.", fid=[*cheapest, "flight_id"],
          price=[*cheapest, "price"], ccy=[*cheapest, "currency"], dep=[*cheapest, "depart"])


@template("un_stock_check", "select", "unseen", 1)
def un_stock_check(b: Builder) -> None:
    sku, name = b.product()
    b.pad(products=2)
    b.request = b.pick([f"How many units of the {name} do we have in stock?",
                        f"Check warehouse stock for the {name}."])
    b.call("find_product", {"name": A(name)})
    b.fact_number(b.state["products"][sku]["in_stock"])
    b.say("We have {n} units of the {name} ({sku}).", n=["n0", "in_stock"], name=["n0", "name"],
          sku=["n0", "sku"])

