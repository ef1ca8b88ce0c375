"""Linear-time search for the first JSON value in model text (issue 38).

The action parser takes the first bracket from which Python's ``json`` decoder reads a value. Trying
the decoder at every bracket is quadratic on adversarial text (closing brackets inside strings: each
try reads to the end before failing; a 16,000-character output took a second). Here one pass of a
recogniser with a memo per position tells, for every bracket, whether the decoder would fail there;
the decoder runs only where the recogniser says it succeeds. So the result is the old one, bracket for
bracket, in linear time.

The recogniser must never call a value invalid that the decoder reads (that would change results); it
may call valid what the decoder refuses (the decoder then refuses it, as before). It follows CPython's C
scanner (``Modules/_json.c``): ASCII whitespace `` \\t\\n\\r``, strings through the decoder's own
``scanstring``, numbers as ``_match_number_unicode``, the literals null/true/false/NaN/Infinity/
-Infinity. The decoder also fails on nesting deeper than the interpreter's recursion budget; the
recogniser reports each value's depth so that a budget, once measured, skips every deeper bracket.
"""
from __future__ import annotations

import json
import re
from json.decoder import scanstring
from typing import Any, Iterator

FAILED = (-1, 0)
_WS = " \t\n\r"
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
_LITERALS = {"n": "null", "t": "true", "f": "false", "N": "NaN", "I": "Infinity"}
_OPENERS = re.compile(r"[\[{]")


def _skip(s: str, i: int) -> int:
    n = len(s)
    while i < n and s[i] in _WS:
        i += 1
    return i


def _string_end(s: str, i: int) -> int:
    """End of the string whose quote is at ``i``, or -1."""
    try:
        return scanstring(s, i + 1, True)[1]
    except ValueError:
        return -1


def _scalar(s: str, i: int) -> int:
    """End of the string, number or literal at ``i``, or -1 (``i`` is not a container)."""
    if i >= len(s):
        return -1
    c = s[i]
    if c == '"':
        return _string_end(s, i)
    if c in _LITERALS:
        word = _LITERALS[c]
        return i + len(word) if s.startswith(word, i) else -1
    if s.startswith("-Infinity", i):
        return i + 9
    m = _NUMBER.match(s, i)
    return m.end() if m else -1


def _key_value_start(s: str, j: int) -> int:
    """From a key's quote at ``j``: the position of its value (after ``"key" :``), or -1."""
    if j >= len(s) or s[j] != '"':
        return -1
    k = _string_end(s, j)
    if k < 0:
        return -1
    k = _skip(s, k)
    return _skip(s, k + 1) if k < len(s) and s[k] == ":" else -1


def _open(s: str, i: int, stack: list, memo: dict) -> tuple[int, tuple[int, int] | None]:
    """Enter the container at ``i``: (where its first value starts, None), or (-, result) when it
    closes at once or fails."""
    closer = "]" if s[i] == "[" else "}"
    j = _skip(s, i + 1)
    if j < len(s) and s[j] == closer:
        return -1, (j + 1, 1)
    stack.append([i, closer, 0])
    if closer == "]":
        return j, None
    k = _key_value_start(s, j)
    return (k, None) if k >= 0 else (-1, FAILED)


def value_at(s: str, start: int, memo: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """(end, nesting depth) of the JSON value at ``start``, or FAILED; ``memo`` is shared by all starts
    in ``s``, so a whole text is recognised once."""
    stack: list[list] = []  # open containers: [start, closer, deepest child so far]
    i = start
    while True:
        r = memo.get(i)
        if r is None:
            if i < len(s) and s[i] in "[{":
                at = i
                i, r = _open(s, at, stack, memo)
                if r is None:
                    continue
                if r != FAILED:  # closed at once: [] or {}
                    memo[at] = r
            else:
                end = _scalar(s, i)
                r = (end, 0) if end >= 0 else FAILED
                memo[i] = r
        while True:  # hand the value up to the containers waiting for it
            if r == FAILED:
                for frame in stack:
                    memo[frame[0]] = FAILED
                return FAILED
            if not stack:
                return r
            frame = stack[-1]
            frame[2] = max(frame[2], r[1])
            j = _skip(s, r[0])
            if j < len(s) and s[j] == frame[1]:
                stack.pop()
                r = memo[frame[0]] = (j + 1, frame[2] + 1)
                continue
            if j >= len(s) or s[j] != ",":
                r = FAILED
                continue
            j = _skip(s, j + 1)
            i = j if frame[1] == "]" else _key_value_start(s, j)
            if i < 0:
                r = FAILED
                continue
            break


def _decode(decoder: json.JSONDecoder, s: str, i: int) -> Any:
    """The decoder's read at ``i``; one call site for real reads and budget probes, so both meet the
    same recursion budget."""
    return decoder.raw_decode(s, i)[0]


def first_values(text: str, decoder: json.JSONDecoder) -> Iterator[Any]:
    """The values ``decoder.raw_decode(text, i)`` reads, in the order of the brackets ``i`` of ``text``,
    skipping the brackets where it would raise; each bracket costs amortised constant time."""
    memo: dict[int, tuple[int, int]] = {}
    budget: int | None = None  # deepest nesting the decoder reads from here, once measured
    for m in _OPENERS.finditer(text):
        end, depth = value_at(text, m.start(), memo)
        if end < 0 or (budget is not None and depth > budget):
            continue
        try:
            value = _decode(decoder, text, m.start())
        except RecursionError:
            # measured from this very frame (a deeper frame would see a smaller budget): the deepest
            # [[...]] the decoder reads here; every deeper bracket would fail the same way
            lo, hi = 0, depth - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                try:
                    _decode(decoder, "[" * mid + "]" * mid, 0)
                    lo = mid
                except RecursionError:
                    hi = mid - 1
            budget = lo
            continue
        except ValueError:  # the recogniser may accept what the decoder refuses (a 5,000-digit integer)
            continue
        yield value


def fenced(body: str) -> list[str]:
    """What ``re.finditer(r"```(?:json)?\\s*(.*?)```", body, re.S)`` yields as group 1, in linear time:
    the regex backtracks over the whitespace after an unclosed fence (quadratic in its length)."""
    out, pos = [], 0
    while (i := body.find("```", pos)) >= 0:
        j = i + 3
        if body.startswith("json", j):
            j += 4
        while j < len(body) and body[j].isspace():
            j += 1
        close = body.find("```", j)
        if close < 0:
            break
        out.append(body[j:close])
        pos = close + 3
    return out
