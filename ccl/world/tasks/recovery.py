"""Recovery: transient timeouts (retry), permanent outages (declared fallback), missing entities."""
from __future__ import annotations

from .base import A, Builder, template
from .chain import MESSAGES


def timeout_first_call(b: Builder, tool: str) -> None:
    b.faults.append({"tool": tool, "kind": "timeout", "calls": [1]})


@template("rec_weather_timeout", "recovery", "train", 1)
def rec_weather_timeout(b: Builder) -> None:
    c = b.city()
    b.pad(cities=1)
    b.request = b.pick([f"Check the weather in {c} for me.", f"How is the weather looking in {c}?"])
    b.call("get_weather", {"city": A(c)})
    timeout_first_call(b, "get_weather")
    w = b.peek("get_weather", city=c)
    b.fact_number(w["temperature_c"])
    b.say("It is {t}°C and {w} in {c}.", t=["n0", "temperature_c"], w=["n0", "condition"], c=["n0", "city"])


@template("rec_weather_down", "recovery", "train", 1)
def rec_weather_down(b: Builder) -> None:
    c = b.city()
    b.pad(cities=1)
    b.request = b.pick([f"I need the current temperature in {c}.", f"Tell me the temperature in {c} now."])
    n0 = b.call("get_weather", {"city": A(c)}, required=False)
    b.call("get_weather_backup", {"city": A(c)}, fallback_for=n0)
    b.faults.append({"tool": "get_weather", "kind": "service_unavailable"})
    b.fact_number(b.peek("get_weather_backup", city=c)["temperature_c"])
    b.say("It is {t}°C in {c} (backup provider).", t=["n1", "temperature_c"], c=["n1", "city"])


@template("rec_order_missing", "recovery", "train", 1)
def rec_order_missing(b: Builder) -> None:
    b.pad(orders=2)
    oid = b.new_number("ORD", 10000, 99999)  # never added to the world
    b.request = b.pick([f"Where is my order {oid}?", f"Look up order {oid} and tell me its status."])
    b.call("get_order", {"order_id": A(oid)})
    b.status = "failed"
    b.fact(oid)
    b.say(f"I could not find order {oid}; please check the order number.")


@template("rec_order_timeout_chain", "recovery", "ood", 2)
def rec_order_timeout_chain(b: Builder) -> None:
    p = b.person()
    oid = b.order(customer=p["name"])
    b.pad(contacts=1)
    b.request = f"Find the phone number of whoever placed order {oid}."
    n0 = b.call("get_order", {"order_id": A(oid)})
    timeout_first_call(b, "get_order")
    b.call("find_contact", {"name": A(p["name"], ref=[n0, "customer"])}, deps=(n0,))
    b.fact(p["phone"])
    b.say("{name} placed it; their phone is {phone}.", name=["n1", "name"], phone=["n1", "phone"])


@template("rec_contact_missing_email", "recovery", "ood", 1)
def rec_contact_missing_email(b: Builder) -> None:
    b.pad(contacts=2)
    name = b.full_name()  # not in the address book
    msg, _ = b.pick(MESSAGES)
    b.request = f"Email {name} to say {msg}."
    b.call("find_contact", {"name": A(name)})
    b.status = "failed"
    b.fact(name)
    b.say(f"I could not find {name} in the address book, so no email was sent.")


@template("rec_fx_timeout", "recovery", "ood", 1)
def rec_fx_timeout(b: Builder) -> None:
    b.with_fx()
    base, quote = b.currency(), b.currency()
    b.request = f"Quick one: what's {base} to {quote} trading at?"
    b.call("get_fx_rate", {"base": A(base), "quote": A(quote)})
    timeout_first_call(b, "get_fx_rate")
    b.fact_number(b.peek("get_fx_rate", base=base, quote=quote)["rate"])
    b.say("1 {b} = {r} {q}.", b=["n0", "base"], r=["n0", "rate"], q=["n0", "quote"])


