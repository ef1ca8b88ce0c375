"""What a task's own world says about its required facts (for the strict validator).

A task stores each required fact as a list of accepted spellings. To judge whether an
answer states a fact *cleanly*, the validator also needs to know what else the answer
could have said instead. Everything here is derived from the stored task (world, gold
graph, catalogue), so committed tasks and transcripts can be re-judged without
regenerating either:

- **competing values**: values of the same kind that the answer could be confused with
  and that are not themselves required facts. Text facts from a closed vocabulary (order
  statuses, weather conditions, code words) compete with the rest of that vocabulary;
  identifiers (``ABC-123``) with every other identifier of the same prefix in the world;
  e-mail addresses and phone numbers with the other contacts'; event titles with the
  other events'; clock times with the other locations' local times; a tool's name with
  the other tools of the catalogue. Numbers compete with the same field of the other
  entities of the world (temperatures of the other cities, prices of the other flights,
  stock of the other products) and an exchange rate with its inverse.
- **parallel entities**: in a task with one parallel group of k calls and k required
  facts, fact i is the value of call i's entity (the argument whose gold values differ
  across the group: the city, order, quote currency, product), and the answer must
  state each value beside its own entity.
- **currencies**: a converted amount is in the conversion's target currency, a rate in
  its quote currency, a flight price in the flight's currency.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..world.catalogue import Catalogue
from ..world.state import CODE_WORDS, CONDITIONS, CURRENCIES, ORDER_STATUSES
from .answers import fact_value, norm

ID_RE = re.compile(r"\b([A-Z]{1,4})-\d{2,6}\b")  # identifiers such as ORD-12345 (also the validator's)
VOCABULARIES = (ORDER_STATUSES, CONDITIONS, CODE_WORDS)
# prefixed dollar signs, and the single nouns a currency is called by
_SYMBOLS = {"$": {"USD"}, "us$": {"USD"}, "c$": {"CAD"}, "ca$": {"CAD"}, "a$": {"AUD"}, "au$": {"AUD"}}
_NOUNS = {"dollar": {"USD", "CAD", "AUD"}, "buck": {"USD"}, "euro": {"EUR"}, "pound": {"GBP"},
          "sterling": {"GBP"}, "yen": {"JPY"}, "franc": {"CHF"}, "rupee": {"INR"}, "won": {"KRW"},
          "krona": {"SEK"}, "kronor": {"SEK"}, "krone": {"NOK"}, "kroner": {"NOK"}, "zloty": {"PLN"},
          "zlotys": {"PLN"}, "zł": {"PLN"}}


@dataclass(frozen=True)
class Fact:
    spellings: list[str]
    value: float | None  # numeric facts are compared by value
    competitors: list[str | float] = field(default_factory=list)
    entity: list[str] = field(default_factory=list)  # spellings of its parallel entity, if any
    currency: str | None = None  # ISO code the amount or rate is in, if it is money
    exclusive: bool = False  # a computed number: every other number not in the request competes


def _fx(world: dict, base: str, quote: str) -> float | None:
    rates = world.get("fx", {})
    if base in rates and quote in rates:
        return round(rates[quote] / rates[base], 4)
    return None


def _numeric_competitors(task: dict, v: float) -> tuple[list[float], str | None]:
    w = task["world"]
    families = [[x["temperature_c"] for x in w.get("weather", {}).values()],
                [f["price"] for f in w.get("flights", [])],
                [p["in_stock"] for p in w.get("products", {}).values()]]
    out: list[float] = []
    for values in families:
        if v in values:
            out += [x for x in values if x != v]
    currency = next((f["currency"] for f in w.get("flights", []) if f["price"] == v), None)
    for n in task["gold"]["nodes"]:
        if n["tool"] == "get_fx_rate":
            base, quote = n["args"]["base"]["value"], n["args"]["quote"]["value"]
            if _fx(w, base, quote) == v:
                inverse = _fx(w, quote, base)
                out += [inverse] if inverse is not None and inverse != v else []
                currency = quote
        if n["tool"] == "convert_currency":
            src, dst = n["args"]["from_currency"]["value"], n["args"]["to_currency"]["value"]
            rate = _fx(w, src, dst)
            if rate is not None and round(n["args"]["amount"]["value"] * rate, 2) == v:
                currency = dst  # the conversion's result (convert_currency rounds the rate first)
    return out, currency


def _text_competitors(task: dict, s: str) -> list[str]:
    w = task["world"]
    key = norm(s)
    for vocab in VOCABULARIES:
        if key in vocab:
            return list(vocab)
    if (m := ID_RE.fullmatch(s)):
        return sorted(set(x.group(0) for x in ID_RE.finditer(str(w)) if x.group(1) == m.group(1)))
    contacts = w.get("contacts", [])
    for fieldname in ("email", "phone"):
        if key in {norm(c[fieldname]) for c in contacts}:
            return [c[fieldname] for c in contacts]
    events = w.get("events", [])
    days = {e["date"] for e in events if norm(e["title"]) == key}
    if days:  # the events of other days (a listing of the asked day holds them all)
        return [e["title"] for e in events if e["date"] not in days]
    times = [loc["local_time"][-5:] for loc in w.get("locations", {}).values()]
    if s in times:
        return times
    cat = Catalogue(task)
    surfaces = [cat.surface(t) for t in task["catalogue"]]
    if s in surfaces:
        return surfaces
    return []


def _parallel_entities(task: dict) -> list[list[str]] | None:
    """Per required fact, the spellings of its parallel entity (None if the task has none)."""
    groups: dict[str, list[dict]] = {}
    for n in task["gold"]["nodes"]:
        if n["group"]:
            groups.setdefault(n["group"], []).append(n)
    if len(groups) != 1:
        return None
    (members,) = groups.values()
    if len(members) != len(task["required_facts"]) or len(members) < 2:
        return None
    varying = [k for k in members[0]["args"]
               if len({str(m["args"].get(k, {}).get("value")) for m in members}) == len(members)]
    if len(varying) != 1:
        return None
    labels = []
    for m in members:
        value = str(m["args"][varying[0]]["value"])
        spellings = [value, value + "s"]  # plurals: "68 keyboards"
        if value in CURRENCIES:
            name = CURRENCIES[value][0]
            noun = name.split()[-1]
            spellings += [name, name + "s"] + ([noun, noun + "s"] if _NOUNS.get(noun) == {value} else [])
        labels.append(spellings)
    return labels


def task_facts(task: dict) -> list[Fact]:
    """The task's required facts with their competing values, entities and currencies."""
    entities = _parallel_entities(task)
    all_keys = {norm(s) for f in task["required_facts"] for s in f}
    all_values = {fact_value(f) for f in task["required_facts"]} - {None}
    computed = any(n["tool"] == "calculate" for n in task["gold"]["nodes"])
    facts = []
    for i, spellings in enumerate(task["required_facts"]):
        value = fact_value(spellings)
        if value is not None:
            numeric, currency = _numeric_competitors(task, value)
            competitors: list[str | float] = [x for x in numeric if x not in all_values]
        else:
            currency = None
            competitors = [x for x in _text_competitors(task, spellings[0]) if norm(x) not in all_keys]
        facts.append(Fact(spellings, value, sorted(set(competitors), key=str),
                          entities[i] if entities else [], currency, exclusive=computed and value is not None))
    return facts


def currency_codes(token: str) -> set[str]:
    """Which ISO codes a currency mention (code, symbol, prefixed dollar sign, name or noun,
    singular or plural) can stand for; empty when it names no currency."""
    t = norm(token)
    if t in _SYMBOLS:
        return set(_SYMBOLS[t])
    out = set()
    for code, (name, symbol, _) in CURRENCIES.items():
        if t in (code.casefold(), name.casefold(), name.casefold() + "s") or (symbol and t == symbol.casefold()):
            out.add(code)
    return out or set(_NOUNS.get(t, _NOUNS.get(t[:-1], set()) if t.endswith("s") else set()))
