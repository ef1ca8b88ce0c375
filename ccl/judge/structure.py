"""Tool-result structure in an answer: the part of ruler 2 that refuses a tool's result handed back
instead of an answer (issue 37; ruler 1 does not use it yet).

Pasting the last tool message back states every fact of the result, so every fact check passes: on
ruler 1 it passes 348-396 of 420 tasks in every wrapping the red team tried (experiments/
ruler_farming), and the post-hoc audit catches only the bare JSON object. What all the wrappings
share is not their syntax but their vocabulary: the result's own keys. Prose says "it is -4°C in
Prague", never ``temperature_c`` or ``city: Prague, condition: sunny``. So the check reads the
answer (in ``ccl.judge.reading``'s normal form) for the signs below. It is beaten by a paste whose
keys are rewritten (title case with spaces, another language) and no single label is refused;
the claim judge of the design in experiments/ruler_farming is what closes that.

- ``result_key``: two keys of the results the episode observed written as keys (quoted before a
  colon, or followed by ``:`` or ``=``), or a key no prose would write (one with an underscore)
  anywhere;
- ``object_syntax``: an opening brace or bracket followed by a key and a colon (JSON, a Python dict);
- ``observation_framing``: the runtime's own framing of an observation (``Results:``, ``"ok":``,
  the next-step line).
"""
from __future__ import annotations

import math
import re

from ..records import EpisodeRecord
from .reading import read
from .sources import keys_of, objects

OBJECT_RE = re.compile(r"[{\[]\s*[\"']?[A-Za-z_]\w*[\"']?\s*[:=]")
FRAMING_RE = re.compile(r"^\s*Results:|[\"']ok[\"']\s*:|If these results complete the request", re.M)


def result_keys(record: EpisodeRecord) -> set[str]:
    """Every key of every result the episode observed, nested ones too."""
    keys: set[str] = set()
    for call in record["calls"]:
        if "result" in call:
            keys |= keys_of(call["result"])
    return keys


def structure_reasons(answer: str, record: EpisodeRecord) -> list[str]:
    """Why ``answer`` hands back tool-result structure (empty: it does not)."""
    text = read(answer).text
    reasons = []
    if _key_written_as_key(text, result_keys(record)):
        reasons.append("result_key")
    if OBJECT_RE.search(text) or MARKUP_RE.search(text):
        reasons.append("object_syntax")
    if _result_dumped(text, record):
        reasons.append("result_dump")
    if _framed(text):
        reasons.append("observation_framing")
    return reasons


def _key_written_as_key(text: str, keys: set[str]) -> bool:
    """A key no prose writes (with an underscore) anywhere, or two keys written as labels: a key
    however relabelled (``Temperature C``, ``Event Id``: case, spaces and hyphens aside) before ``:``
    or ``=``, or directly before a value (a number, an identifier, an address, true or false), or as
    a table's column heading. One label ("Status: delivered") is prose's too."""
    if any("_" in key and re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", text, re.I) for key in keys):
        return True
    squashed = {_squash(k) for k in keys} - {""}
    labels = [m.group("label") for m in LABEL_RE.finditer(text)] + _segment_labels(text)
    labelled = {_squash(label) for label in labels} & squashed
    headings = {_squash(c) for row in _table_rows(text) for c in row.split("|")} & squashed
    return len(labelled) >= 2 or len(headings) >= 2


def _squash(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.casefold())


# one to three words (or a quoted key) used as a label: before ":" or "=", or right before a value
LABEL_RE = re.compile(r"(?:^|(?<=[\s,;({\[|\-]))[\"']?(?P<label>[A-Za-z][A-Za-z_]*(?:[ \-][A-Za-z][A-Za-z_]*){0,2})"
                      r"[\"']?(?:\s*[:=]|\s+(?=[-+(]?\d|[A-Z]{1,4}-\d|[\w.+-]+@|(?:true|false|none|null)\b))",
                      re.I | re.M)
# a label opening a segment of a list ("Ticket Id TCK-1001 - Priority low", "Base USD, Quote CAD")
SEGMENT_LABEL_RE = re.compile(r"(?:^|\s[-\u2013\u2014]\s|[,;|\n]\s*)(?P<label>[A-Za-z][A-Za-z_]*(?: [A-Za-z][A-Za-z_]*){0,2})"
                              r"(?=\s+\S+\s*(?:$|\s[-\u2013\u2014]\s|[,;|\n]))", re.M)
MARKUP_RE = re.compile(r"</?[A-Za-z_][\w-]*\s*/?>")  # <rate>, </result>: a result in tags
TABLE_ROW_RE = re.compile(r"^\s*\|(.*)\|\s*$", re.M)
# FRAMING_RE, SEGMENT_LABEL_RE and TABLE_ROW_RE, which start at a line's start or a line break, read from
# each of n blank lines the n after it (issue 55); the functions below give their answers reading each once.
_ROW_LINE_RE, _RESULTS_LINE_RE = re.compile(r"\s*\|(.*)\|\s*"), re.compile(r"\s*Results:")
_OK_KEY_RE, _NEXT_STEP = re.compile(r"[\"']ok[\"']\s*:"), "If these results complete the request"
_SEGMENT_START = re.compile(r"(?=[,;|\n]|\s[-\u2013\u2014]\s)")  # where SEGMENT_LABEL_RE's 2nd and 3rd ways start
_DASH_AT, _SPACE_RUN = re.compile(r"\s[-\u2013\u2014]\s"), re.compile(r"\s*")


def _table_rows(text: str) -> list[str]:
    """``TABLE_ROW_RE.findall(text)``: a match skips blank lines to a line whose first character is "|" and
    holds that line alone (what it takes of the blank lines after is given back to the next line's start)."""
    return [m.group(1) for line in text.split("\n") if (m := _ROW_LINE_RE.fullmatch(line))]


def _framed(text: str) -> bool:
    """``FRAMING_RE.search(text)``: its first way is a line that starts, after spaces, with "Results:" (the
    spaces before it may not cross a line holding anything else)."""
    return (any(_RESULTS_LINE_RE.match(line) for line in text.split("\n")) or _OK_KEY_RE.search(text) is not None
            or _NEXT_STEP in text)


def _segment_labels(text: str) -> list[str]:
    """The labels of ``SEGMENT_LABEL_RE.finditer(text)``, the pattern tried only where a match can come first:
    the start, a spaced dash, a separator, but no line break among the spaces after an earlier separator
    (from that separator the pattern reads through it to the same label), and no other line's start (the
    line break before it reaches the same label)."""
    labels, pos, covered = [], 0, -1
    for c in sorted({0} | {m.start() for m in _SEGMENT_START.finditer(text)}):
        if c < pos or (c < covered and not _DASH_AT.match(text, c)):
            continue
        if text[c:c + 1] in (",", ";", "|", "\n"):
            covered = _SPACE_RUN.match(text, c + 1).end()
        if m := SEGMENT_LABEL_RE.match(text, c):
            labels.append(m.group("label"))
            pos = m.end()
    return labels


# ---------------------------------------------------------------- a result's values in its own order
def _scalars(result: dict) -> list[str]:
    out = []
    for v in result.values():
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, (int, float)):
            out.append(number_text(v))
        elif isinstance(v, str) and v.strip():
            out.append(v.strip().casefold())
    return [v for v in out if v]


