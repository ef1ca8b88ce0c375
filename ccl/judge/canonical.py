"""Faithful forms rewritten into one plain form before ruler 2 judges an answer.

Ruler 1 refused answers that were true (issue 37's list of false negatives): a temperature in both
units, ``... respectively``, a table, ``on-hold``, ``canceled``. Each is a way of writing the same
statements, so rather than teach every check each form, the answer is rewritten once, here, into
the plain statements it makes, and then judged as if it had been written that way. A rewrite only
ever removes a second spelling of the same value or re-pairs values with their entities as the
answer itself paired them; it adds no value. Nothing here raises on any text.
"""
from __future__ import annotations

import re
from typing import Callable

from .linear import spaces_before

# status spellings the world writes one way
_SPELLINGS = ((re.compile(r"\bon-hold\b|\bonhold\b", re.I), "on hold"),
              (re.compile(r"\bcanceled\b", re.I), "cancelled"))
_NUM = r"-?\d+(?:[.,]\d+)?"
# 33°C (or 91°F), 33°C (91°F), 33 °C / 91 °F, and the reverse order. The first number starts at the start
# of its digits (issue 55: from each digit of a long run the rest was read again); a match starting
# inside the run would start one digit earlier too, and a match never ends just before a digit
_DUAL_RE = re.compile(rf"(?P<a>-?(?<!\d)\d+(?:[.,]\d+)?)\s*°\s*(?P<ua>[CF])\s*"
                      rf"(?:\(\s*(?:or\s+|i\.e\.\s+|=\s*|~\s*)?(?P<b>{_NUM})\s*°\s*"
                      rf"(?P<ub>[CF])\s*\)|/\s*(?P<b2>{_NUM})\s*°\s*(?P<ub2>[CF])\b)", re.I)


def canonical(text: str, request: str) -> str:
    """``text`` (already in ``ccl.judge.reading``'s normal form) with dual units, spelling variants,
    ``respectively`` and Markdown tables rewritten as plain statements. ``request``: the task's
    request, whose named entities tell a transposed table (entities across the top) from a plain one."""
    for pattern, plain in _SPELLINGS:
        text = pattern.sub(plain, text)
    text = _DUAL_RE.sub(_drop_conversion, text)
    text = _tables(text, request)
    return _respectively(text)


def _fahrenheit(celsius: float) -> float:
    return celsius * 9 / 5 + 32


def _drop_conversion(m: re.Match) -> str:
    """Keep the first temperature; drop the second if it is the first converted (to within 1 degree)."""
    b, ub = (m.group("b"), m.group("ub")) if m.group("b") is not None else (m.group("b2"), m.group("ub2"))
    a, ua = float(m.group("a").replace(",", ".")), m.group("ua").lower()
    second = float(b.replace(",", "."))
    if ua == ub.lower():
        return m.group(0)
    expected = _fahrenheit(a) if ua == "c" else (a - 32) * 5 / 9
    return f"{m.group('a')}°{m.group('ua')}" if abs(expected - second) <= 1 else m.group(0)


# ---------------------------------------------------------------- tables
_ROW_RE = re.compile(r"^\s*\|(.*)\|\s*$")
# possessive: each piece is followed by one that cannot start with what it gives back, and "\s*\|?\s*"
# split a line of n spaces n*n ways (issue 55)
_RULE_RE = re.compile(r"^\s*+\|?+\s*+:?+-{2,}+:?+\s*+(?:\|\s*+:?+-{2,}+:?+\s*+)*+\|?+\s*+$")


def _tables(text: str, request: str) -> str:
    """Every Markdown table as one statement per entity: ``ORD-1 shipped; ORD-2 on hold.``"""
    lines, out, block = text.split("\n"), [], []
    for line in lines + [""]:
        if _ROW_RE.match(line) or (block and _RULE_RE.match(line)):
            block.append(line)
            continue
        if block:
            out.append(_table_statements(block, request))
            block = []
        out.append(line)
    return "\n".join(out[:-1])


def _table_statements(block: list[str], request: str) -> str:
    rows = [[c.strip() for c in _ROW_RE.match(line).group(1).split("|")] for line in block
            if not _RULE_RE.match(line) and _ROW_RE.match(line)]
    if len(rows) < 2:
        return "\n".join(block)
    header, data = rows[0], rows[1:]
    named = [c for c in header[1:] if c and re.search(r"(?<!\w)" + re.escape(c) + r"(?!\w)", request, re.I)]
    transposed = len(named) >= 2
    if transposed:  # entities across the top, one row per attribute (its label first)
        labels = " ".join(r[0] for r in data if r)
        parts = [" ".join([header[j]] + [r[j] for r in data if j < len(r)]) for j in range(1, len(header))]
    else:  # one row per entity, the header names the columns
        labels = " ".join(header)
        parts = [" ".join(r) for r in data]
    return f"{labels}:\n" + "; ".join(p for p in parts if p.strip()) + "."  # the labels head the statements


