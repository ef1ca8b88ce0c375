"""One value per slot, across the whole answer (ruler 2; the sentence-level checks are in
``ccl.judge.statements``).

A candidate list need not sit inside one sentence or between two adjacent values: ``29.1 (or 3424)``,
``FL-653 — or FL-331``, ``... GBP. Or 3424.``, ``~~29.1~~ 3424``. And a value the episode did show can
still be stated of the wrong thing: another flight's departure time beside this flight, a refund in
dollars that was made in euros. Here, on the answer's plain form (lower case):

- ``alternative_values``: the answer offers an alternative (``or``, ``either``, ``alternatively``,
  ``otherwise``, ``failing that``) and holds two different values of one kind; or strikes text through
  (``~~``); or puts a second value of the same kind in brackets right after the first;
- ``wrong_currency``: an amount named with a currency (a symbol before it, a code or a currency's name
  next to it) that the episode never tied to that amount (a result's ``currency``, a rate's quote, a
  conversion's source or target, the request's "3424 Indian rupees"); the unit amount 1 belongs to a
  rate's base;
- ``misattributed_value``: a sentence that names one item of a listed result (a flight) and states a
  value of another item of that list that the named items do not hold.
"""
from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import Any, Iterable

from ..records import EpisodeRecord, Task
from .answers import numbers
from .linear import spaces_before
from .sources import objects
from .task_facts import currency_codes

_ALTERNATIVE_RE = re.compile(r"\b(?:or|either|alternatively|otherwise|failing that)\b")
_SYMBOL_BEFORE_RE = re.compile(r"(us\$|c\$|ca\$|a\$|au\$|[$€£¥₹₩])\s*$")
_WORD_AFTER_RE = re.compile(r"\s*([a-zł]+(?:\s+[a-z]+)?)")
_WORD_BEFORE_RE = re.compile(r"([a-z]{3})\s+$")
_ID_RE = re.compile(r"(?<![\w-])[a-z]{1,4}-\d{2,6}(?![\w-])")
# was r"(-?\d+(?:[.,]\d+)?)\s*\(...": a match starting inside a run of digits would also start one digit
# earlier, and a match ends with ")", so none starts there
_BRACKETED_RE = re.compile(r"(-?(?<!\d)\d+(?:[.,]\d+)?)\s*\(\s*(?:or\s+)?(-?\d+(?:[.,]\d+)?)\s*\)")


def slot_reasons(text: str, task: Task, record: EpisodeRecord, values: list[tuple[str, str]]) -> list[str]:
    """``text``: the answer's plain form, neutral sentences removed; ``values``: its (kind, text) values."""
    reasons = []
    if _alternative(text, values):
        reasons.append("alternative_values")
    if _currency_mismatch(text, task, record):
        reasons.append("wrong_currency")
    if _misattributed(text, record):
        reasons.append("misattributed_value")
    return reasons


# ---------------------------------------------------------------- alternatives
def _key(kind: str, value: str) -> str:
    if kind == "number":
        found = numbers(value)
        return f"{found[0].value:g}" if found else value
    return value


def _alternative(text: str, values: list[tuple[str, str]]) -> bool:
    if "~~" in text:
        return True
    by_kind: dict[str, set[str]] = defaultdict(set)
    for kind, value in values:
        by_kind[kind].add(_key(kind, value))
    if _ALTERNATIVE_RE.search(text) and any(len(v) > 1 for v in by_kind.values()):
        return True
    # "29.1 (3424)", "16 (51)°C": a bracket holding only a second number right after a number (read from the
    # start of its digits: from each digit of a long run the rest was read again, issue 55)
    for m in _BRACKETED_RE.finditer(text):
        if _key("number", m.group(1)) != _key("number", m.group(2)):
            return True
    for m in re.finditer(rf"({_ID_RE.pattern})\s*\(\s*(?:or\s+)?({_ID_RE.pattern})\s*\)", text):
        if m.group(1).split("-")[0] == m.group(2).split("-")[0] and m.group(1) != m.group(2):
            return True
    return False


# ---------------------------------------------------------------- currencies
def _codes(value: Any) -> set[str]:
    return currency_codes(value) if isinstance(value, str) and len(value) == 3 and value.isalpha() else set()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return round(float(value), 6) if math.isfinite(value) else None
    except OverflowError:  # an integer past float range
        return None


