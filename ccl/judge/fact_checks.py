"""Ruler 1's answer checks that are not word lists: every required fact present, each parallel value
beside its own entity, the right currency, not an echo of the request (with ruler 1's word-list
checks, competing, hedged and negated facts, which ruler 2 and 3 do not keep). Moved here unchanged
from ``validate`` (issue 57) so that rulers 2 and 3 run them without importing ruler 1's validator;
``validate`` imports them from here, so its verdicts keep their bytes."""
from __future__ import annotations

import re

from ..records import Status, Task
from .answers import (
    attributed,
    doubts_elsewhere,
    fact_decimals,
    fact_spans,
    fact_value,
    hedged_any,
    negated,
    norm,
    number_matches,
    numbers,
    text_spans,
    value_spans,
)
from .linear import run_start
from .task_facts import currency_codes, task_facts

_CURRENCY_AFTER_RE = re.compile(r"[ \t]*([^\W\d]+(?:[ \t]+[^\W\d]+)?|[$€£¥₹₩]|zł)")
_CURRENCY_BEFORE_RE = re.compile(r"(?:^|(?<=[\s(]))((?:[^\W\d]+[ \t]+)?[^\W\d]*\$?|[€£¥₹₩])[ \t:]*$")
_SPACE_OR_COLON, _SPACE_OR_TAB, _LETTER = re.compile(r"[ \t:]"), re.compile(r"[ \t]"), re.compile(r"[^\W\d]")


def echoes(answer: str, request: str) -> bool:
    """The answer is empty, repeats the whole request, adds fewer than three words to it, or
    is a contiguous run of at least half of the request's words."""
    a = re.findall(r"\w+", norm(answer))
    r = re.findall(r"\w+", norm(request))
    if not a:
        return True
    joined_a, joined_r = f" {' '.join(a)} ", f" {' '.join(r)} "
    if joined_a in joined_r:
        return 2 * len(a) >= len(r)
    return joined_r in joined_a and len(a) - len(r) < 3


def _currencies_near(span: tuple[int, int], answer: str) -> set[str]:
    """Currency codes named right after or right before a number (two words, a code, a symbol)."""
    text = norm(answer)
    found: set[str] = set()
    if m := _CURRENCY_AFTER_RE.match(text, span[1]):
        words = m.group(1).split()
        found |= currency_codes(" ".join(words)) or currency_codes(words[0])
    if m := _CURRENCY_BEFORE_RE.search(text, _currency_window(text, span[0]), span[0]):
        words = m.group(1).split()
        found |= currency_codes(" ".join(words)) or currency_codes(words[-1]) if words else set()
    return found


def _currency_window(text: str, end: int) -> int:
    """Where a match of ``_CURRENCY_BEFORE_RE`` in ``text[:end]`` can start (searching all of it once per
    number was quadratic, issue 55): it is, read backwards from its end, spaces or colons, a dollar sign,
    letters, spaces, letters (each maybe empty), or a currency symbol (one character more); it ends at
    ``end``, or before a line break there (``$`` matches before a final line break)."""
    ends = (end, end - 1) if end and text[end - 1] == "\n" else (end,)
    return min(_words_before(text, e) for e in ends)


def _words_before(text: str, end: int) -> int:
    start = run_start(text, end, _SPACE_OR_COLON)
    if start and text[start - 1] == "$":
        start -= 1
    for run in (_LETTER, _SPACE_OR_TAB, _LETTER):
        start = run_start(text, start, run)
    return max(0, start - 1)


def _other_numbers(task: dict, answer: str) -> list[tuple[int, int]]:
    """Spans of the numbers in the answer that are neither in the request nor a required fact."""
    request = {round(n.value, 6) for n in numbers(norm(task["request"]))}
    values = [v for v in (fact_value(x) for x in task["required_facts"]) if v is not None]
    return [(n.start, n.end) for n in numbers(norm(answer)) if round(n.value, 6) not in request
            and not any(number_matches(n, v, fact_decimals(v)) for v in values)]


def fact_reasons(task: Task, answer: str) -> list[str]:
    """Competing values, hedges, negations, misattributed parallel values, wrong currencies."""
    reasons: set[str] = set()
    facts = task_facts(task)
    spans_of = [fact_spans(f.spellings, answer) for f in facts]
    all_spans = [s for spans in spans_of for s in spans]
    if all_spans and doubts_elsewhere(answer, all_spans):
        reasons.add("hedged_fact")
    for i, (f, spans) in enumerate(zip(facts, spans_of)):
        if not spans:
            continue  # missing facts are the write-up's reason already
        competing = [s for c in f.competitors for s in value_spans(c, answer)]
        # rivals: other values of the fact's kind (competitors; for a number, any other number)
        own_spans = set(spans)  # a set: a list made this test cost the number of spans (issue 55)
        rivals = [s for s in competing + (_other_numbers(task, answer) if f.value is not None else [])
                  if s not in own_spans]
        if f.exclusive:
            competing += rivals  # a computed result: any other number is a second answer
        if any(not negated(s, answer) for s in competing):
            reasons.add("competing_value")
        if hedged_any(spans, answer, rivals):
            reasons.add("hedged_fact")
        if task["expected_status"] == Status.DONE and any(negated(s, answer) for s in spans):
            reasons.add("negated_fact")
        if f.entity:
            own = sorted({s for e in f.entity for s in text_spans(e, answer)})
            def entity_spans(same: bool) -> list[tuple[int, int]]:
                return sorted({s for j, g in enumerate(facts) if j != i and (g.value == f.value) == same
                               for e in g.entity for s in text_spans(e, answer)})
            # an entity whose value equals this one's may stand beside it without misattributing it
            if not attributed(spans, own, entity_spans(False), answer, neutral=entity_spans(True)):
                reasons.add("fact_not_attributed")
        if f.currency:
            named = [_currencies_near(s, answer) for s in spans]
            if all(codes and f.currency not in codes for codes in named):
                reasons.add("wrong_currency")
    return sorted(reasons)
