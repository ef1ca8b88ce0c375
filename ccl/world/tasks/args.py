"""Argument-construction templates: relative dates, 12h times, currency names, urgency."""
from __future__ import annotations

from ..state import CURRENCIES
from .base import A, Builder, template

TICKET_TITLES = ["VPN keeps disconnecting", "Printer on floor 3 is jammed", "Laptop battery swelling",
                 "Cannot access the shared drive", "Email sync broken on phone",
                 "Projector in room B flickers", "Password reset loop", "Wi-Fi drops in the lab"]
URGENCY = {
    "low": ["no rush", "low priority, whenever someone has time"],
    "normal": ["normal priority", "regular priority is fine"],
    "high": ["high priority please", "it's important"],
    "urgent": ["this is urgent", "critical, ASAP"],
}


def _keyword(title: str) -> str:
    return max(title.split(), key=len).strip(".,")


@template("args_ticket", "args", "train", 1)
def args_ticket(b: Builder) -> None:
    title = b.pick(TICKET_TITLES)
    priority = b.pick(list(URGENCY))
    urgency = b.pick(URGENCY[priority])
    b.request = b.pick([f"Please open a ticket titled '{title}' ({urgency}).",
                        f"File a support ticket: \"{title}\". {urgency.capitalize()}."])
    b.call("create_ticket", {"title": A([_keyword(title)], "contains", say=title), "priority": A(priority)})
    b.fact(b.peek("create_ticket", title=title, priority=priority)["ticket_id"])
    b.say("Opened ticket {tid} with {p} priority.", tid=["n0", "ticket_id"], p=["n0", "priority"])


@template("args_event_solo", "args", "train", 1)
def args_event_solo(b: Builder) -> None:
    from .base import EVENT_TITLES
    title = b.pick(EVENT_TITLES, "event")
    phrase, day = b.relative_date()
    tphrase, hhmm = b.time_12h()
    b.pad(events=2)
    b.request = b.pick([f"Put '{title}' on my calendar {phrase} at {tphrase}.",
                        f"Add an event called {title} {phrase}, starting {tphrase}."])
    b.call("create_event", {"title": A([title], "contains", say=title), "date": A(day, "date"),
                            "time": A(hhmm, "time")})
    b.fact(b.peek("create_event", title=title, date=day, time=hhmm)["event_id"])
    b.say("Added it as {eid}.", eid=["n0", "event_id"])


@template("args_fx_symbols", "args", "ood", 1)
def args_fx_symbols(b: Builder) -> None:
    b.with_fx()
    src = b.pick([c for c, (_, sym, _) in CURRENCIES.items() if sym], "ccy")
    dst = b.currency()
    amount = b.rng.randrange(20, 5000)
    src_name, sym, _ = CURRENCIES[src]
    dst_name = CURRENCIES[dst][0]
    b.request = b.pick([f"How much is {sym}{amount} in {dst_name}s?",
                        f"Convert {amount} {src_name}s into {dst_name}s."])
    b.call("convert_currency", {"amount": A(amount, "number"), "from_currency": A(src),
                                "to_currency": A(dst)})
    b.fact_number(b.peek("convert_currency", amount=amount, from_currency=src,
                         to_currency=dst)["converted"])
    b.say("{a} {f} is {c} {t}.", a=["n0", "amount"], f=["n0", "from_currency"],
          c=["n0", "converted"], t=["n0", "to_currency"])


SYMPTOMS = [("printer", "keeps eating paper"), ("laptop", "won't connect to Wi-Fi"),
            ("monitor", "flickers every few minutes"), ("keyboard", "drops keystrokes"),
            ("headset", "has no microphone audio"), ("phone", "can't reach the mail server")]
IMPACT = {
    "low": "No rush at all, it's cosmetic",
    "normal": "It's annoying but I can work around it",
    "high": "It's slowing the whole team down",
    "urgent": "Nothing works and customers are affected right now",
}


@template("args_ticket_from_symptom", "args", "ood", 1)
def args_ticket_from_symptom(b: Builder) -> None:
    device, symptom = b.pick(SYMPTOMS)
    priority = b.pick(list(IMPACT))
    b.request = (f"My {device} {symptom}. {IMPACT[priority]}. Can you log a ticket for IT "
                 f"with the right priority (low, normal, high or urgent)?")
    title = f"{device.capitalize()} {symptom}"
    b.call("create_ticket", {"title": A([device], "contains", say=title), "priority": A(priority)})
    b.fact(b.peek("create_ticket", title=title, priority=priority)["ticket_id"])
    b.say("Logged ticket {tid} ({p}).", tid=["n0", "ticket_id"], p=["n0", "priority"])