# ---------------------------------------------------------------- respectively
# Was r"^\s*(?P<subj>[^.;:\n]+?)\s+(?P<verb>...)\s+(?P<vals>[^.;:\n]+?),?\s+respectively\b": three quantifiers
# over one run of spaces, n**3 steps (2,000 spaces took minutes; issue 55). Its first match, as ``sub``
# uses it: the leading spaces all taken (a subject made of leading spaces alone pairs nothing, so ``pair``
# returns the text as it was), the subject and the values ending where no shorter one would have matched
# (not on a space, unless a comma follows the values), the spaces around the verb all taken.
_RESPECTIVELY_RE = re.compile(r"^\s*+(?P<subj>[^.;:\n]*?[^.;:\n\s])\s++(?P<verb>is|are|was|were|have|has|cost|costs)"
                              r"\s++(?P<vals>[^.;:\n]*?(?:[^.;:\n\s]|\s(?=,))),?\s+respectively\b", re.I)
_SPACES, _CLAUSE_END = re.compile(r"\s*"), re.compile(r"[.;:]")  # a match crosses a line break only in its spaces
_RESPECTIVELY_WORD = re.compile(r"(?<=\s)respectively\b", re.I)
# a conjunction's spaces from the start of their run only (a split never resumes inside one)
_LIST_SEPARATOR_RE = re.compile(r",\s*(?:and\s+)?|(?<!\s)\s+and\s+")


def _split_list(text: str) -> list[str]:
    return [p.strip() for p in _LIST_SEPARATOR_RE.split(text) if p.strip()]


def _respectively_match(text: str) -> re.Match | None:
    """``_RESPECTIVELY_RE.match(text)``, read no further than the last spaced "respectively" before the first
    ".", ";" or ":": a match holds none of those and ends with one, and without it there is no match at all."""
    start = _SPACES.match(text).end()
    end = m.start() if (m := _CLAUSE_END.search(text, start)) else len(text)
    last = None
    for last in _RESPECTIVELY_WORD.finditer(text, start, end):
        pass
    return _RESPECTIVELY_RE.match(text, 0, last.end()) if last else None


_VALUE = r"-?\d+(?:\.\d+)?"  # no comma decimals here: "1,1" read two ways makes the list backtrack
_WORDY = r"[A-Za-z][\w-]*"
# "buys 0.35, 2.75 and 0.25 CAD, NOK and USD, respectively": values, then the entities they belong to
_VALUES_THEN_NAMES_RE = re.compile(
    rf"(?P<vals>{_VALUE}(?:,\s*{_VALUE})*,?\s+and\s+{_VALUE})\s+(?P<names>{_WORDY}(?:,\s*{_WORDY})*,?\s+and\s+{_WORDY}),?"
    r"\s+respectively\b", re.I)


_VALUE_START, _DIGIT = re.compile(r"-(?=\d)|\d"), re.compile(r"\d")


def _values_then_names_sub(text: str) -> str:
    """``_VALUES_THEN_NAMES_RE.sub(_values_then_names, text)``, the pattern tried only where a list of values
    begins (issue 55: from each value of a long list it read the rest of the list again). A match starting
    inside a run of digits, after a minus sign, or after a value and a comma would also start at that
    earlier value (its list one longer), and no match ends between the two: each ends with a word."""
    out, pos = [], 0
    for c in _VALUE_START.finditer(text):
        p = c.start()
        if p < pos or _continues(text, p):
            continue
        if m := _VALUES_THEN_NAMES_RE.match(text, p):
            out += [text[pos:p], _values_then_names(m)]
            pos = m.end()
    return "".join(out) + text[pos:]


def _continues(text: str, p: int) -> bool:
    """The value at ``p`` continues one before it: a digit after a digit or a minus, or after "<digit>,"
    and spaces."""
    if p and text[p] != "-" and (text[p - 1] == "-" or _DIGIT.match(text, p - 1)):
        return True
    j = spaces_before(text, p)
    return j >= 2 and text[j - 1] == "," and _DIGIT.match(text, j - 2) is not None


def _values_then_names(m: re.Match) -> str:
    values, names = _split_list(m.group("vals")), _split_list(m.group("names"))
    if len(values) != len(names):
        return m.group(0)
    return ", ".join(f"{v} {n}" for v, n in zip(values, names))


def _respectively(text: str) -> str:
    """``A and B are X and Y, respectively`` as ``A is X; B is Y``, and ``X and Y A and B,
    respectively`` as ``X A, Y B`` (left alone when the counts differ). Only sentences that say
    "respectively" are tried, one at a time, so no other text meets these patterns."""
    if "respectively" not in text.casefold():
        return text
    return "".join(_respectively_sentence(p) if "respectively" in p.casefold() else p
                   for p in re.split(r"((?<=[.;:])\s+|\n+)", text))  # not inside 0.3584


def _respectively_sentence(text: str) -> str:
    text = _values_then_names_sub(text)
    m = _respectively_match(text)
    return pair_respectively(m) + text[m.end():] if m else text


def pair_respectively(m: re.Match, split: Callable[[str], list[str]] = _split_list) -> str:
    """"A and B are x and y respectively" as "A is x; B is y" (the match unchanged when the lists differ
    in length or hold one item); ``split`` cuts a list (tests pass the pre-issue-55 one)."""
    subjects, values = split(m.group("subj")), split(m.group("vals"))
    if len(subjects) != len(values) or len(subjects) < 2:
        return m.group(0)
    verb = {"are": "is", "were": "was", "have": "has", "cost": "costs"}.get(m.group("verb").lower(), m.group("verb"))
    return "; ".join(f"{s} {verb} {v}" for s, v in zip(subjects, values))
