"""The judge reads hostile text in linear time and gives the answers it gave before (issue 55).

The references are the patterns, and the searches of a whole prefix, as they were before issue 55, kept
here as strings. Each replacement is compared with its reference on hand cases and on seeded random
strings from alphabets rich in what it reads; and every committed transcript is judged again, each
verdict row byte-identical to the committed one. No timing here: ``python -m scripts.bench_judge``
prints the worst cases and time(16k)/time(8k).
"""
from __future__ import annotations

import gzip
import json
import random
import re
from pathlib import Path

import pytest

from ccl.artifacts.inputs import read_rows, split_rows
from ccl.artifacts.jsonio import dumps
from ccl.judge import actions, answers, canonical, effects, fact_checks, reading, slots, sources, statements, structure
from ccl.judge.judging import judge_rows
from ccl.judge.linear import AddressIndex, leftmost_spans, occurs_whole, run_start, word_then_spaces_before

ROOT = Path(__file__).resolve().parents[1]
_NUM = r"-?\d+(?:[.,]\d+)?"
_V, _W = r"-?\d+(?:\.\d+)?", r"[A-Za-z][\w-]*"
OLD = {  # the patterns before issue 55
    "identifier": r"\b([A-Z]{1,4})-\d{2,6}\b|[\w.+-]+@[\w-]+\.[\w.]+",
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "clause": r",\s+(?!or\b|either\b)|\s+(?:and|but|while|whereas|than)\s+",
    "below_zero": r"\b(\d+(?:\.\d+)?)(\s*(?:°\s*[CF]|degrees?(?:\s+(?:celsius|fahrenheit|[CF]))?)?)\s+below\s+(?:zero|0)\b",
    "unit_after": r"\s*(?:°|degrees?\b)?\s*\(?\s*(celsius|fahrenheit|kelvin|[cfk])\b",
    "dual": (rf"(?P<a>{_NUM})\s*°\s*(?P<ua>[CF])\s*(?:\(\s*(?:or\s+|i\.e\.\s+|=\s*|~\s*)?(?P<b>{_NUM})\s*°\s*"
             rf"(?P<ub>[CF])\s*\)|/\s*(?P<b2>{_NUM})\s*°\s*(?P<ub2>[CF])\b)"),
    "rule": r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$",
    "respectively": (r"^\s*(?P<subj>[^.;:\n]+?)\s+(?P<verb>is|are|was|were|have|has|cost|costs)\s+"
                     r"(?P<vals>[^.;:\n]+?),?\s+respectively\b"),
    "split_list": r",\s*(?:and\s+)?|\s+and\s+",
    "values_then_names": (rf"(?P<vals>{_V}(?:,\s*{_V})*,?\s+and\s+{_V})\s+(?P<names>{_W}(?:,\s*{_W})*,?\s+and\s+{_W}),?"
                          r"\s+respectively\b"),
    "same_currency": r"\b\d[\d.,]*\s*([a-z]{3})\s*(?:=|is|equals|buys|gets)\s*\d[\d.,]*\s*\1\b",
    "bracketed": r"(-?\d+(?:[.,]\d+)?)\s*\(\s*(?:or\s+)?(-?\d+(?:[.,]\d+)?)\s*\)",
    # searched in text[:end], once per number or span
    "letters_before": r"[^\W\d_]+$", "minus_before": r"\bminus\s+$", "below_before": r"below\s+$",
    "negation": r"(?:\bnot|n't|\bnever|\bno longer|\bno)\s+(?:[^\s,;.:()]+\s+){0,%d}$",
    "range_before": r"\d\s*(?:-|\u2013|\u2014|to)\s*$",
    "currency_before": r"(?:^|(?<=[\s(]))((?:[^\W\d]+[ \t]+)?[^\W\d]*\$?|[€£¥₹₩])[ \t:]*$",
    "symbol_before": r"(us\$|c\$|ca\$|a\$|au\$|[$€£¥₹₩])\s*$", "word_before": r"([a-z]{3})\s+$",
}
TOKENS = ["a", "B", "x", "é", "1", "12", "0.5", "-3", "1,234", "_", ".", ",", "+", "-", "@", "AB-12", "ORD-1234", "a.b@c.de",
          " ", "  ", "\t", "\n", "\u00a0", ";", ":", "(", ")", "|", "$", "€", "us$", "usd", "eur", "°", "°C", "°F", "C", "to",
          "and", " and ", "or", "either", "not", "no", "n't", "never", "no longer", "minus", "MINUS", "below", "zero",
          "degrees", "celsius", "is", "are", "cost", "respectively", "|---|", ":--", "~~", "'ok'", "Results:", "maybe"]


