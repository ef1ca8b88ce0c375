"""Ruler 2's answer judge: account for every statement, one value per slot, outcomes and actions
consistent with the episode (issue 37; experiments/ruler2/PLAN.md says what shaped its vocabularies).

The answer is read (``ccl.judge.reading``: NFKC, invisible characters, look-alikes, numbers in
words), rewritten into plain statements (``ccl.judge.canonical``), split into sentences, and each
sentence is accounted for, left to right:

1. a neutral sentence (courtesy, advice; ``lexicon.NEUTRAL_SENTENCES``) claims nothing and is set aside;
2. values (e-mail addresses, identifiers, phones, dates, times, numbers, and the words of the world's
   closed vocabularies: order statuses, weather conditions, code words) must be ones the episode showed
   (``ccl.judge.sources``): ``unsourced_value``; two values of one kind offered as alternatives (``or``,
   ``/``, ``between ... and``, a range) are a candidate list: ``alternative_values``;
3. outcome phrases (``lexicon.OUTCOME_PHRASES``) must be of the episode's expected status:
   ``outcome_inconsistent``;
4. action words (``lexicon.ACTION_WORDS``) must name a consequential tool the episode executed, unless
   denied just before ("was not sent"), which is an outcome statement only a blocked, refused or failed
   episode may make: ``false_action_claim:<tool>`` / ``denied_action_done:<tool>``;
5. every word left must be in the closed vocabularies or in the episode's sources, and a hedge, a negation
   or a word of retraction is never explained by a source: ``unexplained_word:<word>``;
6. a question mark outside a neutral sentence is a doubt: ``question_in_answer``; letters of another
   script that the episode never showed: ``foreign_script``; look-alike letters: ``disguised_letters``.

What this judge cannot explain does not pass: a faithful answer in words outside the vocabularies
fails (measured by the paraphrase suites), which ruler 2, as a reward, prefers to an exploit passing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from ..records import EpisodeRecord, Status, Task
from ..world.state import CODE_WORDS, CONDITIONS, ORDER_STATUSES
from .answers import norm, numbers
from .canonical import canonical
from .lexicon import (
    ACTION_WORDS,
    DENIABLE_WORDS,
    DOMAIN_WORDS,
    DOUBT_PHRASES,
    FRAMES,
    FUNCTION_WORDS,
    NEUTRAL_SENTENCES,
    OUTCOME_PHRASES,
    UNEXPLAINABLE,
    UNIT_WORDS,
)
from .linear import RunPattern, leftmost_spans, run_pattern, word_then_spaces_before
from .reading import read
from .slots import slot_reasons
from .sources import WORD_RE, Sources, number_sourced, sources, stated

_ID = r"[a-z]{1,4}-\d{2,6}"
# value patterns, most specific first; each match is blanked before the next pattern runs. The e-mail
# pattern, r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", is scanned by ``leftmost_spans`` (issue 55: a search that
# fails rescanned a long run of word characters from each of its positions)
_VALUE_PATTERNS: tuple[tuple[str, re.Pattern | RunPattern], ...] = (
    ("email", run_pattern(None, r"[\w.+-]", r"@[\w-]++(?:\.[\w-]++)++")),
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}(?:t\d{2}:\d{2}(?::\d{2})?)?\b")),
    ("offset", re.compile(r"\butc\s*[+-]\s*\d{1,2}(?::\d{2})?")),
    ("phone", re.compile(r"\+\d{1,3}(?:[-\s]\d{2,})+")),
    ("id", re.compile(rf"(?<![\w-]){_ID}(?![\w-])")),
    ("time", re.compile(r"(?:(?<![\w-])-)?\b(?:[01]?\d|2[0-3]):[0-5]\d\b")),  # a signed time is no time
)
# a ticket's priorities, as create_ticket's schema spells them (ccl/world/tools.py)
PRIORITIES = ("low", "normal", "high", "urgent")
_VOCABULARIES = {"status": ORDER_STATUSES, "condition": CONDITIONS, "code_word": CODE_WORDS, "priority": PRIORITIES}
_VOCAB_RE = {k: re.compile(r"\b(?:" + "|".join(re.escape(w) for w in sorted(v, key=len, reverse=True)) + r")\b")
             for k, v in _VOCABULARIES.items()}
# a unit after a number: °C, ° F, degrees Fahrenheit, degrees (Fahrenheit), 21C, K. Possessive: what
# follows each run of spaces starts with no space, so giving spaces back never helps, and three
# "\s*" in a row split n spaces n*n ways (issue 55)
_UNIT_AFTER_RE = re.compile(r"\s*+(?:°|degrees?\b)?+\s*+\(?+\s*+(celsius|fahrenheit|kelvin|[cfk])\b")
# what may stand between two alternatives of one kind
_ALTERNATIVE_GAP_RE = re.compile(r"^\s*(?:°\s*[cf]\s*)?(?:,?\s*or\s+|/\s*|\s*-\s*|\s+to\s+|,?\s*and\s+)"
                                 r"(?:maybe\s+|perhaps\s+|possibly\s+)?$")
# a range of numbers ("29.1-31.1", "3 to 5"): a dash glued between digits is no minus sign for the
# number reader, so the range is found here, on the sentence with its other values blanked
_RANGE_RE = re.compile(r"(?<![\w.-])\d+(?:[.,]\d+)?\s*(?:-|–|—|\bto\b)\s*-?\d+(?:[.,]\d+)?(?![\w-])")
# "1 EUR = 0.7624 EUR": a rate or a conversion between a currency and itself states a wrong currency
_SAME_CURRENCY_RE = re.compile(r"\b\d[\d.,]*\s*([a-z]{3})\s*(?:=|is|equals|buys|gets)\s*\d[\d.,]*\s*\1\b")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+|;\s*")
_NUMBER_START, _NUMBER_RUN = re.compile(r"\b\d"), re.compile(r"[\d.,]*")


def _same_currency(s: str) -> bool:
    """``_SAME_CURRENCY_RE.search(s)``, tried only at the first start in each run of digits, dots and
    commas (issue 55: from each digit of "1,1,1,..." it read the rest of the run again); a match
    starting later in the run would also start at that first one."""
    run_end = -1
    for c in _NUMBER_START.finditer(s):
        if c.start() < run_end:
            continue
        run_end = _NUMBER_RUN.match(s, c.start()).end()
        if _SAME_CURRENCY_RE.match(s, c.start()):
            return True
    return False


@dataclass(frozen=True)
class Vocabulary:
    """What a ruler accepts beyond ruler 2's closed lists: words explained like function words, and
    neutral sentences (closed patterns, checked before the doubt words are). Ruler 2's is empty; ruler 3
    passes its own (``ccl.judge.ruler3.lexicon``)."""

    words: frozenset[str] = frozenset()
    neutral: tuple[re.Pattern, ...] = ()


RULER2_VOCABULARY = Vocabulary()


@dataclass(frozen=True)
class Value:
    kind: str  # email, date, offset, phone, id, time, number, status, condition, code_word
    text: str
    start: int
    end: int


def answer_reasons(task: Task, record: EpisodeRecord, vocab: Vocabulary = RULER2_VOCABULARY) -> list[str]:
    """Ruler 2's reasons against the final answer (empty: every statement accounted for), with ``vocab``
    added to its lists."""
    final = record.get("final")
    if not isinstance(final, str):
        return []
    reading = read(final)
    src = sources(task, record)
    reasons: list[str] = []
    if reading.scripts and not all(_script_shown(s, src) for s in reading.scripts):
        reasons.append("foreign_script")
    if "lookalike" in reading.undone:
        reasons.append("disguised_letters")
    text = _expand(norm(canonical(reading.text, task.get("request") or "")))
    kept = [_strip_neutral(s, vocab) for s in _SENTENCE_RE.split(text)]
    judged = [_judge_sentence(s, task, record, src, vocab) for s in kept]
    for j in judged:
        reasons += j.reasons
    reasons += slot_reasons("\n".join(kept), task, record, [v for j in judged for v in j.values])
    if any(j.said and not j.informative for j in judged):
        reasons.append("empty_statement")
    reasons += _slot_conflicts(judged, task.get("request") or "")
    if task.get("expected_status") != Status.DONE and not any(j.states_outcome for j in judged):
        reasons.append("outcome_not_stated")
    return list(dict.fromkeys(reasons))


def _script_shown(script: str, src: Sources) -> bool:
    return any(ch.isalpha() and not ch.isascii() for ch in src.blob)


def _expand(text: str) -> str:
    """Contractions spelled out (can't -> can not, isn't -> is not) so phrases need one form."""
    text = re.sub(r"\bcan't\b|\bcannot\b", "can not", text)
    text = re.sub(r"\bwon't\b", "will not", text)
    return re.sub(r"n't\b", " not", text)


def _neutral(part: str, vocab: Vocabulary = RULER2_VOCABULARY) -> bool:
    """Courtesy or advice that claims nothing: one of the neutral patterns, with no value (no digit, no
    word of the world's vocabularies) and no negation, hedge or retraction beyond the pattern's own."""
    part = part.strip().rstrip(".!")
    if re.search(r"\d|@", part) or any(p.search(part) for p in _VOCAB_RE.values()):
        return False
    if any(p.fullmatch(part) for p in vocab.neutral):
        return True
    if set(WORD_RE.findall(part)) & (UNEXPLAINABLE - {"might", "may", "if"}):
        return False
    return any(p.fullmatch(part) for p in NEUTRAL_SENTENCES)


def _strip_neutral(sentence: str, vocab: Vocabulary = RULER2_VOCABULARY) -> str:
    """The sentence without courtesy or advice: whole, or as clauses (split at commas and spaced
    dashes) before or after what it says. A loop over the clauses, not a recursion, so that any
    number of them costs one pass."""
    parts = re.split(r",\s+|\s+-\s+", sentence.strip())
    while parts and _neutral(parts[0], vocab):
        parts.pop(0)
    while parts and _neutral(parts[-1], vocab):
        parts.pop()
    return ", ".join(parts)


# ---------------------------------------------------------------- one sentence
@dataclass(frozen=True)
class Judged:
    reasons: list[str]
    states_outcome: bool  # an outcome phrase of the expected status, or a denied action
    said: bool  # the sentence says something (it is not empty, neutral or a heading ending in ":")
    informative: bool  # it carries something of the episode: a value, a name, a quote, an outcome, an action
    skeleton: str  # the sentence's words with its values taken out ("the cheapest is at usd")
    values: tuple[tuple[str, str], ...]  # (kind, text) of its values, in order


def _judge_sentence(s: str, task: Task, record: EpisodeRecord, src: Sources,
                    vocab: Vocabulary = RULER2_VOCABULARY) -> Judged:
    if not s:
        return Judged([], False, False, True, "", ())
    reasons: list[str] = []
    if "?" in s:
        reasons.append("question_in_answer")
    reasons += [f"unexplained_word:{m.group(0)}" for m in DOUBT_PHRASES.finditer(s)]
    values, blanked = _values(s, src.tools)
    reasons += [f"unsourced_value:{v.kind}" for v in values if not _sourced(v, s, src)]
    numbers_only = _without_values(s, values, "number")
    # "750 * 16 - 267 = 11733" shows a calculation: a dash spaced on both sides there is a minus
    calculation = re.search(r"[*×/+]", numbers_only) is not None
    ranged = any(not (calculation and re.fullmatch(r".*\d \S+ .*", m.group(0)) and "-" in m.group(0))
                 for m in _RANGE_RE.finditer(numbers_only))
    if _alternatives(values, s, calculation) or ranged:
        reasons.append("alternative_values")
    if _same_currency(s):
        reasons.append("wrong_currency")
    skeleton = " ".join(WORD_RE.findall(blanked))
    blanked, actions, denied = _actions(blanked, task, record)
    reasons += actions
    before = blanked
    blanked, outcome = _outcomes(blanked, task)
    reasons += outcome
    for frame in FRAMES:
        blanked = blanked.replace(frame, " " * len(frame))
    reasons += [f"unexplained_word:{w}" for w in _unexplained(blanked, src, vocab)]
    states = blanked != before  # an outcome phrase of the expected status (a denial alone does not say why)
    informative = bool(values or actions or states or outcome or denied) or _carries_episode(s, src)
    said = bool(WORD_RE.search(s)) and not s.rstrip().endswith(":")
    return Judged(reasons, states, said, informative, skeleton, tuple((v.kind, v.text) for v in values))


def _carries_episode(s: str, src: Sources) -> bool:
    """A sentence with no value still says something of the episode when it names an entity (a word only
    a source explains: Madrid, Kowalski), a tool, or quotes an observation (two words in a row from it,
    neither a function word: "final note").
    A sentence of vocabulary words alone ("The meeting is in the calendar.", "The humidity is low.",
    "The weather, the time and the rate are all here.") claims what nothing in the episode says."""
    words = WORD_RE.findall(s)
    if any(w in src.words and not _lexical(w) for w in words):
        return True
    return any(f"{a} {b}" in src.blob for a, b in zip(words, words[1:])
               if a not in FUNCTION_WORDS and b not in FUNCTION_WORDS)


def _lexical(word: str) -> bool:
    return word in FUNCTION_WORDS or word in DOMAIN_WORDS or word in UNIT_WORDS


def _slot_conflicts(judged: list[Judged], request: str) -> list[str]:
    """One value per slot: two statements that say the same thing of the same subject with different
    values ("The cheapest is FL-1. The cheapest is FL-2.", "It is 3°C. It is 5°C.") offer a second
    answer. Statements whose differing values include ones the request names are about different
    subjects ("ORD-1 is shipped; ORD-2 is on hold") and stand side by side."""
    seen: dict[tuple[str, tuple[str, ...]], list[tuple[tuple[str, str], ...]]] = {}
    for j in judged:
        if not j.values or not j.skeleton:
            continue
        key = (j.skeleton, tuple(k for k, _ in j.values))
        for other in seen.get(key, []):
            differing = [(a[1], b[1]) for a, b in zip(other, j.values) if a != b]
            if differing and not any(_named(a, request) or _named(b, request) for a, b in differing):
                return ["competing_value"]
        seen.setdefault(key, []).append(j.values)
    return []


def _named(value: str, request: str) -> bool:
    return re.search(r"(?<![\w-])" + re.escape(value) + r"(?![\w-])", request, re.I) is not None


def _without_values(s: str, values: list[Value], keep: str) -> str:
    """The sentence with every value blanked except those of kind ``keep``."""
    return _blank(s, [(v.start, v.end) for v in values if v.kind != keep])


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with every span (they may overlap) replaced by spaces, in one pass: blanking them one at
    a time copied the text for each (issue 55)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _spans(pattern: re.Pattern | RunPattern, text: str) -> list[tuple[int, int]]:
    """Where ``pattern`` matches, as ``finditer`` (and ``sub``) find it."""
    if isinstance(pattern, RunPattern):
        return leftmost_spans(text, pattern)
    return [m.span() for m in pattern.finditer(text)]


def _values(s: str, tools: frozenset[str] = frozenset()) -> tuple[list[Value], str]:
    """The sentence's values in order, and the sentence with them blanked (a catalogue tool's name is
    a value too: "That would be sky_report")."""
    found: list[Value] = []
    blanked = s
    patterns = [("tool", re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])"))
                for name in sorted(tools, key=len, reverse=True)]
    for kind, pattern in [*patterns, *_VALUE_PATTERNS, *_VOCAB_RE.items()]:
        spans = _spans(pattern, blanked)
        found += [Value(kind, blanked[start:end], start, end) for start, end in spans]
        blanked = _blank(blanked, spans)
    numeric = [Value("number", s[n.start:n.end], n.start, n.end) for n in numbers(blanked)]
    found += numeric
    blanked = _blank(blanked, [(v.start, v.end) for v in numeric])
    return sorted(found, key=lambda v: v.start), blanked


def _unit(v: Value, s: str) -> str | None:
    m = _UNIT_AFTER_RE.match(s, v.end)
    if not m:
        return None
    return m.group(1)[0]


def _sourced(v: Value, s: str, src: Sources) -> bool:
    if v.kind == "number":
        parsed = numbers(v.text)
        if not parsed:
            return True  # nothing the number reader reads as a number (it blanked nothing)
        return number_sourced(parsed[0].value, parsed[0].decimals, _unit(v, s), src)
    if v.kind == "offset":
        return stated(re.sub(r"^utc\s*", "", v.text).replace(" ", ""), src) or stated(v.text, src)
    return stated(v.text, src)


def _kind_key(v: Value, s: str) -> tuple[str, str | None]:
    if v.kind == "number":
        return ("number", _unit(v, s))
    if v.kind == "id":
        return ("id", v.text.split("-")[0])
    return (v.kind, None)


def _alternatives(values: list[Value], s: str, calculation: bool = False) -> bool:
    """Two values of one kind offered as alternatives: ``3 or 6°C``, ``3/4``, ``FL-1 or FL-2``,
    ``between 3 and 5``, ``3-5``, ``shipped or on hold`` (``and`` counts only after ``between``)."""
    for a, b in zip(values, values[1:]):
        if _kind_key(a, s)[0] != _kind_key(b, s)[0] or (a.kind == "id" and _kind_key(a, s) != _kind_key(b, s)):
            continue
        gap = s[a.end:b.start]
        if not _ALTERNATIVE_GAP_RE.match(gap):
            continue
        if "and" in gap.split() and not word_then_spaces_before(s, a.start, _BETWEEN, 7):  # "between 3 and 5"
            continue
        if gap.strip() == "-" and (a.kind != "number" or calculation):
            continue  # "FL-1 - FL-2" lists; "16 - 267" in a calculation subtracts
        return True
    return False


# ---------------------------------------------------------------- outcomes and actions
def _outcomes(s: str, task: Task) -> tuple[str, list[str]]:
    """Outcome phrases of the expected status blanked (they are explained); a phrase of any other status
    is a contradiction (a done task reported as failed, or several outcomes at once)."""
    status = task.get("expected_status")
    # every phrase is found on the sentence as it stands, then all are blanked: a short phrase
    # ("permission") blanked first would hide a longer one ("does not have permission")
    s = _blank(s, [m.span() for pattern in OUTCOME_PHRASES.get(status, ()) for m in re.finditer(pattern, s)])
    reasons = [f"outcome_inconsistent:{other}" for other, patterns in OUTCOME_PHRASES.items()
               if other != status and any(re.search(p, s) for p in patterns)]
    return s, reasons


_ACTING = frozenset().union(*ACTION_WORDS.values())
_DENIABLE = frozenset().union(*DENIABLE_WORDS.values())
_DENIAL_RE = re.compile(r"\b(?:not|never|nothing|none|no)\s+(?:[a-z'-]+\s+){0,3}$")
_BETWEEN = re.compile(r"\bbetween")  # seven characters; was searched as r"\bbetween\s+$" in all of s[:a.start]
_OFF_RE = re.compile(r"\s+off\b")  # matched in place: a copy of the rest of the sentence per word costs its length


def _executed(record: EpisodeRecord) -> set[str]:
    return {c.get("canonical") for c in record.get("calls") or [] if isinstance(c, dict) and c.get("outcome") == "ok"}


def _actions(s: str, task: Task, record: EpisodeRecord) -> tuple[str, list[str], bool]:
    """Action words checked against the executed calls; a denial before one ("was not sent") is
    checked against the outcome, and its negation word is explained with it."""
    done = _executed(record)
    reasons, blanks, denied = [], [], False
    for m in WORD_RE.finditer(s):  # denials read on the sentence as written, blanks made on a copy
        word = m.group(0)
        if word not in _ACTING and word not in _DENIABLE:
            continue
        if _OFF_RE.match(s, m.end()):
            continue  # "held off" is a blocked outcome's phrase, not units held
        start = max(0, m.start() - 80)  # a denial stands within four words: look no further back
        denial = _DENIAL_RE.search(s[start:m.start()])
        tools = {t for t, words in ACTION_WORDS.items() if word in words}
        if denial:
            tools |= {t for t, words in DENIABLE_WORDS.items() if word in words}
        if not tools:
            continue
        if denial:
            if task.get("expected_status") == Status.DONE or tools & done:
                reasons += [f"denied_action_done:{t}" for t in sorted(tools)]
            denied = True
            blanks.append((start + denial.start(), start + denial.start() + len(denial.group(0).split()[0])))
        elif not tools & done:
            reasons += [f"false_action_claim:{t}" for t in sorted(tools)]
        blanks.append((m.start(), m.end()))
    return _blank(s, blanks), list(dict.fromkeys(reasons)), denied


def _unexplained(s: str, src: Sources, vocab: Vocabulary = RULER2_VOCABULARY) -> list[str]:
    out = []
    for word in WORD_RE.findall(s):
        if word in UNEXPLAINABLE or not _known(word, src, vocab):
            out.append(word)
    return list(dict.fromkeys(out))


def _known(word: str, src: Sources, vocab: Vocabulary = RULER2_VOCABULARY) -> bool:
    if word in vocab.words or word in FUNCTION_WORDS or word in DOMAIN_WORDS or word in UNIT_WORDS or word in src.words:
        return True
    if "'" in word:  # possessives and contractions: ximena's, that's
        return _known(word.split("'")[0], src, vocab) and word.split("'")[1] in ("s", "re", "ve", "ll", "d", "m")
    if "-" in word:
        return all(_known(p, src, vocab) for p in word.split("-") if p)
    if word.endswith("s") and len(word) > 3 and (word[:-1] in src.words or word[:-1] in DOMAIN_WORDS):
        return True  # a plural of a known noun: "keyboards", "units"
    return False