def number_text(v: float) -> str:
    """A number as an answer would write it: 11891.32, 106.2263, 16 (not 16.0), '' if not finite."""
    try:
        return f"{float(v):.12g}" if math.isfinite(v) else ""
    except OverflowError:  # an integer past float range
        return ""


def _chain(text: str, values: list[str]) -> tuple[int, list[tuple[int, int]]]:
    """How many of ``values`` the text states in this order, each after the last, and where."""
    pos, spans = 0, []
    for v in values:
        m = re.compile(r"(?<![\w.@-])" + re.escape(v) + r"(?![\w@]|\.\d)").search(text, pos)
        if m:
            spans.append(m.span())
            pos = m.end()
    return len(spans), spans


def _result_dumped(text: str, record: EpisodeRecord) -> bool:
    """The answer walks one result's values in the result's own key order (as stored or sorted): three
    or more of them with three or more of its keys written as words ("The base is USD. The quote is CAD.
    The rate is 1.4156."), or all of them (two or more) with no other word in one sentence ("TCK-1001, low.", "Values: 3424, INR, GBP, 29.1"). Prose names a few values in the order a sentence
    needs; a dump names them all in the order the tool returned them."""
    t = text.casefold()
    results = [d for call in record["calls"] for d in objects(call.get("result"))]
    everything = {w for d in results for v in _scalars(d) for w in re.findall(r"[^\W\d_]+", v)}
    for result in results:
        for order in (list(result), sorted(result)):
            values = _scalars({k: result[k] for k in order})
            found, spans = _chain(t, values)
            keys = sum(1 for k in result if re.search(r"(?<![a-z])" + r"[\s_-]*".join(
                re.escape(p) for p in k.casefold().split("_") if p) + r"(?![a-z])", t))
            if (found >= 3 and keys >= 3) or any(_bare_values(part, values, everything)
                                                  for part in re.split(r"[.;\n]\s", t)):
                return True
    return False


def _bare_values(part: str, values: list[str], everything: set[str]) -> bool:
    """A sentence that is every value of a result (two or more) in order, and no word besides the values
    of the episode's results ("1 USD buys: AUD 1.6259, JPY 162.87" has one, and is the oracle's)."""
    found, spans = _chain(part, values)
    words = [w for w in re.findall(r"[^\W\d_]+", part) if w not in everything]
    listed = all(re.fullmatch(r"[\s,;:|*\u2022-]*", part[a[1]:b[0]]) for a, b in zip(spans, spans[1:]))
    return found >= 2 and found == len(values) and not words and listed  # "545 * 81 + 83 = 44228" relates them