def texts(seed: int, n: int = 3000, tokens: list[str] = TOKENS, longest: int = 24) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(tokens) for _ in range(rng.randint(0, longest))) for _ in range(n)]


def spans(matches) -> list:
    return [(m.span(), m.groups()) for m in matches]


def same_match(a, b) -> bool:
    return (a and (a.span(), a.groups())) == (b and (b.span(), b.groups()))


# ---------------------------------------------------------------- scans
HAND = ["AB-12.foo@x.com", "a@b.c-d@e.f", "AB-12AB-12x@y.z", ".AB-12.AB-12.x@y.z", "AB-12+AB-34@c.d", "x" * 50 + "@y.z",
        "ORD-" * 20, "a." * 30 + "@b.c", '{"to": "zoe@ex.com", "id": "ORD-12345"}', "1" * 60 + "°C (140°F)"]


def test_the_identifier_scan_finds_what_the_old_pattern_found():
    old = re.compile(OLD["identifier"])
    for t in HAND + texts(1, tokens=TOKENS + ["@b.c", "AB-12.", "+a@b.c"]):
        assert leftmost_spans(t, effects._IDENTIFIER) == [m.span() for m in old.finditer(t)], t


def test_the_email_value_pattern_finds_what_it_found():
    old, new = re.compile(OLD["email"]), statements._VALUE_PATTERNS[0][1]
    for t in HAND + texts(2, tokens=TOKENS + ["@b.c", "+a@b.c", "@x-y.z."]):
        assert statements._spans(new, t) == [m.span() for m in old.finditer(t)], t


@pytest.mark.parametrize("name, new", [
    ("below_zero", reading.BELOW_ZERO_RE), ("dual", canonical._DUAL_RE), ("bracketed", slots._BRACKETED_RE),
    ("clause", answers._CLAUSE_RE)], ids=["below_zero", "dual", "bracketed", "clause"])
def test_rewritten_scans_match_as_before(name, new):
    old = re.compile(OLD[name], new.flags & re.I)
    extra = ["1 below zero", "3 °C below 0", "5 degrees celsius below zero", "33°C (91°F)", "1 (or 2)", ", or ", ", but "]
    for t in HAND + extra + texts(3):
        assert spans(new.finditer(t)) == spans(old.finditer(t)), t


@pytest.mark.parametrize("name, new", [("unit_after", statements._UNIT_AFTER_RE), ("rule", canonical._RULE_RE)],
                         ids=["unit_after", "rule"])
def test_rewritten_anchored_patterns_match_as_before_at_every_position(name, new):
    old = re.compile(OLD[name])
    for t in ["° f", " degrees (fahrenheit)", "| --- | :--: |", "  |---|  "] + texts(4, n=1500):
        for i in range(len(t) + 1):
            assert same_match(new.match(t, i), old.match(t, i)), (t, i)


def test_lists_split_as_before():
    old = re.compile(OLD["split_list"])
    for t in texts(5, tokens=["1", "a", ",", " ", "  ", "and", " and ", "\t", "x"]):
        assert canonical._LIST_SEPARATOR_RE.split(t) == old.split(t), t


