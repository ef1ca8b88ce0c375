"""Reading a final answer: numbers as values, facts with word boundaries, clauses.

The validator asks two kinds of question about an answer: does it contain a required
fact (both success definitions), and does it state that fact cleanly (the strict one:
no competing value, no hedge, no negation, each parallel value beside its own entity,
the right currency). This module answers them from plain text; it knows nothing about
tasks. Nothing here raises on any input text.

Numbers are parsed, not matched as substrings: ``160`` and ``-16`` do not contain the
fact 16, and ``16`` inside ``ORD-16`` or ``x16`` is no number at all. Accepted forms:
ASCII or Unicode minus, thousands separators (``1,234`` ``1 234`` ``1'234`` and the
narrow and no-break spaces), comma decimals where unambiguous (``12,5`` ``0,8734``;
a comma followed by exactly three digits is a thousands separator, the English
reading), and ``1.234,56`` where both marks occur (the last one is the decimal mark).
"""
from __future__ import annotations

import bisect
import functools
import itertools
import math
import re
from dataclasses import dataclass

from .linear import NON_SPACE, SPACE, run_start, spaces_before, word_then_spaces_before

_MINUS = "-\u2212\u2012\u2013"  # hyphen-minus, minus sign, figure dash, en dash
_GROUP = ",\u00a0\u202f\u2009' "  # thousands separators; a plain space only in strict 3-digit groups
_NUMBER_RE = re.compile(
    rf"(?P<sign>[{_MINUS}])?(?P<body>\d{{1,3}}(?:[{_GROUP}.]\d{{3}})+(?:[.,]\d+)?(?!\d)|\d+(?:[.,]\d+)?(?!\d))")
