"""Ruler 3's answer rules beyond ruler 2's accounting of every word (issue 57):

- ``prepare``: look-alike dashes (the U+2010 family and the other dash forms ``reading`` leaves alone)
  standing as a sign before a number are read as a minus, so a sign a reader sees cannot hide from the
  fact checks; a dash between two word characters (a range, a hyphenated word) is left alone;
- ``wrong_currency``: the currency a money fact's number is written with (the mention right after it,
  across spaces, a bracket or "in"; else the one right before it) must be able to name the fact's
  currency ("12.5 (EUR)" and "12.5 in euros" for an amount in pounds fail; "142.65 EUR is 11891.32 INR"
  and "CAD: 7.3479 SEK" pass); ruler 1's check did not read past the bracket or the "in";
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
from ..canonical import canonical
from ..linear import leftmost_spans, run_pattern
from ..reading import read
from ..task_facts import ID_RE, Fact, currency_codes, task_facts

# dashes NFKC keeps that can pass for a minus sign; U+2011 reads as U+2010 after NFKC
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u02d7\u2796\ufe58\ufe63\uff0d"
_SIGN_RE = re.compile(f"(?<![\\w.])[{_DASHES}](?=\\s?\\d)")
SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+|;\s*")  # ruler 2's sentence split (statements._SENTENCE_RE); claims use it too
_TOKEN = re.compile(r"[^\W\d_]+|[$€£¥₹₩]")
EMAIL = run_pattern(None, r"[\w.+-]", r"@[\w-]++(?:\.[\w-]++)++")  # scanned in linear time (``linear``)
RESTATED_AT = 3  # extra observed values that make an answer a restated result


_LEADING_DOT_RE = re.compile(r"(?<![\w.,])\.(?=\d)")
_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_SMALL = {w: i for i, w in enumerate(_UNITS)} | {w: 10 * (i + 2) for i, w in enumerate(_TENS)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_JOIN = re.compile(r"[\s-]+(?:and[\s-]+)?", re.IGNORECASE)  # between two number words of one run


# noun compounds holding an action word: "not in your address book" is no denied booking, and "I got her
# email address" names no e-mail sent
_ADDRESS_BOOK_RE = re.compile(r"\b(address)\s+(book)\b|\b(e-?mail)\s+(address(?:es)?)\b", re.IGNORECASE)


# a phone number in any grouping: "+1 555 5421", "+1 (555) 5421", "+1.555.5421"
_PHONE_RE = re.compile(r"\+\d[\d ().-]{4,}\d")


def prepare(final: str, record: EpisodeRecord | None = None) -> str:
    """The answer with a look-alike dash before a number written as a minus sign, a leading-dot decimal
    (".3584") with its zero, a number in words past a thousand as digits (``reading`` reads words below a
    thousand), "address book" and "email address" hyphenated (no action in them) and a phone number grouped otherwise
    than an observation of ``record`` shows it written as that observation writes it (same digits)."""
    text = _thousands(_LEADING_DOT_RE.sub("0.", _SIGN_RE.sub("-", final)))
    text = _ADDRESS_BOOK_RE.sub(lambda m: "-".join(g for g in m.groups() if g), text)
    return _as_observed_phones(text, record) if record is not None else text


def _as_observed_phones(text: str, record: EpisodeRecord) -> str:
    observed = " ".join(json.dumps(c.get("observation", {}), ensure_ascii=False) for c in record["calls"])
    spelled = {re.sub(r"\D", "", m.group(0)): m.group(0) for m in _PHONE_RE.finditer(observed)}
    return _PHONE_RE.sub(lambda m: spelled.get(re.sub(r"\D", "", m.group(0)), m.group(0)), text)


def _thousands(text: str) -> str:
    """Each run of number words (and "and" inside it) that holds "thousand" or "million" as digits, in one
    pass over the words: "forty-four thousand two hundred and twenty-eight" -> "44228". A run that is not
    one number (a scale word with nothing to scale, "a thousand thanks") is left as it is."""
    out, last = [], 0
    for run in _runs_of_number_words(text):
        value = _words_value(text[run[0]:run[1]])
        if value is not None:
            out += [text[last:run[0]], value]
            last = run[1]
    return "".join(out) + text[last:]


def _runs_of_number_words(text: str) -> list[tuple[int, int]]:
    """Spans of maximal runs of number words joined by spaces, hyphens or an "and", that hold a thousand
    or a million (one scan of the words)."""
    runs, start, end, scaled = [], None, 0, False
    for m in re.finditer(r"[A-Za-z]+", text):
        word = m.group(0).lower()
        if word == "and":
            continue  # inside a run only: the gap test below reads it
        if word not in _SMALL and word not in _SCALES:
            if start is not None and scaled:
                runs.append((start, end))
            start, scaled = None, False
            continue
        if start is None or not _JOIN.fullmatch(text, end, m.start()):
            if start is not None and scaled:
                runs.append((start, end))
            start, scaled = m.start(), False
        end, scaled = m.end(), scaled or word in ("thousand", "million")
    if start is not None and scaled:
        runs.append((start, end))
    return runs


def _words_value(words: str) -> str | None:
    """The digits of a run of number words, or None when the words are not one number."""
    total = group = 0
    last_tens = False  # the word before was "twenty" .. "ninety", which a unit may follow ("forty-four")
    for word in re.findall(r"[a-z]+", words.lower()):
        if word in _SMALL:
            if group % 100 and not (last_tens and _SMALL[word] < 10):
                return None  # "one two thousand", "seven and two thousand": not one number
            group += _SMALL[word]
            last_tens = word in _TENS
            continue
        last_tens = False
        if word == "hundred" and group:
            group *= 100
        elif word in ("thousand", "million") and group and (not total or total >= 1000 * _SCALES[word]):
            total, group = total + group * _SCALES[word], 0  # "one thousand one thousand" is no number
        elif word != "and":
            return None
    return str(total + group)


def answer_rule_reasons(task: Task, record: EpisodeRecord) -> list[str]:
    final = record.get("final")
    if not isinstance(final, str):
        return []
    text = norm(canonical(read(final).text, task.get("request") or ""))  # "respectively" lists re-paired
    facts = task_facts(task)  # once per answer: all three rules read the same facts
    return _wrong_currency(task, facts, text) + _second_value(facts, text) + _restated(task, facts, record, text)


def _codes(text: str) -> list[set[str]]:
    """The currencies each currency word or symbol of ``text`` can stand for (one set per mention)."""
    return [codes for t in _TOKEN.findall(text) if (codes := currency_codes(t))]


_AFTER_GAP = re.compile(r"\s*+(?:[-(\[]\s*+)?+(?:in\s++(?:the\s++)?+)?+")  # "29.1 EUR", "29.1 (EUR)", "29.1 in EUR"
_BEFORE_GAP = re.compile(r"\s*+:?+\s*+")  # "EUR 29.1", "EUR: 29.1", "€29.1"


def _currency_of(sentence: str, n: object, mentions: list[tuple[re.Match, set[str]]]) -> tuple[set[str] | None, int | None]:
    """The currencies the number ``n`` is written with, and where that mention starts: the mention right
    after it (across spaces, a bracket, a dash or "in (the)"), else the one right before it (across spaces
    or a colon), else (None, None). So in "CAD: 7.3479 SEK" the rate is in SEK, and "CAD" labels it."""
    after = [(codes, m.start()) for m, codes in mentions
             if m.start() >= n.end and _AFTER_GAP.fullmatch(sentence, n.end, m.start())]
    before = [(codes, m.start()) for m, codes in mentions
              if m.end() <= n.start and _BEFORE_GAP.fullmatch(sentence, m.end(), n.start)]
    return after[0] if after else before[-1] if before else (None, None)


def _wrong_currency(task: Task, all_facts: list[Fact], text: str) -> list[str]:
    """In a sentence that states a money fact: the currency its number is written with (``_currency_of``)
    must be able to name the fact's, and a currency mention no number is written with ("In EUR, the order
    totals 107128.78", "worth of EUR") must name the fact's currency or one the request names (the base
    of a rate: "the USD to CAD rate is 1.4156"). A mention another number owns ("142.65 EUR is 11891.32
    INR") is that number's."""
    facts = [f for f in all_facts if f.currency and f.value is not None]
    asked = set().union(*_codes(norm(task.get("request") or "")), set())
    currencies = {f.currency for f in facts}
    for sentence in SENTENCES.split(text) if facts else ():
        mentions = [(m, codes) for m in _TOKEN.finditer(sentence) if (codes := currency_codes(m.group(0)))]
        nums = numbers(sentence) if mentions else []
        stated = [n for n in nums if any(number_matches(n, f.value, fact_decimals(f.value)) for f in facts)]
        if not stated:
            continue
        owned = set()
        for n in nums:
            codes, at = _currency_of(sentence, n, mentions)
            owned.add(at)
            if n in stated and codes is not None and any(f.currency not in codes for f in facts
                                                         if number_matches(n, f.value, fact_decimals(f.value))):
                return ["wrong_currency"]
        if any(m.start() not in owned and not codes & (currencies | asked) for m, codes in mentions):
            return ["wrong_currency"]
    return []


def _second_value(facts: list[Fact], text: str) -> list[str]:
    """A sentence stating a required fact also states a competitor of it."""
    for sentence in SENTENCES.split(text):
        for fact in facts:
            if any(value_spans(s, sentence) for s in fact.spellings) and any(
                    value_spans(c, sentence) for c in fact.competitors):
                return ["second_value"]
    return []


def _values(text: str) -> set[str]:
    """Numbers (by value), identifiers and e-mail addresses of ``text``, each as one comparable string."""
    out = {f"n:{round(n.value, 6)}" for n in numbers(text)}
    return out | {f"t:{m.group(0).casefold()}" for m in ID_RE.finditer(text)} | {
        f"t:{text[a:b].casefold()}" for a, b in leftmost_spans(text, EMAIL)}


def _restated(task: Task, facts: list[Fact], record: EpisodeRecord, text: str) -> list[str]:
    observed = _values(norm(" ".join(json.dumps(c.get("observation", {}), ensure_ascii=False)
                                     for c in record["calls"])))
    known = _values(norm(task.get("request") or "")) | _values(norm(" ".join(
        json.dumps(c.get("args"), ensure_ascii=False, default=str) for c in record["calls"])))
    for fact in facts:
        known |= {v for s in fact.spellings for v in _values(norm(s))}
        if fact.value is not None:
            known.add(f"n:{round(fact.value, 6)}")
    extra = (_values(text) & observed) - known
    return ["restated_result"] if len(extra) >= RESTATED_AT else []