# ---------------------------------------------------------------- scans emulated in Python
def old_respectively_sentence(text: str) -> str:
    """canonical._respectively_sentence before issue 55 (its replacement functions are unchanged)."""
    split = re.compile(OLD["split_list"])

    def split_list(s: str) -> list[str]:
        return [p.strip() for p in split.split(s) if p.strip()]

    def values_then_names(m: re.Match) -> str:
        values, names = split_list(m.group("vals")), split_list(m.group("names"))
        return m.group(0) if len(values) != len(names) else ", ".join(f"{v} {n}" for v, n in zip(values, names))

    text = re.compile(OLD["values_then_names"], re.I).sub(values_then_names, text)
    # the pairing itself did not change (canonical.pair_respectively); the patterns and the list split did
    return re.compile(OLD["respectively"], re.I).sub(lambda m: canonical.pair_respectively(m, split_list), text)


def respectively_texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    subj, vals = ["A", "B", "the x", "A and B", "A, B", "A, B and C", "  "], ["1", "2.5", "-3", "1, 2", "1 and 2", "1, 2 and 3", "x"]
    seps, verbs = [" ", "  ", ", ", ",", "\t", " \n ", ". "], ["is", "are", "cost", "costs", "IS"]
    out = []
    for _ in range(n):
        out.append("".join([rng.choice(["", " ", "\n"]), rng.choice(subj), rng.choice(seps), rng.choice(verbs), rng.choice(seps),
                            rng.choice(vals), rng.choice(["", ","]), rng.choice(seps),
                            rng.choice(["respectively", "Respectively", "respectivelyx"]), rng.choice(["", ".", " respectively"])]))
        out.append("".join([rng.choice(["", "x ", "1, "]), rng.choice(vals), rng.choice(seps), "and", rng.choice(seps),
                            rng.choice(vals), " ", rng.choice(subj), rng.choice(seps), "and ", rng.choice(subj),
                            rng.choice(["", ","]), rng.choice(seps), "respectively"]))
    return out


def test_respectively_is_rewritten_as_before():
    cases = ["A and B are 1 and 2, respectively", "1, 2 and 3 CAD, NOK and USD, respectively", " " * 300 + "a respectively",
             "1" * 300 + " respectively", "respectively " + "a is " * 60, ("1, " * 100) + "respectively"]
    rewritten = 0
    for t in cases + respectively_texts(6, 3000) + texts(7, tokens=TOKENS + ["respectively"] * 6):
        assert canonical._respectively_sentence(t) == old_respectively_sentence(t), t
        rewritten += canonical._respectively_sentence(t) != t
    assert rewritten > 100  # the cases reach both rewrites, not only the texts left alone


def test_other_emulated_scans_answer_as_before():
    same, segment = re.compile(OLD["same_currency"]), structure.SEGMENT_LABEL_RE  # the last two kept their patterns
    lines = ["\n", " ", "\t", ",", ";", "|", " - ", "—", "Label", "Rate x", "ok", "'ok':", "Results:", "1", "=", "usd", "1,5"]
    for t in texts(8) + texts(9, tokens=lines):
        assert statements._same_currency(t) == (same.search(t) is not None), t
        assert structure._segment_labels(t) == [m.group("label") for m in segment.finditer(t)], t
        assert structure._table_rows(t) == structure.TABLE_ROW_RE.findall(t), t
        assert structure._framed(t) == (structure.FRAMING_RE.search(t) is not None), t


# ---------------------------------------------------------------- searches at the end of a prefix
PREFIX_TOKENS = TOKENS + ["not ", " n't ", "no longer ", "5 - ", "5 to ", "us$ ", "$ ", "eur ", "ab  ", "between ", "will ",
                         "no email ", "has been ", "to be ", "nothing ", "(", "!"]


