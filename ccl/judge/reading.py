"""Reading an answer before judging it: one normal form in which a look-alike letter, an invisible
character, a full-width digit, a typographic minus or a number written in words cannot hide what the
text says (the first step of the answer judge that issue 37 asks for; ruler 1 does not use it yet).

``read(text)`` returns the normal form and what it had to undo, so a judge can both read the
plain text and treat the undoing itself as evidence (a word spelled with a Cyrillic letter inside
an English answer is not an accident). Measured against the red team in experiments/ruler_farming.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .linear import word_then_spaces_before

# Letters of other scripts drawn like Latin ones (lower and upper case), mapped to the Latin letter.
LOOKALIKES = str.maketrans(
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u04bb\u0501\u051b\u051d\u0410\u0412"
    "\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u0408\u0405\u03bf\u03b1\u03b9\u03ba"
    "\u03bd\u03c1\u03c5\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5"
    "\u03a7",
    "aeopcyxijshdqwABEKMHOPCTXIJSoaikvpuABEZHIKMNOPTYX")
# Dashes and minus signs that NFKC leaves alone; before a digit they are a minus.
MINUS_RE = re.compile("[\u2212\u2012\u2013\u2014\u2015\ufe63](?=\\s?\\d)")

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
WORD_VALUES = {w: i for i, w in enumerate(_UNITS)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_WORD = "|".join(sorted(WORD_VALUES, key=len, reverse=True))
# "forty-two", "forty two", "seven"; "three hundred and five", "two hundred", "a hundred" (tried first)
NUMBER_WORDS_RE = re.compile(
    rf"\b(?P<hundreds>{_WORD}|a)\s+hundred\b(?:(?:\s+and)?\s+(?P<htens>{_WORD})\b(?:[-\s](?P<hones>{_WORD})\b)?)?"
    rf"|\b(?P<tens>{_WORD})(?:[-\s](?P<ones>{_WORD}))?\b", re.I)
# group 2 is the unit with the spaces before it, or (no unit) every space before "below" but the last; the
# spaces are read once (issue 55: "\s*" then "\s+" split a run of n spaces n ways, n*n steps)
BELOW_ZERO_RE = re.compile(r"\b(\d+(?:\.\d+)?)"
                           r"(\s*+(?:°\s*+[CF]|degrees?(?:\s++(?:celsius|fahrenheit|[CF]))?)|(?>\s*(?=\s)))"
                           r"\s+below\s+(?:zero|0)\b",
                           re.I)
_BELOW = re.compile("below", re.I)  # five characters whatever their case
_BLANK = re.compile(r"\s*")
_SPACED_CAPITAL = re.compile(r"\s+[A-Z]")
CLOCK_12_RE = re.compile(r"\b(1[0-2]|0?[1-9])(?::([0-5]\d))?\s*([ap])\.?\s*m\b\.?", re.I)


@dataclass(frozen=True)
class Reading:
    text: str  # the normal form
    undone: tuple[str, ...]  # what was undone, in order: invisible, lookalike, digits, minus, number_words, below_zero, clock
    scripts: frozenset[str]  # writing systems of the letters left that are not Latin (CYRILLIC, GREEK, CJK, ...)


def read(text: str) -> Reading:
    """The normal form of ``text`` (never raises on any string)."""
    undone: list[str] = []
    out = unicodedata.normalize("NFKC", text)
    steps = (("invisible", _drop_invisible), ("lookalike", lambda s: s.translate(LOOKALIKES)), ("digits", _ascii_digits),
             ("minus", lambda s: MINUS_RE.sub("-", s)), ("number_words", _number_words),
             ("below_zero", _below_zero), ("clock", _clock_24h))
    for name, step in steps:
        new = step(out)
        if new != out:
            undone.append(name)
            out = new
    return Reading(out, tuple(undone), _scripts(out))


def _drop_invisible(text: str) -> str:
    """Format characters (zero-width space and joiners, soft hyphen, direction marks) removed."""
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def _ascii_digits(text: str) -> str:
    """Decimal digits of other scripts (Arabic-Indic ٣, Devanagari ३) as ASCII digits: NFKC leaves them."""
    return "".join(str(unicodedata.decimal(ch)) if not ch.isascii() and ch.isdecimal() else ch for ch in text)


def _scripts(text: str) -> frozenset[str]:
    found = set()
    for ch in text:
        if ch.isalpha() and not ch.isascii():
            name = unicodedata.name(ch, "")
            script = name.split(" ")[0] if name else "UNKNOWN"
            if script != "LATIN":
                found.add("CJK" if script.startswith("CJK") else script)
    return frozenset(found)


def _number_words(text: str) -> str:
    """Numbers written in words as digits, except a lone "one" (a pronoun) and the "zero" of "below
    zero" (read as a sign below); a run that is not one number ("three four") is left alone."""
    def value(m: re.Match) -> str:
        if m.group("hundreds"):
            low = _below_hundred(m.group("htens"), m.group("hones"))
            return m.group(0) if low is None else str(100 * _word(m.group("hundreds")) + low)
        low = _below_hundred(m.group("tens"), m.group("ones"))
        lone = None if m.group("ones") else m.group("tens").lower()
        # "below zero": read at the end of the text before it, not by a search of that whole prefix
        if low is None or lone == "one" or (lone == "zero" and word_then_spaces_before(m.string, m.start(), _BELOW, 5)):
            return m.group(0)
        return str(low)
    return NUMBER_WORDS_RE.sub(value, text)


def _below_hundred(tens: str | None, ones: str | None) -> int | None:
    """The value of "forty" + "two" (0 with neither), or None when the two words are not one number."""
    if tens is None:
        return 0
    if ones is None:
        return _word(tens)
    t, o = _word(tens), _word(ones)
    return t + o if t >= 20 and t % 10 == 0 and o < 10 else None


def _word(w: str) -> int:
    return 1 if w.lower() == "a" else WORD_VALUES[w.lower()]


def _below_zero(text: str) -> str:
    return BELOW_ZERO_RE.sub(lambda m: f"-{m.group(1)}{m.group(2)}", text)


def _clock_24h(text: str) -> str:
    """12-hour times (3:05 PM, 7 am, 12:30 a.m.) as 24-hour HH:MM."""
    def to24(m: re.Match) -> str:
        h = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "p" else 0)
        # "at 5 p.m." ending a sentence: its last period also ends the sentence
        # (read in place: a copy of the rest of the text for each time would cost its length each time)
        end = "." if m.group(0).endswith(".") and (_BLANK.fullmatch(text, m.end()) or _SPACED_CAPITAL.match(
            text, m.end())) else ""
        return f"{h:02d}:{m.group(2) or '00'}{end}"
    return CLOCK_12_RE.sub(to24, text)