_WORDISH = re.compile(r"\w")  # letters, digits, underscore
_LETTER = re.compile(r"[^\W\d_]")  # letters (and numerals that are not digits)
_LETTERS = re.compile(r"[^\W\d_]+")
_MINUS_WORD = re.compile(r"\bminus", re.I)  # five characters whatever their case
_UNIT_WORDS = {"c", "f", "\u00bac", "\u00baf", "\u00ba"}  # 21C, 21ºC (ordinal sign typed for a degree)
CURRENCY_CODES = ("USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "INR", "KRW", "SEK", "NOK", "PLN")


@dataclass(frozen=True)
class Number:
    value: float
    decimals: int  # digits written after the decimal mark
    start: int
    end: int


def _body_value(body: str) -> tuple[float, int] | None:
    """Value and written decimals of a number body, or None if it is not a well-formed number."""
    marks = [c for c in body if not c.isdigit()]
    if not marks:
        return float(body), 0
    last = max(body.rfind("."), body.rfind(","))
    has_both = "." in marks and "," in marks
    tail = body[last + 1:]
    leading_zero = body[:last] == "0"  # "0,016" is a decimal: no number is grouped after a lone 0
    if has_both or (body[last] == "," and (len(tail) != 3 or leading_zero)) or (
            body[last] == "." and marks.count(".") == 1):
        intpart, frac = body[:last], tail  # the last mark is the decimal mark
    else:
        intpart, frac = body, ""  # only grouping marks
    digits = re.sub(r"\D", "", intpart)
    groups = re.split(r"\D", intpart)
    if len(groups) > 1 and (len(groups[0]) > 3 or any(len(g) != 3 for g in groups[1:])):
        return None  # grouping marks not in threes: not a number we can read
    if len({c for c in intpart if not c.isdigit()}) > 1:
        return None  # two different grouping marks
    try:
        value = float(f"{digits}.{frac}" if frac else digits)
    except (ValueError, OverflowError):
        return None
    return (value, len(frac)) if math.isfinite(value) else None


def _attached_word_ok(word: str) -> bool:
    """Letters glued to a number that still leave it a number: a unit or a currency code."""
    return word in _UNIT_WORDS or word.upper() in CURRENCY_CODES


def numbers(text: str) -> list[Number]:
    """Every number written in ``text`` (not digits that are part of a word or an identifier).

    A unit or currency code may be glued on (21C, 21ºC, 307USD, CAD4.18); "minus 3" is -3.
    """
    out = []
    for m in _NUMBER_RE.finditer(text):
        start = m.start()
        before = text[start - 1] if start else ""
        if m.group("sign"):
            # "ORD-16", "9-5": a dash glued to a word or number is no minus sign
            if before and (_WORDISH.match(before) or before in "."):
                start = m.start("body")
                before = text[start - 1]
                if before in _MINUS and start >= 2 and (_WORDISH.match(text[start - 2]) or text[start - 2] in "."):
                    continue  # the digits belong to an identifier such as ORD-16
        elif before and (before.isdigit() or before in "._"):
            continue
        elif before and _WORDISH.match(before):
            # the letters glued before it (a search of [^\W\d_]+$ in text[:start] read the whole prefix)
            glued = run_start(text, start, _LETTER)
            glued_ok = glued < start and _attached_word_ok(text[glued:start]) and not (
                glued and _WORDISH.match(text[glued - 1]))
            if not glued_ok:
                continue
        if before == ":" and start >= 2 and text[start - 2].isdigit():
            continue  # minutes of a clock time (16:35)
        after = text[m.end()] if m.end() < len(text) else ""
        if after and _WORDISH.match(after):
            suffix = _LETTERS.match(text, m.end())  # matched in place: a copy of the rest costs its length
            if after.isdigit() or "_" == after or not suffix or not _attached_word_ok(suffix.group(0)) \
                    or (suffix.end() < len(text) and _WORDISH.match(text[suffix.end()])):
                continue  # "16a", "16th": part of a word
        if after == ":" and text[m.end() + 1:m.end() + 2].isdigit():
            continue  # hours of a clock time
        parsed = _body_value(m.group("body"))
        if parsed is None:
            continue
        value, decimals = parsed
        if start < m.start("body") or word_then_spaces_before(text, start, _MINUS_WORD, 5):  # "minus 3"
            value = -value
        out.append(Number(value, decimals, start, m.end()))
    return out


def parse_number(text: str) -> float | None:
    """The value of ``text`` if it is exactly one number (surrounding space allowed)."""
    found = numbers(text.strip())
    if len(found) == 1 and found[0].start == 0 and found[0].end == len(text.strip()):
        return found[0].value
    return None


def number_matches(written: Number, fact: float, fact_decimals: int) -> bool:
    """Does a number written in an answer state the fact's value?

    Values with at most two decimals (money, counts, temperatures) must match to the cent.
    A value with more decimals (exchange rates carry four) may also be written rounded to
    two or more decimals that keep at least two significant digits: 0.87 states 0.8734,
    0.9 does not, and 0.001 does not state 0.0007.
    """
    if fact_decimals <= 2:  # to the cent: 4.185 does not state 4.18
        return abs(written.value - fact) < 0.005 - 1e-9 or math.isclose(written.value, fact, rel_tol=1e-12)
    if math.isclose(written.value, fact, rel_tol=1e-12, abs_tol=1e-12):
        return True
    significant = len(f"{abs(written.value):.{written.decimals}f}".replace(".", "").lstrip("0"))
    if written.decimals < 2 or written.decimals >= fact_decimals or significant < 2:
        return False
    return math.isclose(round(fact, written.decimals), written.value, rel_tol=1e-12, abs_tol=1e-12)


def fact_decimals(value: float) -> int:
    text = repr(round(value, 6))
    return 0 if text.endswith(".0") or "." not in text else len(text.split(".")[1])


# ---------------------------------------------------------------- text facts
@functools.lru_cache(maxsize=64)  # asked again for every fact span of one answer (issue 55)
def norm(text: str) -> str:
    """Case, spacing and typographic apostrophes ignored, line breaks kept (they end sentences);
    every span in this module indexes this form."""
    lines = (" ".join(line.split()) for line in text.replace("\u2019", "'").splitlines())
    return "\n".join(line for line in lines if line).casefold()


def text_spans(needle: str, text: str) -> list[tuple[int, int]]:
    """Where ``needle`` occurs in ``text`` as a whole token run (case and spacing ignored).

    The match may not continue a word on either side: "shipped" is not in "unshipped",
    ORD-1234 is not in ORD-12345, and a@x.com is not in ba@x.com.
    """
    n, t = norm(needle), norm(text)
    if not n:
        return []
    pattern = r"(?<![\w@])(?<!\w[-.])" + re.escape(n) + r"(?![\w@])(?![-.]\w)"
    return [m.span() for m in re.finditer(pattern, t)]


def number_spans(value: float, text: str) -> list[tuple[int, int]]:
    d = fact_decimals(value)
    return [(n.start, n.end) for n in numbers(norm(text)) if number_matches(n, value, d)]


def fact_value(alternatives: list[str]) -> float | None:
    """A fact whose spellings are all one number is compared as that number."""
    values = {parse_number(a) for a in alternatives}
    if len(values) == 1 and None not in values:
        return values.pop()
    return None


def fact_spans(alternatives: list[str], answer: str) -> list[tuple[int, int]]:
    """Occurrences of a required fact (a list of accepted spellings) in the normalised answer."""
    value = fact_value(alternatives)
    if value is not None:
        return number_spans(value, answer)
    return sorted({s for alt in alternatives for s in text_spans(alt, answer)})


def fact_present(alternatives: list[str], answer: str) -> bool:
    return bool(fact_spans(alternatives, answer))


def value_spans(value: str | float, answer: str) -> list[tuple[int, int]]:
    """Where the answer states this value (a number by value, text as a whole token run)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number_spans(float(value), answer)
    return text_spans(str(value), answer)


# ---------------------------------------------------------------- clauses
_SENTENCE_RE = re.compile(r"[;\n]|(?<=[.!?])\s+")
# ", or" and ", either" keep an alternative in the clause it offers an alternative to; a conjunction's
# spaces are read from the start of their run only (issue 55: from each space of a long run, n*n steps;
# a sentence starting after a line break may start with a space, hence the \n)
_CLAUSE_RE = re.compile(r",\s+(?!or\b|either\b)|(?<![^\S\n])\s+(?:and|but|while|whereas|than)\s+")


class _Layout:
    """The sentences and clauses of one normalised answer, found once, and what ``hedged`` asks of each
    sentence and clause, asked once (issue 55: every fact span used to cut the whole answer again)."""

    def __init__(self, t: str) -> None:
        self.t = t
        self.sentences = _cut(t)
        self._sentence_los = [s[0][0] for s in self.sentences]
        self._clauses = [c for s in self.sentences for c in s]
        self._clause_los = [c[0] for c in self._clauses]
        self._doubt: dict[tuple[int, int], bool] = {}
        self._either_or: dict[tuple[int, int], tuple[bool, bool]] = {}

    def sentence_of(self, span: tuple[int, int]) -> tuple[int, int]:
        """The sentence holding ``span[0]`` (sentences do not overlap; see ``_cut``), else ``span``."""
        i = bisect.bisect_right(self._sentence_los, span[0]) - 1
        if i >= 0 and span[0] <= self.sentences[i][-1][1]:
            return self.sentences[i][0][0], self.sentences[i][-1][1]
        return span

    def clause_of(self, span: tuple[int, int]) -> tuple[int, int]:
        """The clause ``c`` with ``c[0] <= span[0] < max(c[1], c[0] + 1)`` (at most one), else ``span``."""
        i = bisect.bisect_right(self._clause_los, span[0]) - 1
        if i >= 0 and span[0] < max(self._clauses[i][1], self._clauses[i][0] + 1):
            return self._clauses[i]
        return span

    def doubt(self, lo: int, hi: int) -> bool:
        if (lo, hi) not in self._doubt:
            self._doubt[lo, hi] = _DOUBT_RE.search(self.t[lo:hi]) is not None
        return self._doubt[lo, hi]

    def either_or(self, lo: int, hi: int) -> tuple[bool, bool]:
        if (lo, hi) not in self._either_or:
            clause = self.t[lo:hi]
            self._either_or[lo, hi] = (re.search(r"\beither\b", clause) is not None,
                                       re.search(r"\bor\b", clause) is not None)
        return self._either_or[lo, hi]


def _cut(t: str) -> list[list[tuple[int, int]]]:
    """Sentences, each a list of clauses; each sentence and clause starts after the end of the one
    before it (every separator is at least one character), so both lists are in order and disjoint."""
    out = []
    start = 0
    for m in list(_SENTENCE_RE.finditer(t)) + [None]:
        end = m.start() if m else len(t)
        sentence, pos = [], start
        for c in list(_CLAUSE_RE.finditer(t, start, end)) + [None]:
            cend = c.start() if c else end
            sentence.append((pos, cend))
            pos = c.end() if c else end
        out.append(sentence)
        start = m.end() if m else len(t)
    return out


@functools.lru_cache(maxsize=16)
def _layout(t: str) -> _Layout:
    return _Layout(t)


def clauses(text: str) -> list[list[tuple[int, int]]]:
    """The normalised answer cut into sentences (``;``, line breaks, end punctuation), each cut
    into clauses (``, `` and conjunctions); spans index the normalised text."""
    return [list(s) for s in _layout(norm(text)).sentences]


# a negation at most ``words`` words before a position, the words not crossing punctuation
_NEGATION = r"(?:\bnot|n't|\bnever|\bno longer|\bno)\s+(?:[^\s,;.:()]+\s+){0,%d}$"
_DOUBT_RE = re.compile(r"\b(?:maybe|perhaps|possibly|probably|might|unsure|not sure|uncertain|could be|i think|"
                       r"likely|seems|i believe|i guess)\b")
_STRONG_DOUBT_RE = re.compile(r"\b(?:maybe|perhaps|possibly|probably|not sure|unsure|uncertain|i think|"
                              r"i believe|i guess)\b")
_RANGE_AFTER_RE = re.compile(r"\s*(?:-|\u2013|\u2014|to)\s*[-\u2212]?\d")
_RANGE_BEFORE_RE = re.compile(r"\d\s*(?:-|\u2013|\u2014|to)\s*$")


def negation_before(prefix: str, words: int) -> bool:
    """``prefix`` (normalised text) ends with a negation and at most ``words`` more words."""
    return negation_ending_at(prefix, len(prefix), words)


def negation_ending_at(t: str, end: int, words: int) -> bool:
    """``negation_before(t[:end], words)`` without reading (or copying) the whole prefix: a match ends
    with spaces at ``end`` and lies within the last ``words + 2`` runs of non-space characters before
    them ("no longer" is two), so the search starts there; ``\b`` still sees the character before."""
    if not end or not SPACE.match(t, end - 1):
        return False
    start = end
    for _ in range(words + 2):
        start = run_start(t, spaces_before(t, start), NON_SPACE)
    return re.compile(_NEGATION % words).search(t, start, end) is not None


def negated(span: tuple[int, int], answer: str, words: int = 2) -> bool:
    """A negation within ``words`` words before the span ("is not shipped", "isn't 16",
    "is not at all 16"); the words may not cross punctuation."""
    return negation_ending_at(norm(answer), span[0], words)


def sentence_of(span: tuple[int, int], answer: str) -> tuple[int, int]:
    return _layout(norm(answer)).sentence_of(span)


def clause_of(span: tuple[int, int], answer: str) -> tuple[int, int]:
    return _layout(norm(answer)).clause_of(span)


def hedged(span: tuple[int, int], answer: str, rivals: list[tuple[int, int]]) -> bool:
    """The answer doubts the fact or offers an alternative to it.

    Doubt: a doubting word in the fact's sentence ("probably", "I think", "could be").
    Alternative: "either" in the fact's clause, or "or" there together with a rival value
    (``rivals``: spans of other values of the fact's kind), or a range ("21-30°C").
    """
    return hedged_any([span], answer, rivals)


def hedged_any(spans: list[tuple[int, int]], answer: str, rivals: list[tuple[int, int]]) -> bool:
    """``any(hedged(s, answer, rivals) for s in spans)``, with the answer cut and the rivals sorted once."""
    lay = _layout(norm(answer))
    rival_starts = sorted(r[0] for r in rivals)
    for span in spans:
        if lay.doubt(*lay.sentence_of(span)):
            return True
        lo, hi = lay.clause_of(span)
        either, or_ = lay.either_or(lo, hi)
        if either:
            return True
        i = bisect.bisect_left(rival_starts, lo)
        if or_ and i < len(rival_starts) and rival_starts[i] < hi:  # a rival starting in the clause
            return True
        if _RANGE_AFTER_RE.match(lay.t, span[1]) or _range_before(lay.t, span[0]):
            return True
    return False


def _range_before(t: str, end: int) -> bool:
    """``_RANGE_BEFORE_RE.search(t[:end])`` read from the end: a match is a digit, spaces, a one- or
    two-character dash or "to" and spaces, so it starts no earlier than one character before the
    spaces that end two characters before the last spaces."""
    start = max(0, spaces_before(t, max(0, spaces_before(t, end) - 2)) - 1)
    return _RANGE_BEFORE_RE.search(t, start, end) is not None


def doubts_elsewhere(answer: str, fact_spans: list[tuple[int, int]]) -> bool:
    """A sentence without any fact that casts doubt on the answer ("21°C and sunny. Probably.")."""
    lay = _layout(norm(answer))
    starts = sorted(s[0] for s in fact_spans)
    for sentence in lay.sentences:
        lo, hi = sentence[0][0], sentence[-1][1]
        i = bisect.bisect_left(starts, lo)
        if not (i < len(starts) and starts[i] <= hi) and _STRONG_DOUBT_RE.search(lay.t[lo:hi]):
            return True
    return False


class _Spans:
    """Whether some span lies inside a range, answered by bisection: sorted by start, each with the
    least end among it and the spans after it."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self._starts = [s[0] for s in ordered]
        self._least_end = list(itertools.accumulate(reversed([s[1] for s in ordered]), min))[::-1]

    def inside(self, c: tuple[int, int]) -> bool:
        """``any(c[0] <= s[0] and s[1] <= c[1] for s in spans)``."""
        i = bisect.bisect_left(self._starts, c[0])
        return i < len(self._least_end) and self._least_end[i] <= c[1]


def attributed(value_spans: list[tuple[int, int]], own: list[tuple[int, int]],
               others: list[tuple[int, int]], answer: str, neutral: list[tuple[int, int]] = ()) -> bool:
    """Does the value stand with its own entity, and never with another one?

    Each occurrence's scope is its clause; a clause naming no entity borrows from its one
    neighbour in the same sentence that names an entity (both neighbours naming entities is
    ambiguous). Some occurrence must have a scope naming its own entity and no other, and no
    occurrence may have a scope naming another entity but not its own ("Cairo 19°C" for
    Tbilisi's 19°C). ``others`` holds the other entities whose values differ from this one;
    ``neutral`` those with the same value, which name a clause without misattributing it.
    """
    values, own_, others_, neutral_ = (_Spans(list(x)) for x in (value_spans, own, others, neutral))
    stands = False
    for sentence in _layout(norm(answer)).sentences:
        for i, c in enumerate(sentence):
            if not values.inside(c):
                continue
            scope = c
            if not own_.inside(c) and not others_.inside(c):
                if neutral_.inside(c):
                    continue
                named = [n for n in (sentence[i - 1] if i else None,
                                     sentence[i + 1] if i + 1 < len(sentence) else None)
                         if n is not None and (own_.inside(n) or others_.inside(n) or neutral_.inside(n))]
                if len(named) != 1:
                    continue
                scope = named[0]
            if others_.inside(scope) and not own_.inside(scope):
                return False  # the value is paired with another entity
            stands = stands or (own_.inside(scope) and not others_.inside(scope))
    return stands


# ---------------------------------------------------------------- outcomes
def expand_negations(text: str) -> str:
    """The normalised text with contractions spelled out (can't -> can not, isn't -> is not),
    so phrase lists need one form; for matching phrases only (spans do not index it)."""
    t = norm(text)
    t = re.sub(r"\bcan't\b|\bcannot\b", "can not", t)
    t = re.sub(r"\bwon't\b", "will not", t)
    return re.sub(r"n't\b", " not", t)
