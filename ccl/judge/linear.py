"""Scans whose cost grows linearly with the text they read (issue 55: cost as an attack).

A reward is an input a policy controls, so no check of the judge may cost more than a constant times
the text it reads. Three shapes of regular-expression use were quadratic; each has a helper here that
gives the old answer (tests/test_judge_linear.py compares them with the old patterns; the scans
particular to one module are emulated there):

- a pattern whose run of one character class may start anywhere (``[\\w.+-]+@...``): a search that
  fails rescans the run from each of its positions. :func:`leftmost_spans` lets the run start only
  where the class run starts, and answers the one other place the old pattern could start it (right
  after its previous match) from a lookup made once per run;
- a pattern anchored at the end of a prefix (``re.search(r"[^\\W\\d_]+$", text[:i])``), called once per
  number or span: each call read the whole prefix. :func:`run_start`, :func:`spaces_before` and
  :func:`word_then_spaces_before` read only the runs that end at ``i`` (callers search a pattern in
  the window such runs bound);
- a token looked up as a whole word in a long text once per value: :func:`occurs_whole` lets
  ``str.find`` skip to its occurrences (still once per distinct token, at ``str.find``'s pace); for
  many distinct e-mail addresses, :class:`AddressIndex` answers each in time linear in the address
  after one build linear in the text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SPACE = re.compile(r"\s")  # one character of \s (the same set as str.isspace)
NON_SPACE = re.compile(r"\S")


@dataclass(frozen=True)
class RunPattern:
    """A pattern ``FIRST|RUN TAIL`` taken apart: ``first`` (its alternatives tried before the run, or
    None), ``char`` (one character of the run's class), ``run`` (the class, one or more, possessive),
    ``tail`` (what follows the run; it starts with a character outside the class, so the run always
    extends to the class run's end) and ``anchored`` (``FIRST|(?<!class)RUN TAIL``)."""

    first: re.Pattern | None
    char: re.Pattern
    run: re.Pattern
    tail: re.Pattern
    anchored: re.Pattern


def run_pattern(first: str | None, char_class: str, tail: str) -> RunPattern:
    head = f"{first}|" if first else ""
    return RunPattern(re.compile(first) if first else None, re.compile(char_class), re.compile(char_class + "++"),
                      re.compile(tail), re.compile(f"{head}(?<!{char_class}){char_class}++{tail}"))


def leftmost_spans(text: str, p: RunPattern) -> list[tuple[int, int]]:
    """The spans of ``re.finditer(FIRST|RUN+TAIL, text)``, in time linear in ``text``.

    Why this is the old answer: a search resumed at ``pos`` tries each later position, FIRST before
    RUN TAIL. RUN TAIL matching inside a class run at ``q > pos`` would also match at ``q - 1`` (the
    same run end, the same tail), so it is never the leftmost match there; ``anchored`` skips exactly
    those positions. It can be leftmost only at ``pos`` itself, right after the previous match, where
    it matches when the run's end is followed by TAIL: looked up once per run (positions only grow).
    """
    spans: list[tuple[int, int]] = []
    pos, run = 0, (0, 0, None)  # run: (from, end of the class run, end of TAIL after it or None)
    while pos <= len(text):
        if pos and p.char.match(text, pos - 1) and p.char.match(text, pos):  # resumed inside a run
            m = p.first.match(text, pos) if p.first else None
            if m is None and not run[0] <= pos < run[1]:
                end = p.run.match(text, pos).end()
                tail = p.tail.match(text, end)
                run = (pos, end, tail.end() if tail else None)
            end = m.end() if m else run[2]
            if end is not None:
                spans.append((pos, end))
                pos = end
                continue
        m = p.anchored.search(text, pos)
        if m is None:
            break
        spans.append(m.span())
        pos = m.end()
    return spans


def run_start(text: str, end: int, char: re.Pattern) -> int:
    """Where the run of ``char`` ending at ``end`` starts (``end`` when ``text[end - 1]`` is not one):
    the start of ``re.search(char + "+$", text[:end])``, reading only the run (for a prefix that does not
    end with a line break, before which ``$`` matches too)."""
    start = end
    while start > 0 and char.match(text, start - 1):
        start -= 1
    return start


def spaces_before(text: str, end: int) -> int:
    """Where the whitespace run ending at ``end`` starts (a ``\\s+$`` on ``text[:end]``)."""
    return run_start(text, end, SPACE)


def word_then_spaces_before(text: str, end: int, word: re.Pattern, width: int) -> bool:
    """``re.search(WORD + r"\\s+$", text[:end])`` for a ``word`` pattern that always spans ``width``
    characters (a literal, case-insensitive or not), reading only the whitespace run and the word. ``$``
    also matches before a final newline, which the whitespace run then holds: the same answer."""
    start = spaces_before(text, end)
    return start < end and start >= width and word.fullmatch(text, start - width, start) is not None


def occurs_whole(text: str, token: str, before: str, after: str) -> bool:
    """``re.search(f"(?<!{before}){re.escape(token)}(?!{after})", text)`` for a ``before`` of one character,
    without reading ``text`` once per token at the pattern engine's pace: ``str.find`` skips to each
    occurrence (most tokens never occur), the first few are checked by hand (compiling a pattern per
    token costs more than they do), and the pattern, searched from the next one, decides the rest."""
    i = text.find(token)
    for _ in range(8):
        if i < 0:
            return False
        if not (i and re.match(before, text[i - 1])) and not re.compile(after).match(text, i + len(token)):
            return True
        i = text.find(token, i + 1)
    return i >= 0 and re.compile(f"(?<!{before}){re.escape(token)}(?!{after})").search(text, i) is not None


# ---------------------------------------------------------------- e-mail addresses looked up whole
_AT_SHAPED = re.compile(r"[\w.+-]+@[\w.-]+")  # an address: what its "@" has on either side
_LEFT_RUN, _RIGHT_RUN = re.compile(r"[\w.+-]+"), re.compile(r"[\w.-]+")
_START, _END, _APART = 0, 1, 2  # markers among the characters (an int never equals a character)


def _encoded(left: str, right: str) -> list:
    """``left@right`` with a start marker before each place a whole token may start (the first place, and
    after "." or "+": the characters of ``left`` that are not [\\w-]) and an end marker after each place
    one may end (before a "." and at the last place). Read from a text, the first and last places are
    the window's edges, which are whole-token edges (the characters beyond are outside the classes)."""
    out: list = []
    for i, ch in enumerate(left):
        if i == 0 or left[i - 1] in ".+":
            out.append(_START)
        out.append(ch)
    out.append("@")
    for i, ch in enumerate(right):
        out.append(ch)
        if i == len(right) - 1 or right[i + 1] == ".":
            out.append(_END)
    return out


class _Automaton:
    """The suffix automaton of a symbol sequence: ``holds(p)`` says whether ``p`` is a contiguous part
    of it, in time linear in ``p``, after a build linear in the sequence (Blumer et al., 1985)."""

    def __init__(self, symbols: list) -> None:
        self.next: list[dict] = [{}]
        link, length, last = [-1], [0], 0
        for c in symbols:
            cur = len(self.next)
            self.next.append({})
            length.append(length[last] + 1)
            link.append(0)
            p = last
            while p != -1 and c not in self.next[p]:
                self.next[p][c] = cur
                p = link[p]
            if p != -1:
                q = self.next[p][c]
                if length[p] + 1 == length[q]:
                    link[cur] = q
                else:
                    clone = len(self.next)
                    self.next.append(dict(self.next[q]))
                    length.append(length[p] + 1)
                    link.append(link[q])
                    while p != -1 and self.next[p].get(c) == q:
                        self.next[p][c] = clone
                        p = link[p]
                    link[q] = link[cur] = clone
            last = cur

    def holds(self, pattern: list) -> bool:
        state: int | None = 0
        for c in pattern:
            state = self.next[state].get(c)
            if state is None:
                return False
        return True


class AddressIndex:
    """Whole-token lookups (no [\\w-] character on either side) of address-shaped tokens in one text,
    each in time linear in the token after a build linear in the text: ``occurs_whole`` per address
    costs the addresses times the text, which a policy can make quadratic (issue 55).

    An address has one "@"; any occurrence of it puts that "@" on one of the text's, inside the window
    of address characters around it, between a place a whole token may start (the window's start, or
    after a "." or "+") and one where it may end (before a "." or at the window's end). When those
    places, paired in each window, spell at most ``PAIR_BUDGET`` characters per character of text,
    every pairing is kept in a set; otherwise (a text of many dots) the windows are indexed with
    markers at those places (``_encoded``) in a suffix automaton: an address occurs whole exactly when
    its own encoding, edges marked, is a contiguous part of the windows' (tests/test_judge_linear.py
    compares both with ``occurs_whole`` on random texts)."""

    PAIR_BUDGET = 16

    def __init__(self, text: str, pair_budget: int | None = None) -> None:
        ends = {m.end(): m.start() for m in _LEFT_RUN.finditer(text)}
        starts = {m.start(): m.end() for m in _RIGHT_RUN.finditer(text)}
        windows = []  # (start places, the "@", end places)
        for m in re.finditer("@", text):
            a, b = ends.get(m.start()), starts.get(m.end())
            if a is not None and b is not None:
                windows.append(([a] + [i + 1 for i in range(a, m.start()) if text[i] in ".+"], m.start(),
                                [i for i in range(m.end(), b) if text[i] == "."] + [b]))
        spelt = sum(len(s) * len(e) * (e[-1] - s[0]) for s, _, e in windows)
        budget = self.PAIR_BUDGET if pair_budget is None else pair_budget
        self.text, self.pairs, self.windows = text, None, None
        if spelt <= budget * len(text):
            self.pairs = {text[a:b] for s, _, e in windows for a in s for b in e}
        else:
            symbols: list = []
            for s, at, e in windows:
                symbols += _encoded(text[s[0]:at], text[at + 1:e[-1]])
                symbols.append(_APART)
            self.windows = _Automaton(symbols)

    def has(self, token: str) -> bool:
        if not _AT_SHAPED.fullmatch(token):  # (one "@": the classes hold none) not an address: searched
            return occurs_whole(self.text, token, r"[\w-]", r"[\w-]")
        if self.pairs is not None:
            return token in self.pairs
        left, right = token.split("@")
        return self.windows.holds(_encoded(left, right))