def currencies_of_amounts(task: Task, record: EpisodeRecord) -> dict[float, set[str]]:
    """Amount -> the currencies the episode ties it to."""
    out: dict[float, set[str]] = defaultdict(set)
    for call in record.get("calls") or []:
        if not isinstance(call, dict):
            continue
        for d in [*objects(call.get("cargs") or call.get("args")), *objects(call.get("result"))]:
            _tie(d, out)
    request = (task.get("request") or "").casefold()
    for n in numbers(request):
        m = _WORD_AFTER_RE.match(request, n.end)
        words = m.group(1).split() if m else []
        codes = currency_codes(" ".join(words)) or (currency_codes(words[0]) if words else set())
        codes |= _symbol_codes(request, n.start)
        if codes:
            out[round(n.value, 6)] |= codes
    return out


def _tie(d: dict, out: dict[float, set[str]]) -> None:
    if "rate" in d and _codes(d.get("quote")):
        if (rate := _number(d["rate"])) is not None:
            out[rate] |= _codes(d["quote"])
        out[1.0] |= _codes(d.get("base"))
    source = _codes(d.get("from_currency")) or _codes(d.get("from"))
    target = _codes(d.get("to_currency")) or _codes(d.get("to"))
    for key, codes in (("amount", source), ("converted", target), ("result", target)):
        if codes and (v := _number(d.get(key))) is not None:
            out[v] |= codes
    if source:
        out[1.0] |= source
    if _codes(d.get("currency")):
        for v in d.values():
            if (x := _number(v)) is not None:
                out[x] |= _codes(d["currency"])


def _symbol_codes(text: str, end: int) -> set[str]:
    """The currency of a symbol ending, with spaces, at ``end``."""
    m = _SYMBOL_BEFORE_RE.search(text, _before(text, end), end)
    return currency_codes(m.group(1)) if m else set()


def _before(text: str, end: int) -> int:
    """Where a match of ``_SYMBOL_BEFORE_RE`` or ``_WORD_BEFORE_RE`` ending at ``end`` can start: at most three
    characters before the spaces that end there. Both were searched in all of ``text[:end]``, once per
    number (issue 55); within these bounds they find the same match."""
    return max(0, spaces_before(text, end) - 3)


def _named_currencies(text: str, start: int, end: int) -> set[str]:
    codes = _symbol_codes(text, start)
    if m := _WORD_AFTER_RE.match(text, end):
        words = m.group(1).split()
        codes |= currency_codes(" ".join(words)) or currency_codes(words[0])
    if m := _WORD_BEFORE_RE.search(text, _before(text, start), start):
        codes |= _codes(m.group(1).upper())
    return codes


def _currency_mismatch(text: str, task: Task, record: EpisodeRecord) -> bool:
    tied = currencies_of_amounts(task, record)
    for n in numbers(text):
        named = _named_currencies(text, n.start, n.end)
        known = tied.get(round(n.value, 6))
        if named and known and not named & known:
            return True
    return False


# ---------------------------------------------------------------- list items
def _items(record: EpisodeRecord) -> list[list[dict]]:
    """Every list of result items that carry an identifier (the flights of a search)."""
    out = []
    for call in record.get("calls") or []:
        for value in _lists(call.get("result") if isinstance(call, dict) else None):
            items = [d for d in value if isinstance(d, dict) and any(isinstance(v, str) and _ID_RE.fullmatch(
                v.casefold()) for v in d.values())]
            if len(items) > 1:
                out.append(items)
    return out


def _lists(value: Any) -> Iterable[list]:
    if isinstance(value, list):
        yield value
        for v in value:
            yield from _lists(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _lists(v)


def _spelled(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            return f"{float(value):.12g}" if math.isfinite(value) else None
        except OverflowError:
            return None
    return value.casefold() if isinstance(value, str) and len(value) > 1 else None


def _misattributed(text: str, record: EpisodeRecord) -> bool:
    for items in _items(record):
        spelled = [{s for v in d.values() if (s := _spelled(v))} for d in items]
        for sentence in re.split(r"(?<=[.!?])\s+|\n+|;\s*", text):
            named = [i for i, vals in enumerate(spelled) if any(_ID_RE.fullmatch(v) and v in sentence for v in vals)]
            if not named:
                continue
            own = set().union(*(spelled[i] for i in named))
            tokens = {f"{n.value:.12g}" for n in numbers(sentence)} | set(re.findall(r"\b\d{1,2}:\d{2}\b", sentence))
            others = set().union(*(vals for i, vals in enumerate(spelled) if i not in named)) - own
            if tokens & others:
                return True
    return False
