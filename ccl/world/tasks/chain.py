"""Sequential chains: each call needs an identifier that only the previous result reveals."""
from __future__ import annotations

from ..state import CODE_WORDS, city_pool
from .base import EVENT_TITLES, A, Builder, template

MESSAGES = [("the quarterly report is ready for review", "report"),
            ("lunch is moved to Thursday", "Thursday"), ("the contract was signed", "contract"),
            ("I will be late for the standup", "late"), ("the invoice has been paid", "invoice"),
            ("the demo is confirmed", "demo")]


def contact_email(b: Builder, approve: bool) -> None:
    """find_contact -> send_email; shared by the chain and approval families."""
    p = b.person()
    b.pad(contacts=2)
    msg, keyword = b.pick(MESSAGES)
    b.request = b.pick([f"Email {p['name']} and tell them {msg}.",
                        f"Send {p['name']} a short email saying {msg}."])
    n0 = b.call("find_contact", {"name": A(p["name"])})
    first = p["name"].split()[0]
    b.call("send_email", {"to": A(p["email"], ref=[n0, "email"]),
                          "subject": A(None, "any", say=keyword.capitalize()),
                          "body": A([keyword], "contains", say=f"Hi {first}, {msg}.")}, deps=(n0,))
    b.approvals["send_email"] = "approve" if approve else "deny"
    if approve:
        b.fact(p["email"])
        b.say("Sent your message to {email}.", email=[n0, "email"])
    else:
        b.status = "blocked"
        b.say("The email to {email} was not sent because you did not approve it.", email=[n0, "email"])


@template("ch_contact_email", "chain", "train", 2)
def ch_contact_email(b: Builder) -> None:
    contact_email(b, approve=True)


@template("ch_order_customer", "chain", "train", 2)
def ch_order_customer(b: Builder) -> None:
    p = b.person()
    oid = b.order(customer=p["name"])
    b.pad(contacts=2, orders=1)
    b.request = b.pick([f"Who placed order {oid}? I need their email address.",
                        f"Get me the email of the customer behind order {oid}."])
    n0 = b.call("get_order", {"order_id": A(oid)})
    b.call("find_contact", {"name": A(p["name"], ref=[n0, "customer"])}, deps=(n0,))
    b.fact(p["email"])
    b.say("Order {oid} was placed by {name} ({email}).", oid=[n0, "order_id"], name=["n1", "name"],
          email=["n1", "email"])


@template("ch_file_read", "chain", "train", 2)
def ch_file_read(b: Builder) -> None:
    fid = b.file()
    name = b.state["files"][fid]["name"]
    b.pad(files=2)
    b.request = b.pick([f"What does my '{name}' file say?",
                        f"Open the file called {name} and tell me what's in it."])
    n0 = b.call("search_files", {"query": A(name, "substring_of")})
    b.call("read_file", {"file_id": A(fid, ref=[n0, "matches", {"where": {"name": name}}, "file_id"])},
           deps=(n0,))
    b.fact(b.state["files"][fid]["content"].split(": ")[1].rstrip("."))
    b.say("The file says: {content}", content=["n1", "content"])


@template("ch_contact_event", "chain", "train", 2)
def ch_contact_event(b: Builder) -> None:
    p = b.person()
    b.pad(contacts=2, events=1)
    title = b.pick(EVENT_TITLES, "event")
    phrase, day = b.relative_date()
    tphrase, hhmm = b.time_12h()
    b.request = b.pick([f"Set up '{title}' with {p['name']} {phrase} at {tphrase}.",
                        f"Schedule a {title} with {p['name']} for {phrase}, {tphrase}."])
    n0 = b.call("find_contact", {"name": A(p["name"])})
    b.call("create_event", {"title": A([title], "contains", say=title), "date": A(day, "date"),
                            "time": A(hhmm, "time"),
                            "attendees": A([p["email"]], "set", refs=[[n0, "email"]])}, deps=(n0,))
    b.fact(b.peek("create_event", title=title, date=day, time=hhmm)["event_id"])
    b.say("Scheduled {eid} with {email}.", eid=["n1", "event_id"], email=[n0, "email"])


def file_chain(b: Builder, depth: int) -> None:
    """A chain of documents, each naming the next: depth = number of read_file calls."""
    ids = [b.new_number("F", 1000, 9999) for _ in range(depth)]
    word = b.pick(CODE_WORDS, "word")
    for i, fid in enumerate(ids):
        last = i == depth - 1
        b.state["files"][fid] = {
            "name": f"relay note {i + 1}",
            "content": f"Final note. Code word: {word}." if last else f"Continue with document {ids[i + 1]}.",
            "next": None if last else ids[i + 1]}
    b.pad(files=1)
    b.request = b.pick([f"Start at document {ids[0]} and follow the 'next' references until the "
                        f"last document, then tell me its code word.",
                        f"Document {ids[0]} points to another document, which may point to another. "
                        f"Read along the chain and report the final code word."])
    prev = b.call("read_file", {"file_id": A(ids[0])})
    for fid in ids[1:]:
        prev = b.call("read_file", {"file_id": A(fid, ref=[prev, "next"])}, deps=(prev,))
    b.fact(word)
    b.say("The last document says: {content}", content=[prev, "content"])


