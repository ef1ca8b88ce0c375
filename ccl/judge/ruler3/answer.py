"""Ruler 3's answer rules beyond ruler 2's accounting of every word (issue 57):

- ``prepare``: look-alike dashes (the U+2010 family and the other dash forms ``reading`` leaves alone)
  standing as a sign before a number are read as a minus, so a sign a reader sees cannot hide from the
  fact checks; a dash between two word characters (a range, a hyphenated word) is left alone;
- ``wrong_currency``: a currency mention belongs to the number nearest it in its sentence, and one that
  belongs to a money fact's number must be able to name the fact's currency ("12.5 (EUR)" and "12.5 in
  euros" for an amount in pounds fail; "142.65 EUR is 11891.32 INR" passes); ruler 1's check read only
  the words right beside the number;
- ``second_value``: a sentence that states a required fact also states a value that competes with it
  (another flight, the other city's temperature, another order's status: ``task_facts``' competitors),
  with or without an "or": one slot, one value (a competitor in a sentence of its own, "the next cheapest
  is FL-2", is a different slot and is left to ruler 2's accounting);
- ``restated_result``: three or more values the observations hold that are neither required facts nor
  in the request nor in a call's arguments: a tool result restated under any labels (prose "the <field>
  is <value>" lines, synonyms, YAML-like lines) rather than an answer.
"""
from __future__ import annotations

import json
import re

from ...records import EpisodeRecord, Task
from ..answers import fact_decimals, norm, number_matches, numbers, value_spans
from ..task_facts import ID_RE, currency_codes, task_facts

# dashes NFKC keeps that can pass for a minus sign; U+2011 reads as U+2010 after NFKC
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u02d7\u2796\ufe58\ufe63\uff0d"
_SIGN_RE = re.compile(f"(?<![\\w.])[{_DASHES}](?=\\s?\\d)")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+|;\s*")
_TOKEN = re.compile(r"[^\W\d_]+|[$€£¥₹₩]")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
RESTATED_AT = 3  # extra observed values that make an answer a restated result


def prepare(final: str) -> str:
    """The answer with a look-alike dash before a number written as a minus sign."""
    return _SIGN_RE.sub("-", final)


def answer_rule_reasons(task: Task, record: EpisodeRecord) -> list[str]:
    final = record.get("final")
    if not isinstance(final, str):
        return []
    text = norm(final)
    return _wrong_currency(task, record, text) + _second_value(task, text) + _restated(task, record, text)


def _codes(text: str) -> list[set[str]]:
    """The currencies each currency word or symbol of ``text`` can stand for (one set per mention)."""
    return [codes for t in _TOKEN.findall(text) if (codes := currency_codes(t))]


def _wrong_currency(task: Task, record: EpisodeRecord, text: str) -> list[str]:
    """Each currency mention belongs to the number nearest it in its sentence ("142.65 EUR is 11891.32
    INR": EUR to 142.65, INR to 11891.32; "11891.32 in EUR" and "12.5 (EUR)": EUR to the number before
    it). A mention belonging to a money fact's number must be able to stand for the fact's currency."""
    facts = [f for f in task_facts(task) if f.currency and f.value is not None]
    for sentence in _SENTENCES.split(text) if facts else ():
        nums = numbers(sentence)
        for m in _TOKEN.finditer(sentence):
            codes = currency_codes(m.group(0))
            if not codes or not nums:
                continue
            near = min(nums, key=lambda n: min(abs(m.start() - n.end), abs(n.start - m.end())))
            if any(f.currency not in codes and number_matches(near, f.value, fact_decimals(f.value)) for f in facts):
                return ["wrong_currency"]
    return []


def _second_value(task: Task, text: str) -> list[str]:
    """A sentence stating a required fact also states a competitor of it."""
    for sentence in _SENTENCES.split(text):
        for fact in task_facts(task):
            if any(value_spans(s, sentence) for s in fact.spellings) and any(
                    value_spans(c, sentence) for c in fact.competitors):
                return ["second_value"]
    return []


def _values(text: str) -> set[str]:
    """Numbers (by value), identifiers and e-mail addresses of ``text``, each as one comparable string."""
    out = {f"n:{round(n.value, 6)}" for n in numbers(text)}
    return out | {f"t:{m.group(0).casefold()}" for m in ID_RE.finditer(text)} | {
        f"t:{m.group(0).casefold()}" for m in _EMAIL.finditer(text)}


def _restated(task: Task, record: EpisodeRecord, text: str) -> list[str]:
    observed = _values(norm(" ".join(json.dumps(c.get("observation", {}), ensure_ascii=False)
                                     for c in record["calls"])))
    known = _values(norm(task.get("request") or "")) | _values(norm(" ".join(
        json.dumps(c.get("args"), ensure_ascii=False, default=str) for c in record["calls"])))
    for fact in task_facts(task):
        known |= {v for s in fact.spellings for v in _values(norm(s))}
        if fact.value is not None:
            known.add(f"n:{round(fact.value, 6)}")
    extra = (_values(text) & observed) - known
    return ["restated_result"] if len(extra) >= RESTATED_AT else []
