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

# status spellings the world writes one way
_SPELLINGS = ((re.compile(r"\bon-hold\b|\bonhold\b", re.I), "on hold"),
              (re.compile(r"\bcanceled\b", re.I), "cancelled"))
_NUM = r"-?\d+(?:[.,]\d+)?"
# 33°C (or 91°F), 33°C (91°F), 33 °C / 91 °F, and the reverse order
_DUAL_RE = re.compile(rf"(?P<a>{_NUM})\s*°\s*(?P<ua>[CF])\s*(?:\(\s*(?:or\s+|i\.e\.\s+|=\s*|~\s*)?(?P<b>{_NUM})\s*°\s*"
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
_RULE_RE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")


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
_RESPECTIVELY_RE = re.compile(r"^\s*(?P<subj>[^.;:\n]+?)\s+(?P<verb>is|are|was|were|have|has|cost|costs)\s+"
                              r"(?P<vals>[^.;:\n]+?),?\s+respectively\b", re.I)


def _split_list(text: str) -> list[str]:
    return [p.strip() for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", text) if p.strip()]


_VALUE = r"-?\d+(?:\.\d+)?"  # no comma decimals here: "1,1" read two ways makes the list backtrack
_WORDY = r"[A-Za-z][\w-]*"
# "buys 0.35, 2.75 and 0.25 CAD, NOK and USD, respectively": values, then the entities they belong to
_VALUES_THEN_NAMES_RE = re.compile(
    rf"(?P<vals>{_VALUE}(?:,\s*{_VALUE})*,?\s+and\s+{_VALUE})\s+(?P<names>{_WORDY}(?:,\s*{_WORDY})*,?\s+and\s+{_WORDY}),?"
    r"\s+respectively\b", re.I)


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
    text = _VALUES_THEN_NAMES_RE.sub(_values_then_names, text)
    def pair(m: re.Match) -> str:
        subjects, values = _split_list(m.group("subj")), _split_list(m.group("vals"))
        if len(subjects) != len(values) or len(subjects) < 2:
            return m.group(0)
        verb = {"are": "is", "were": "was", "have": "has", "cost": "costs"}.get(m.group("verb").lower(), m.group("verb"))
        return "; ".join(f"{s} {verb} {v}" for s, v in zip(subjects, values))
    return _RESPECTIVELY_RE.sub(pair, text)
