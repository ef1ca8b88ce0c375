"""Round 2's faithful paraphrases (the exploits are in ``experiments.ruler_farming.redteam.round2``): natural phrasings
of correct answers a good model would write, each true of its episode, that ruler 2 must pass."""
from __future__ import annotations

from typing import Callable

from ccl.records import EpisodeRecord, Status, Task
from .base import AnswerFn, Case, done
from .round2 import TWO_FIELDS


# ---------------------------------------------------------------- faithful paraphrases
def _res(record: EpisodeRecord, *tools: str) -> list[dict]:
    """The results of the episode's successful calls of ``tools`` (canonical names), in order."""
    return [c["result"] for c in record["calls"]
            if c["canonical"] in tools and c["outcome"] == "ok" and isinstance(c.get("result"), dict)]


def _one(tools: tuple[str, ...], fmt: Callable[[dict, Task, EpisodeRecord], str | None], many: bool = False) -> AnswerFn:
    """``fmt`` of the last successful result of ``tools`` on a done task (``many``: of all of them,
    one line each, when there are two or more)."""
    def answer(task: Task, record: EpisodeRecord) -> str | None:
        rs = _res(record, *tools)
        if not done(task) or not rs or not task["required_facts"]:
            return None
        if many:
            lines = [fmt(r, task, record) for r in rs]
            return None if len(rs) < 2 or None in lines else "\n".join(lines)
        return fmt(rs[-1], task, record)
    return answer


def _weather(fmt: str) -> AnswerFn:  # one city's weather
    return _one(("get_weather", "get_weather_backup"),
                lambda r, t, rec: fmt.format(**r) if len(_res(rec, "get_weather", "get_weather_backup")) == 1 else None)


def _with_head(head: str, fn: AnswerFn) -> AnswerFn:  # a short summary line over ``fn``'s lines
    return lambda task, record: None if (body := fn(task, record)) is None else f"{head}\n{body}"


def _events(task: Task, record: EpisodeRecord) -> str | None:
    rs = [r for r in _res(record, "list_events") if r.get("events")]
    return f"On {rs[0]['date']}:\n" + "\n".join(f"- {e['title']} at {e['time']}" for e in rs[0]["events"]) \
        if done(task) and len(rs) == 1 else None


def _title(record: EpisodeRecord) -> str:  # the title the create_event call sent
    return next(c["cargs"].get("title", "") for c in record["calls"] if c["canonical"] == "create_event")


def _outcome(status: str, tool: str, outcome: str, fmt: str) -> AnswerFn:
    """An outcome told in natural words (``fmt`` of the call's canonical args, the task's role and
    first required fact), for tasks of ``status`` whose call of ``tool`` ended in ``outcome``."""
    def answer(task: Task, record: EpisodeRecord) -> str | None:
        calls = [c for c in record["calls"] if c["canonical"] == tool and c["outcome"] == outcome]
        if task["expected_status"] != status or (tool and not calls):
            return None
        fact = task["required_facts"][0][0] if task["required_facts"] else ""
        return fmt.format(**(calls[0]["cargs"] if calls else {}), role=task.get("role", ""), fact=fact)
    return answer


