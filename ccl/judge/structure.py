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

import re
from typing import Any, Iterable

from ..records import EpisodeRecord
from .reading import read

OBJECT_RE = re.compile(r"[{\[]\s*[\"']?[A-Za-z_]\w*[\"']?\s*[:=]")
FRAMING_RE = re.compile(r"^\s*Results:|[\"']ok[\"']\s*:|If these results complete the request", re.M)


def result_keys(record: EpisodeRecord) -> set[str]:
    """Every key of every result the episode observed, nested ones too."""
    keys: set[str] = set()
    for call in record["calls"]:
        if "result" in call:
            keys |= set(_keys(call["result"]))
    return keys


def _keys(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def structure_reasons(answer: str, record: EpisodeRecord) -> list[str]:
    """Why ``answer`` hands back tool-result structure (empty: it does not)."""
    text = read(answer).text
    reasons = []
    if _key_written_as_key(text, result_keys(record)):
        reasons.append("result_key")
    if OBJECT_RE.search(text):
        reasons.append("object_syntax")
    if FRAMING_RE.search(text):
        reasons.append("observation_framing")
    return reasons


def _key_written_as_key(text: str, keys: set[str]) -> bool:
    """A key no prose writes (with an underscore) anywhere, or two keys written as keys (quoted before
    a colon, or bare before ``:`` or ``=``): one label ("Status: delivered") is prose's too."""
    as_keys = 0
    for key in keys:
        k = re.escape(key)
        if "_" in key and re.search(rf"(?<![\w-]){k}(?![\w-])", text, re.I):
            return True
        if re.search(rf"[\"']{k}[\"']\s*[:=]|(?<![\w-]){k}\s*[:=](?!\d)", text, re.I):
            as_keys += 1
    return as_keys >= 2