def test_prefix_searches_read_from_the_end_give_the_same_answer():
    old = {k: re.compile(OLD[k], re.I if k in ("minus_before", "below_before") else 0)
           for k in ("letters_before", "minus_before", "below_before", "range_before", "currency_before",
                     "symbol_before", "word_before")}
    negation = {w: re.compile(OLD["negation"] % w) for w in (2, 3)}
    for t in texts(10, n=1500, tokens=PREFIX_TOKENS, longest=16):
        for i in range(len(t) + 1):
            p = t[:i]
            if i and t[i - 1] != "\n":  # numbers() asks only after a word character ($ also matches before "\n")
                letters = old["letters_before"].search(p)
                assert (letters.start() if letters else i) == run_start(t, i, answers._LETTER), (t, i)
            assert word_then_spaces_before(t, i, statements._BETWEEN, 7) == bool(re.search(r"\bbetween\s+$", p))
            assert word_then_spaces_before(t, i, answers._MINUS_WORD, 5) == bool(old["minus_before"].search(p))
            assert word_then_spaces_before(t, i, reading._BELOW, 5) == bool(old["below_before"].search(p))
            assert answers._range_before(t, i) == bool(old["range_before"].search(p)), (t, i)
            for w, pattern in negation.items():
                assert answers.negation_ending_at(t, i, w) == bool(pattern.search(p)), (t, i, w)
            assert actions._negated(t, i) == bool(actions._DENIED_RE.search(p) or actions._NOT_YET_RE.search(p))
            window = fact_checks._currency_window(t, i)
            assert same_match(fact_checks._CURRENCY_BEFORE_RE.search(t, window, i), old["currency_before"].search(p))
            for name, new in (("symbol_before", slots._SYMBOL_BEFORE_RE), ("word_before", slots._WORD_BEFORE_RE)):
                assert same_match(new.search(t, slots._before(t, i), i), old[name].search(p)), (t, i, name)


# ---------------------------------------------------------------- clauses, hedges, attribution
def old_clauses(t: str) -> list[list[tuple[int, int]]]:
    out, start, clause = [], 0, re.compile(OLD["clause"])
    for m in list(answers._SENTENCE_RE.finditer(t)) + [None]:
        end = m.start() if m else len(t)
        sentence, pos = [], start
        for c in list(clause.finditer(t, start, end)) + [None]:
            sentence.append((pos, c.start() if c else end))
            pos = c.end() if c else end
        out.append(sentence)
        start = m.end() if m else len(t)
    return out


def old_hedged(span, t: str, rivals) -> bool:
    """answers.hedged before issue 55, on normalised text (old_clauses for its sentences and clauses)."""
    cut = old_clauses(t)
    lo, hi = next(((s[0][0], s[-1][1]) for s in cut if s[0][0] <= span[0] <= s[-1][1]), span)
    if answers._DOUBT_RE.search(t[lo:hi]):
        return True
    lo, hi = next((c for s in cut for c in s if c[0] <= span[0] < max(c[1], c[0] + 1)), span)
    if re.search(r"\beither\b", t[lo:hi]) or (re.search(r"\bor\b", t[lo:hi]) and any(lo <= r[0] < hi for r in rivals)):
        return True
    return bool(answers._RANGE_AFTER_RE.match(t, span[1]) or re.search(OLD["range_before"], t[:span[0]]))


def old_attributed(values, own, others, t: str, neutral=()) -> bool:
    def inside(spans, c):
        return any(c[0] <= s[0] and s[1] <= c[1] for s in spans)
    stands = False
    for sentence in old_clauses(t):
        for i, c in enumerate(sentence):
            if not inside(values, c):
                continue
            scope = c
            if not inside(own, c) and not inside(others, c):
                if inside(neutral, c):
                    continue
                named = [n for n in (sentence[i - 1] if i else None, sentence[i + 1] if i + 1 < len(sentence) else None)
                         if n is not None and (inside(own, n) or inside(others, n) or inside(neutral, n))]
                if len(named) != 1:
                    continue
                scope = named[0]
            if inside(others, scope) and not inside(own, scope):
                return False
            stands = stands or (inside(own, scope) and not inside(others, scope))
    return stands