@template("ch_deep2", "chain", "train", 2)
def ch_deep2(b: Builder) -> None:
    file_chain(b, 2)


@template("ch_deep3", "chain", "train", 3)
def ch_deep3(b: Builder) -> None:
    file_chain(b, 3)


@template("ch_deep4", "chain", "ood", 4)
def ch_deep4(b: Builder) -> None:
    file_chain(b, 4)


@template("ch_deep5", "chain", "ood", 5)
def ch_deep5(b: Builder) -> None:
    file_chain(b, 5)


@template("ch_order_fx", "chain", "ood", 2)
def ch_order_fx(b: Builder) -> None:
    b.with_fx()
    oid = b.order()
    src = b.state["orders"][oid]["currency"]
    dst = b.currency(exclude=(src,))
    b.request = f"What is the total of order {oid} in {dst}?"
    n0 = b.call("get_order", {"order_id": A(oid)})
    total = b.state["orders"][oid]["total"]
    b.call("convert_currency", {"amount": A(total, "number", ref=[n0, "total"]),
                                "from_currency": A(src, ref=[n0, "currency"]),
                                "to_currency": A(dst)}, deps=(n0,))
    b.fact_number(b.peek("convert_currency", amount=total, from_currency=src, to_currency=dst)["converted"])
    b.say("Order {oid} totals {c} {t}.", oid=[n0, "order_id"], c=["n1", "converted"], t=["n1", "to_currency"])


def book_cheapest(b: Builder, approve: bool) -> None:
    """search_flights -> book_flight(cheapest); shared by the chain and approval families."""
    o, d = b.city(), b.city()
    phrase, day = b.relative_date()
    rows = b.flights(o, d, day, b.rng.randrange(2, 5))
    best = min(rows, key=lambda f: f["price"])
    b.request = b.pick([f"Book the cheapest flight from {o} to {d} {phrase}.",
                        f"Get me on the least expensive {o} to {d} flight {phrase}."])
    n0 = b.call("search_flights", {"origin": A(o), "destination": A(d), "date": A(day, "date")})
    b.call("book_flight", {"flight_id": A(best["flight_id"],
                                          ref=[n0, "flights", {"min": "price"}, "flight_id"])},
           deps=(n0,))
    b.approvals["book_flight"] = "approve" if approve else "deny"
    if approve:
        b.fact(best["flight_id"])
        b.say("Booked {fid} (booking {bid}).", fid=["n1", "flight_id"], bid=["n1", "booking_id"])
    else:
        b.status = "blocked"
        b.say("I did not book {fid} because you declined the booking.",
              fid=[n0, "flights", {"min": "price"}, "flight_id"])


@template("ch_book_cheapest", "chain", "ood", 2)
def ch_book_cheapest(b: Builder) -> None:
    book_cheapest(b, approve=True)


@template("un_stock_reserve", "chain", "unseen", 2)
def un_stock_reserve(b: Builder) -> None:
    sku, name = b.product()
    b.pad(products=2)
    qty = b.rng.randrange(1, min(20, b.state["products"][sku]["in_stock"]) + 1)
    b.request = b.pick([f"Reserve {qty} units of the {name}.", f"Put {qty} {name} units aside for an order."])
    n0 = b.call("find_product", {"name": A(name)})
    b.call("reserve_stock", {"sku": A(sku, ref=[n0, "sku"]), "quantity": A(qty, "integer")}, deps=(n0,))
    b.fact(b.peek("reserve_stock", sku=sku, quantity=qty)["reservation_id"])
    b.say("Reserved {q} units of the {name} ({rid}).", q=["n1", "quantity"], name=[n0, "name"],
          rid=["n1", "reservation_id"])


@template("un_timezone", "chain", "unseen", 2)
def un_timezone(b: Builder) -> None:
    # Design against the flaw the reference write-up reports for its un_timezone:
    # the answer is the company clock's current local time, which no model can know
    # from world knowledge (the prompt gives only the date), and get_local_time only
    # accepts a location_id that geocode alone reveals, so both gold calls are forced.
    city = b.pick(city_pool(b.pool), "city")
    b.location(city)
    other = b.pick(city_pool(b.pool), "city")
    b.location(other)
    b.request = b.pick([f"What time is it right now at our {city} office?",
                        f"Tell me the current local time in {city}."])
    n0 = b.call("geocode", {"place": A(city)})
    loc = b.state["locations"][city]
    b.call("get_local_time", {"location_id": A(loc["location_id"], ref=[n0, "location_id"])}, deps=(n0,))
    b.fact(loc["local_time"][-5:])
    b.say("It is {t} in {city} (UTC{off}).", t=["n1", "local_time"], city=[n0, "place"],
          off=["n1", "utc_offset"])
