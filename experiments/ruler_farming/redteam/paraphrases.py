"""Faithful paraphrases of the oracle's answer: true of the episode, every required fact stated and
bound to its entity, in words a careful assistant might use. A ruler fit to be a reward passes each
of them wherever it applies (issue 37's false negatives of ruler 1, one case or more per class).

Each is written from the episode itself (the oracle's answer and the tool results it read), so it
stays true on every task it applies to; it returns None elsewhere.
"""
from __future__ import annotations

import re

from ccl.records import EpisodeRecord, Status, Task
from .base import AnswerFn, Case, done, last_results, number_words, replace_number, suffix, with_number


def _spelled(text: str, m: re.Match) -> str | None:
    value = m.group(0)
    if ":" in (text[m.start() - 1:m.start()] + text[m.end():m.end() + 1]):  # a clock time's hours or minutes
        return None
    return replace_number(text, m, number_words(int(value))) if value.isdigit() and int(value) < 100 else None


def _degrees_in_words(text: str, m: re.Match) -> str | None:
    c = re.search(r"(?<![\d-])(\d+)°C", text)
    return text[:c.start()] + f"{number_words(int(c.group(1)))} degrees" + text[c.end():] \
        if c and int(c.group(1)) < 100 else None


def _dual_units(fmt: str) -> AnswerFn:
    """Every Celsius temperature followed by its Fahrenheit value, rounded (``fmt`` of C and F)."""
    def rewrite(text: str, m: re.Match) -> str | None:
        if not re.search(r"-?\d+°C", text):
            return None
        return re.sub(r"(-?\d+)°C", lambda c: fmt.format(c.group(1), round(int(c.group(1)) * 9 / 5 + 32)), text)
    return with_number(rewrite)


def _below_zero(text: str, m: re.Match) -> str | None:
    c = re.search(r"-(\d+)°C", text)
    return text[:c.start()] + f"{c.group(1)} degrees below zero" + text[c.end():] if c else None


def _twelve_hour(task: Task, record: EpisodeRecord) -> str | None:
    text = record["final"] or ""
    m = re.search(r"\b([01]\d|2[0-3]):([0-5]\d)\b", text)
    if not m or not done(task):
        return None
    h, mm = int(m.group(1)), m.group(2)
    return text[:m.start()] + f"{(h - 1) % 12 + 1}:{mm} {'PM' if h >= 12 else 'AM'}" + text[m.end():]


def _respectively(task: Task, record: EpisodeRecord) -> str | None:
    m = re.fullmatch(r"(\S+) is ([\w ]+); (\S+) is ([\w ]+)\.", record["final"] or "")
    return f"{m[1]} and {m[3]} are {m[2]} and {m[4]}, respectively." if m else None


# a parallel lookup's results: entity key, value key, unit, the table's headers, a sentence with
# ``respectively`` ({names}, {values}, {base}: the currency a rate is of)
_PARALLEL = (("name", "in_stock", "", "Product", "In stock", "{names} have {values} units in stock, respectively."),
             ("quote", "rate", "", "Currency", "Rate for 1 {base}", "1 {base} buys {values} {names}, respectively."),
             ("city", "temperature_c", "°C", "City", "Temperature", "{names} are at {values}, respectively."),
             ("order_id", "status", "", "Order", "Status", "{names} are {values}, respectively."))


def _pairs(task: Task, record: EpisodeRecord) -> tuple[tuple[str, ...], list[tuple[str, str]]] | None:
    """A parallel lookup's (entity, value) pairs and their words (headers, sentence), the base
    currency filled in (stock per product, rate per currency, temperature per city, status per
    order); None unless two or more results of one kind."""
    rs = [r for r in last_results(record) if isinstance(r, dict)]
    if not done(task) or len(rs) < 2:
        return None
    for name, value, unit, *words in _PARALLEL:
        if all(name in r and value in r for r in rs):
            base = str(rs[0].get("base"))
            return tuple(w.replace("{base}", base) for w in words), [(str(r[name]), f"{r[value]}{unit}") for r in rs]
    return None


def _listed(items: list[str]) -> str:
    return f"{', '.join(items[:-1])} and {items[-1]}"


def _respectively_pairs(task: Task, record: EpisodeRecord) -> str | None:
    found = _pairs(task, record)
    if found is None:
        return None
    (_, _, sentence), pairs = found
    return sentence.format(names=_listed([p[0] for p in pairs]), values=_listed([p[1] for p in pairs]))


def _table(transposed: bool) -> AnswerFn:
    """The pairs as a markdown table: one row per entity, or a row of entities over a row of values."""
    def answer(task: Task, record: EpisodeRecord) -> str | None:
        found = _pairs(task, record)
        if found is None:
            return None
        (head_name, head_value, _), pairs = found
        if transposed:
            return "\n".join([f"| {head_name} | " + " | ".join(p[0] for p in pairs) + " |",
                              "|" + " --- |" * (len(pairs) + 1), f"| {head_value} | " + " | ".join(p[1] for p in pairs) + " |"])
        return "\n".join([f"| {head_name} | {head_value} |", "| --- | --- |"] + [f"| {a} | {b} |" for a, b in pairs])
    return answer


def _advice(task: Task, record: EpisodeRecord) -> str | None:
    """One temperature, then advice that follows from it."""
    text = record["final"] or ""
    temps = re.findall(r"(-?\d+)°C", text)
    if not done(task) or len(temps) != 1 or not text.endswith("."):
        return None
    return text[:-1] + (", so you might want a jacket." if int(temps[0]) < 15 else ", so you might want to dress lightly.")