def test_clauses_hedges_and_attribution_as_before():
    rng = random.Random(11)
    words = ["16", "17", "paris", "rome", "or", "either", "and", "but", ",", ".", ";", "\n", "maybe", "not", "-", "to", "is"]
    for raw in texts(12, n=2000, tokens=[w + " " for w in words] + words):
        t = answers.norm(raw)
        assert answers.clauses(raw) == old_clauses(t), raw
        found = [(m.start(), m.end()) for m in re.finditer(r"\d+|paris|rome", t)]
        if not found:
            continue
        picks = [rng.sample(found, rng.randint(0, len(found))) for _ in range(4)]
        for span in found:
            assert answers.sentence_of(span, raw) == next(((s[0][0], s[-1][1]) for s in old_clauses(t)
                                                          if s[0][0] <= span[0] <= s[-1][1]), span)
            assert answers.hedged(span, raw, picks[0]) == old_hedged(span, t, picks[0]), (raw, span)
            assert answers.negated(span, raw) == bool(re.search(OLD["negation"] % 2, t[:span[0]]))
        assert answers.hedged_any(found, raw, picks[1]) == any(old_hedged(s, t, picks[1]) for s in found)
        assert answers.attributed(*picks[:3], raw, picks[3]) == old_attributed(*picks[:3], t, picks[3]), raw


# ---------------------------------------------------------------- lookups in what the episode showed
def test_whole_token_lookups_as_before():
    rng = random.Random(13)
    alphabet = ["a", "B", "1", "-", "_", ".", "@", "+", " ", "x", '"', "{", "ab-12", "a@b.c"]
    for text in texts(14, n=3000, tokens=alphabet):
        shown = effects._Shown(text[:rng.randint(0, len(text))])
        shown.add(text[len(shown.text):])
        for _ in range(6):
            a = rng.randint(0, max(0, len(text) - 1))
            token = text[a:a + rng.randint(1, 8)] if text and rng.random() < 0.7 else rng.choice(["a", "a@b.c", "-", "AB-12"])
            assert shown.has(token) == bool(re.search(r"(?<![\w-])" + re.escape(token) + r"(?![\w-])", text)), (text, token)
            stated = r"(?<![\w@.+-])" + re.escape(token) + r"(?![\w@+])(?![.-]\w)"
            assert occurs_whole(text, token, r"[\w@.+-]", r"[\w@+]|[.-]\w") == bool(re.search(stated, text))


def _whole(text: str, token: str) -> bool:
    return bool(re.search(r"(?<![\w-])" + re.escape(token) + r"(?![\w-])", text))


@pytest.mark.parametrize("pair_budget", [0, 10**9], ids=["automaton", "pairs"])
def test_address_index_answers_as_the_whole_token_search(pair_budget):
    rng = random.Random(21)
    alphabet = ["a", "b", "1", "_", "-", ".", "+", "@", " ", "é", "a@b.c", ".a", "b."]
    for text in texts(22, n=1500, tokens=alphabet):
        index = AddressIndex(text, pair_budget=pair_budget)
        asked = {text[a:b] for a, b in leftmost_spans(text, effects._IDENTIFIER)}
        for _ in range(8):  # pieces of the text around an "@", and addresses it may not hold
            a = rng.randint(0, max(0, len(text) - 1))
            asked |= {text[a:a + rng.randint(3, 12)], rng.choice(["a@b.c", "b.a@b.c", "a@b.c.", "+a@b.c", "a@b"])}
        for token in asked:
            assert index.has(token) == _whole(text, token), (text, token, pair_budget)


