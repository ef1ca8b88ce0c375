"""What an episode put before the agent, and so what its answer may draw on (ruler 2).

An answer may state a value only if the episode supplied it: the request, the arguments of a call
the agent made, or an observation the world returned (a result or an error message), plus the
catalogue's tool names. A number the world never showed (a neighbour of the right one, a changed
last digit, a sign flipped), an identifier it never returned (``ORD-64617`` for ``ORD-64616``) or a
status it never reported (``shipped`` after "no such order") is invented, whatever the world holds
elsewhere.
"""
from __future__ import annotations

import bisect
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..records import EpisodeRecord, Task
from ..world.catalogue import Catalogue
from .answers import norm, numbers
from .linear import occurs_whole
from .reading import read

WORD_RE = re.compile(r"[^\W\d_]+(?:['-][^\W\d_]+)*")


@dataclass(frozen=True)
class Sources:
    blob: str  # every source text, normalised (lower case, one space), joined by newlines
    words: frozenset[str]  # the words of the blob, and of every result key split at "_"
    numbers: tuple[float, ...]  # every number the blob states, and every JSON number observed, sorted
    keys: frozenset[str]  # every key of every result, squashed (lower case, letters only)
    tools: frozenset[str] = frozenset()  # the catalogue's tool names, lower case
    memo: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)  # stated(), per token


def sources(task: Task, record: EpisodeRecord) -> Sources:
    texts = [task.get("request") or ""]
    keys: set[str] = set()
    values: list[float] = [1.0]  # "1 USD = 1.4156 CAD": the unit amount of a rate is everyone's
    for call in record.get("calls") or []:
        if not isinstance(call, dict):
            continue
        for part in (call.get("args"), call.get("observation"), call.get("result")):
            if part is None:
                continue
            texts.append(_text(part))
            values += list(_json_numbers(part))
        keys |= keys_of(call.get("result"))
    try:
        tools = [Catalogue(task).surface(t) for t in task.get("catalogue") or []]
    except (KeyError, TypeError, ValueError):
        tools = []  # a task without a readable catalogue supplies no tool names
    texts += tools
    blob = "\n".join(norm(read(t).text) for t in texts)
    # a tool's name is a name, not prose: its parts (value_in_currency) explain no word of an answer
    prose = "\n".join(norm(read(t).text) for t in texts[:len(texts) - len(tools)])
    words = {w for w in WORD_RE.findall(prose)} | {p for k in keys for p in k.casefold().split("_") if p}
    values += [n.value for n in numbers(blob)]
    return Sources(blob, frozenset(words), tuple(sorted(set(values))), frozenset(squash(k) for k in keys),
                   frozenset(t.casefold() for t in tools))


def squash(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.casefold())


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _json_numbers(value: Any) -> Iterable[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        try:
            if math.isfinite(value):
                yield float(value)
        except OverflowError:  # an integer past float range, from a policy's arguments
            return
    elif isinstance(value, dict):
        for v in value.values():
            yield from _json_numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _json_numbers(v)


def objects(value: Any) -> Iterable[dict]:
    """Every object in a result or arguments, nested ones too (each flight of a search); the one walk
    ruler 2's answer checks share."""
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from objects(v)
    elif isinstance(value, list):
        for v in value:
            yield from objects(v)


def keys_of(value: Any) -> set[str]:
    """Every key of every object in ``value``."""
    return {str(k) for d in objects(value) for k in d}


def stated(token: str, src: Sources) -> bool:
    """Does the episode state ``token`` (an identifier, e-mail, phone, date, time or word run) as a whole token?

    A pattern search of the whole blob for each value of the answer cost the values times the blob
    (issue 55): ``occurs_whole`` skips to the occurrences, and each token is looked for once per episode."""
    t = norm(token)
    if t not in src.memo:
        src.memo[t] = bool(t) and occurs_whole(src.blob, t, r"[\w@.+-]", r"[\w@+]|[.-]\w")
    return src.memo[t]


def number_sourced(value: float, decimals: int, unit: str | None, src: Sources) -> bool:
    """Is a number the answer writes one the episode showed? A Fahrenheit temperature counts when it is
    a shown Celsius value converted (to within half a degree); a number written with fewer decimals
    counts when it is a shown value rounded to them (0.87 for 0.8734, 44228 for 44228.0).

    Only the shown values near ``value`` are tried (``src.numbers`` is sorted): trying all of them for
    each number of the answer cost the one times the other (issue 55)."""
    lo, hi = _near(value, decimals, unit)
    near = src.numbers[bisect.bisect_left(src.numbers, lo):bisect.bisect_right(src.numbers, hi)]
    return any(shown_as(x, value, decimals, unit) for x in near)


def shown_as(x: float, value: float, decimals: int, unit: str | None) -> bool:
    """Whether the shown value ``x`` is the written ``value``: converted to Fahrenheit within half a
    degree (``unit`` "f"), else equal or rounded to the written decimals."""
    if unit == "f":
        return abs(x * 9 / 5 + 32 - value) <= 0.5
    return math.isclose(x, value, rel_tol=1e-9, abs_tol=1e-9) or round(x, decimals) == value


def _near(value: float, decimals: int, unit: str | None) -> tuple[float, float]:
    """Bounds holding every shown ``x`` that ``number_sourced`` accepts, with room for rounding: within
    half a degree once converted (``x * 9 / 5 + 32``), or rounding to ``value`` at ``decimals`` (at most
    half a unit of the last decimal away) or relatively within 1e-9 (at most 2e-9 times ``value``)."""
    if unit == "f":
        slack = 1e-9 * (abs(value) + 64)
        return (value - 32.5) * 5 / 9 - slack, (value - 31.5) * 5 / 9 + slack
    width = 0.5 * 10.0 ** -min(decimals, 400) + 4 * math.ulp(value) + 2e-9 * abs(value) + 1e-9
    return value - width, value + width