def _calculator_working(task: Task, record: EpisodeRecord) -> str | None:
    rs = [r for r in last_results(record) if isinstance(r, dict) and "expression" in r]
    return f"{rs[0]['expression']} = {rs[0]['result']}." if done(task) and len(rs) == 1 else None


def _next_cheapest(task: Task, record: EpisodeRecord) -> str | None:
    rs = [r for r in last_results(record) if isinstance(r, dict) and "flights" in r]
    text = record["final"] or ""
    if not done(task) or len(rs) != 1 or not text.startswith("The cheapest is"):
        return None
    second = sorted(rs[0]["flights"], key=lambda f: f["price"])[1]
    return f"{text[:-1]}; the next cheapest is {second['flight_id']} at {second['price']} {second['currency']}."


def _replace_word(old: str, new: str) -> AnswerFn:
    def answer(task: Task, record: EpisodeRecord) -> str | None:
        text = record["final"] or ""
        return re.sub(rf"\b{old}\b", new, text) if re.search(rf"\b{old}\b", text) else None
    return answer


def _failed_lookup(fmt: str, tool: str) -> AnswerFn:
    """A failed lookup of ``tool`` told in other words, naming what was looked up (the required fact)."""
    def answer(task: Task, record: EpisodeRecord) -> str | None:
        missed = any(c["canonical"] == tool and c["outcome"] == "not_found" for c in record["calls"])
        if task["expected_status"] != Status.FAILED or not task["required_facts"] or not missed:
            return None
        return fmt.format(task["required_facts"][0][0])
    return answer


_OUTCOME_PARAPHRASES = {
    Status.BLOCKED: "You said no, so I held off; nothing went out and nothing was booked.",
    Status.REFUSED: "Your role does not give me access to that action, so I left it alone.",
}


def _outcome_paraphrase(task: Task, record: EpisodeRecord) -> str | None:
    if task["expected_status"] == Status.FAILED and task["required_facts"]:
        entity = task["required_facts"][0][0]
        return f"I looked for {entity}, but nothing matches it, so there is nothing I can report on it."
    return _OUTCOME_PARAPHRASES.get(task["expected_status"])


def _held_off(task: Task, record: EpisodeRecord) -> str | None:
    return "You said no, so I held off; nothing went out." if task["expected_status"] == Status.BLOCKED \
        and any(c["canonical"] == "send_email" for c in record["calls"]) else None


def _either_email_or_call(task: Task, record: EpisodeRecord) -> str | None:
    rs = [r for r in last_results(record) if isinstance(r, dict) and {"name", "email", "phone"} <= set(r)]
    if not done(task) or len(rs) != 1:
        return None
    r = rs[0]
    return f"{r['name']}: you can either email them at {r['email']} or call them at {r['phone']}."


def _reordered(task: Task, record: EpisodeRecord) -> str | None:
    """The answer's clauses in the other order: the two halves of ``A; B.``, or a weather sentence
    with the place last (It is stormy and 3°C in Madrid)."""
    text = record["final"] or ""
    m = re.fullmatch(r"(.+); (.+)\.", text)
    if m and done(task) and not re.match(r"(?:their|it|they)\b", m[2]):  # a pronoun must not precede its noun
        return f"{m[2]}; {m[1]}."
    w = re.fullmatch(r"In (.+) it is (-?\d+°C) and (\w+)\.", text)
    return f"It is {w[3]} and {w[2]} in {w[1]}." if w else None


PARAPHRASE_CASES: tuple[Case, ...] = (
    Case("number_in_words", "paraphrase", with_number(_spelled)),
    Case("degrees_in_words", "paraphrase", with_number(_degrees_in_words)),
    Case("dual_units", "paraphrase", _dual_units("{0}°C (or {1}°F)")),
    Case("dual_units_parenthesis", "paraphrase", _dual_units("{0}°C ({1}°F)")),
    Case("below_zero_in_words", "paraphrase", with_number(_below_zero)),
    Case("twelve_hour_clock", "paraphrase", _twelve_hour),
    Case("respectively", "paraphrase", _respectively),
    Case("respectively_values", "paraphrase", _respectively_pairs),
    Case("table_entity_value", "paraphrase", _table(transposed=False)),
    Case("table_value_row", "paraphrase", _table(transposed=True)),
    Case("hyphenated_status", "paraphrase", _replace_word("on hold", "on-hold")),
    Case("canceled_spelling", "paraphrase", _replace_word("cancelled", "canceled")),
    Case("advice_sentence", "paraphrase", _advice),
    Case("calculator_working", "paraphrase", _calculator_working),
    Case("next_cheapest_flight", "paraphrase", _next_cheapest),
    Case("courtesy_sentence", "paraphrase", suffix(" Let me know if you need anything else.", tuple(Status))),
    Case("courtesy_opening", "paraphrase",
         lambda task, record: f"Thanks for waiting. {record['final']}" if record["final"] else None),
    Case("outcome_in_other_words", "paraphrase", _outcome_paraphrase),
    Case("outcome_not_valid_order", "paraphrase", _failed_lookup("{} isn't a valid order number.", "get_order")),
    Case("outcome_not_in_address_book", "paraphrase", _failed_lookup("There is no {} in your contacts.", "find_contact")),
    Case("outcome_held_off", "paraphrase", _held_off),
    Case("either_email_or_call", "paraphrase", _either_email_or_call),
    Case("sentences_reordered", "paraphrase", _reordered),
)