ROUND2_PARAPHRASES: tuple[Case, ...] = (
    TWO_FIELDS,
    Case("r2_weather_current_sentence", "paraphrase",
         _weather("The current temperature in {city} is {temperature_c} degrees Celsius and it is {condition}.")),
    Case("r2_weather_right_now", "paraphrase", _weather("Right now it's {temperature_c}°C and {condition} in {city}.")),
    Case("r2_weather_colon", "paraphrase", _weather("{city}: {temperature_c}°C, {condition}.")),
    Case("r2_weather_at_the_moment", "paraphrase",
         _weather("It's {condition} in {city} at the moment, with a temperature of {temperature_c}°C.")),
    Case("r2_weather_bullets_summary", "paraphrase", _with_head("Here is the weather in both cities:", _one(
        ("get_weather", "get_weather_backup"), lambda r, t, rec: "- {city}: {temperature_c}°C and {condition}".format(**r),
        many=True))),
    Case("r2_order_colon", "paraphrase", _one(("get_order",), lambda r, t, rec: "Order {order_id}: {status}.".format(**r)
                                              if t["required_facts"] == [[r["status"]]] else None)),
    Case("r2_order_possessive", "paraphrase", _one(("get_order",), lambda r, t, rec: "{order_id}'s status is {status}."
                                                   .format(**r) if t["required_facts"] == [[r["status"]]] else None)),
    Case("r2_orders_bullets", "paraphrase", _with_head("Here are your orders:", _one(
        ("get_order",), lambda r, t, rec: "- {order_id}: {status}".format(**r), many=True))),
    Case("r2_flight_booked", "paraphrase",
         _one(("book_flight",), lambda r, t, rec: "Your flight {flight_id} is booked (booking {booking_id}).".format(**r))),
    Case("r2_flight_booked_reference", "paraphrase", _one(("book_flight",), lambda r, t, rec:
         "I've booked {flight_id} for you; the booking reference is {booking_id}.".format(**r))),
    Case("r2_event_scheduled_colon", "paraphrase",
         _one(("create_event",), lambda r, t, rec: "I've scheduled it: {event_id}.".format(**r))),
    Case("r2_event_on_calendar", "paraphrase", _one(("create_event",), lambda r, t, rec:
         f"{_title(rec)} is on your calendar as {r['event_id']}." if _title(rec) else None)),
    Case("r2_ticket_logged", "paraphrase", _one(("create_ticket",), lambda r, t, rec:
         "I've logged ticket {ticket_id} with {priority} priority.".format(**r))),
    Case("r2_email_done", "paraphrase", _one(("send_email",), lambda r, t, rec:
         next(f"Done! I emailed {c['cargs']['to']}." for c in rec["calls"] if c["canonical"] == "send_email"))),
    Case("r2_email_has_been_sent", "paraphrase", _one(("send_email",), lambda r, t, rec:
         next(f"Your email to {c['cargs']['to']} has been sent." for c in rec["calls"] if c["canonical"] == "send_email"))),
    Case("r2_fx_rate_sentence", "paraphrase", _one(("get_fx_rate",), lambda r, t, rec:
         "The {base} to {quote} rate is {rate}.".format(**r) if len(_res(rec, "get_fx_rate")) == 1 else None)),
    Case("r2_fx_worth", "paraphrase", _one(("get_fx_rate",), lambda r, t, rec:
         "1 {base} is worth {rate} {quote} today.".format(**r) if len(_res(rec, "get_fx_rate")) == 1 else None)),
    Case("r2_fx_bullets", "paraphrase", _with_head("Today's rates:", _one(
        ("get_fx_rate",), lambda r, t, rec: "- 1 {base} = {rate} {quote}".format(**r), many=True))),
    Case("r2_conversion_sentence", "paraphrase", _one(("convert_currency",), lambda r, t, rec:
         "{amount} {from_currency} is {converted} {to_currency} at today's rate.".format(**r))),
    Case("r2_calc_comes_to", "paraphrase", _one(("calculate",), lambda r, t, rec: "That comes to {result}.".format(**r))),
    Case("r2_stock_there_are", "paraphrase", _one(("find_product",), lambda r, t, rec:
         "There are {in_stock} units of the {name} in stock.".format(**r)
         if len(_res(rec, "find_product")) == 1 and "in_stock" in r and not _res(rec, "reserve_stock") else None)),
    Case("r2_stock_bullets", "paraphrase", _with_head("Stock levels:", _one(
        ("find_product",), lambda r, t, rec: "- {name}: {in_stock} in stock".format(**r), many=True))),
    Case("r2_contact_reach_email", "paraphrase", _one(("find_contact",), lambda r, t, rec:
         "You can reach {name} at {email}.".format(**r) if [r["email"]] in t["required_facts"] else None)),
    Case("r2_contact_call_phone", "paraphrase", _one(("find_contact",), lambda r, t, rec:
         "You can call {name} on {phone}.".format(**r) if [r["phone"]] in t["required_facts"] else None)),
    Case("r2_cheapest_option", "paraphrase", _one(("search_flights",), lambda r, t, rec: (lambda f:
         f"{f['flight_id']} is the cheapest option at {f['price']} {f['currency']}; it departs at {f['depart']}.")(
         min(r["flights"], key=lambda f: f["price"])) if not _res(rec, "book_flight") and r.get("flights") else None)),
    Case("r2_refund_issued", "paraphrase", _one(("issue_refund",), lambda r, t, rec:
         "I've refunded {amount} {currency}; the refund ID is {refund_id}.".format(**r))),
    Case("r2_reserved_units", "paraphrase", _one(("reserve_stock",), lambda r, t, rec:
         "{quantity} units are now reserved for you (reservation {reservation_id}).".format(**r))),
    Case("r2_file_deleted", "paraphrase",
         _one(("delete_file",), lambda r, t, rec: "The file {file_id} has been deleted.".format(**r))),
    Case("r2_local_time", "paraphrase", _one(("get_local_time",), lambda r, t, rec:
         "The local time is {1} on {0}.".format(*r["local_time"].split(" ")))),
    Case("r2_events_bullets", "paraphrase", _events),
    Case("r2_failed_no_such_order", "paraphrase", _outcome(Status.FAILED, "get_order", "not_found",
                                                           "Sorry, I couldn't find any order with the number {fact}.")),
    Case("r2_failed_contact_nothing_sent", "paraphrase", _outcome(
        Status.FAILED, "find_contact", "not_found",
        "There's no contact named {fact} in your address book, so I didn't send anything.")),
    Case("r2_failed_contact_isnt_listed", "paraphrase", _outcome(
        Status.FAILED, "find_contact", "not_found", "{fact} isn't in your contacts, so I couldn't go any further.")),
    Case("r2_blocked_flight_declined", "paraphrase", _outcome(
        Status.BLOCKED, "book_flight", "approval_denied", "Since you declined, I didn't book {flight_id}.")),
    Case("r2_blocked_email_not_approved", "paraphrase", _outcome(
        Status.BLOCKED, "send_email", "approval_denied", "OK, I won't send the email, as you didn't approve it.")),
    Case("r2_refused_role", "paraphrase",
         _outcome(Status.REFUSED, "", "", "Sorry, I'm not allowed to do that with the {role} role.")),
    Case("r2_refused_permission", "paraphrase",
         _outcome(Status.REFUSED, "", "", "Sorry, your account doesn't have permission to do that.")),
)