def test_address_index_by_hand():
    text = "to x.zoe@ex.com. cc ann+1@a-b.co.uk, not bob@ex.comma or sam@ex.com-x"
    for index in (AddressIndex(text), AddressIndex(text, pair_budget=0)):
        assert index.has("zoe@ex.com") and index.has("x.zoe@ex.com")  # after ".", and ending before "."
        assert index.has("1@a-b.co") and index.has("ann+1@a-b.co.uk")  # after "+", before "."
        assert not index.has("oe@ex.com")  # "z" before it
        assert not index.has("bob@ex.com")  # "ma" after it
        assert not index.has("sam@ex.com")  # "-x" after it
        assert not index.has("zoe@ex.co")  # "m" after it


def test_shown_answers_alike_past_its_searches(monkeypatch):
    """Past ``FINDS`` searches an address is looked up in the index: the same answers with the index
    built at once, after two searches, or never."""
    rng = random.Random(23)
    alphabet = ["a", "1", "-", ".", "@", "+", " ", "a@b.c", "x.y@", '"']
    for finds in (0, 2, 10**9):  # index at once, after two searches of the same text, never
        monkeypatch.setattr(effects._Shown, "FINDS", finds)
        for text in texts(24, n=800, tokens=alphabet):
            cut = rng.randint(0, len(text))
            shown = effects._Shown(text[:cut])
            for step, seen in enumerate((text[:cut], text)):
                if step:
                    shown.add(text[cut:])
                for token in {text[a:b] for a, b in leftmost_spans(text, effects._IDENTIFIER)}:
                    assert shown.has(token) == _whole(seen, token), (text, cut, token, finds)


def old_number_sourced(value, decimals, unit, shown) -> bool:
    """Before issue 55: every shown value tried (the per-value rule, sources.shown_as, is unchanged)."""
    return any(sources.shown_as(x, value, decimals, unit) for x in shown)


def test_sourced_numbers_as_before():
    rng = random.Random(15)
    for _ in range(3000):
        scale = rng.choice([1, 10, 1000, 1e9, 1e-3])
        shown = sorted({round(rng.uniform(-50, 150) * scale, rng.randint(0, 6)) for _ in range(rng.randint(1, 40))} | {1.0})
        src = sources.Sources("", frozenset(), tuple(shown), frozenset())
        for _ in range(10):
            x = rng.choice(shown)
            value = rng.choice([x, round(x, rng.randint(0, 4)), x * 9 / 5 + 32, round(x * 9 / 5 + 32), x + 1e-10, x + 0.5,
                                rng.uniform(-100, 300) * scale])
            decimals, unit = rng.randint(0, 6), rng.choice([None, "c", "f"])
            assert sources.number_sourced(value, decimals, unit, src) == old_number_sourced(value, decimals, unit, shown)


# ---------------------------------------------------------------- the committed verdicts
RUN_SETS = [(ROOT / "results" / "runs", ROOT / "data" / "v1"), (ROOT / "results" / "study2" / "runs", ROOT / "data" / "study2")]


def test_every_committed_transcript_is_judged_byte_identically():
    """Both rulers' verdict rows, as the judge stage writes them, for every committed evaluation run of both
    studies (5,256 episodes when all are present)."""
    compared = 0
    for runs, data in RUN_SETS:
        for folder in sorted(runs.glob("*")) if runs.is_dir() else []:
            if not (folder / "verdicts.jsonl.gz").is_file() or not (data / "tasks").is_dir():
                continue
            splits = json.loads((folder / "generation.json").read_text())["splits"]
            tasks = {t["id"]: t for split in splits for t in split_rows(data / "tasks", split)}
            rows = judge_rows(tasks, read_rows(folder / "episodes.jsonl.gz", "evaluate"), str(folder))
            committed = gzip.open(folder / "verdicts.jsonl.gz", "rt", encoding="utf-8").read().splitlines()
            assert [dumps(r) for r in rows] == committed, folder.name
            compared += len(rows)
    if not compared:
        pytest.skip("no committed transcripts with their task files in this checkout")
