"""What the world saw, checked against the task: executed side effects one to one with the expected
ones, and identifiers used only after the episode showed them. Shared by ruler 1 (``validate``),
ruler 2's criteria and ruler 3; moved here unchanged from ``validate`` (issue 57), so the published
verdicts keep their bytes."""
from __future__ import annotations

import json
import re

from ..records import EpisodeRecord, Task
from .linear import AddressIndex, leftmost_spans, occurs_whole, run_pattern
from .matching import args_match
from .task_facts import ID_RE

# identifiers and e-mail addresses: what ``ID_RE.pattern + r"|[\w.+-]+@[\w-]+\.[\w.]+"`` finds, found in
# linear time (issue 55: that pattern rescanned a long run of word characters from each of its positions)
_IDENTIFIER = run_pattern(ID_RE.pattern, r"[\w.+-]", r"@[\w-]++\.[\w.]++")


def match_one_to_one(expected: list[dict], executed: list[dict]) -> bool:
    if len(expected) != len(executed):
        return False

    def search(i: int, used: frozenset) -> bool:
        if i == len(expected):
            return True
        return any(j not in used and e["tool"] == expected[i]["tool"]
                   and args_match(expected[i]["args"], e["args"]) and search(i + 1, used | {j})
                   for j, e in enumerate(executed))

    return search(0, frozenset())


def ids_observed_first(task: Task, record: EpisodeRecord) -> bool:
    shown = _Shown(task["request"])
    for turn in record["turns"]:
        for ci in turn["calls"]:
            c = record["calls"][ci]
            if c["canonical"] is None:
                continue
            text = json.dumps(c["args"], ensure_ascii=False)
            if not all(shown.has(text[a:b]) for a, b in leftmost_spans(text, _IDENTIFIER)):
                return False
        shown.add("".join(json.dumps(record["calls"][ci].get("observation", {}), ensure_ascii=False)
                          for ci in turn["calls"]))
    return True


_TOKEN_CHAR, _TOKEN_RUN = re.compile(r"[\w-]"), re.compile(r"[\w-]+")


class _Shown:
    """The text an episode has shown so far, asked whether it holds an identifier as a whole token (no
    word character or hyphen on either side: having seen ORD-12345 does not make ORD-1234 seen).

    A search of the whole text per identifier cost the identifiers times the text (issue 55). An
    identifier of word characters and hyphens only is whole exactly when it is one of the text's maximal
    runs of them, kept in a set. The first ``FINDS`` e-mail addresses asked of a text are searched for
    (``occurs_whole``, at ``str.find``'s pace); past them the text's ``AddressIndex`` is built, which
    answers each in time linear in the address: at most ``FINDS`` searches and one build per text."""

    FINDS = 8

    def __init__(self, text: str) -> None:
        self.text, self.runs, self.found, self.addresses, self.searched = "", set(), set(), None, 0
        self.add(text)

    def add(self, text: str) -> None:
        if self.text and text and _TOKEN_CHAR.match(self.text, len(self.text) - 1) and _TOKEN_CHAR.match(text):
            text, self.text, self.runs = self.text + text, "", set()  # the last run goes on: index anew
        self.runs |= set(_TOKEN_RUN.findall(text))
        self.text += text
        self.found, self.addresses, self.searched = set(), None, 0  # (text added may end a token found at the end)

    def has(self, ident: str) -> bool:
        if _TOKEN_RUN.fullmatch(ident):
            return ident in self.runs
        if ident not in self.found and self._whole(ident):
            self.found.add(ident)
        return ident in self.found

    def _whole(self, ident: str) -> bool:
        if self.addresses is None and self.searched < self.FINDS:
            self.searched += 1
            return occurs_whole(self.text, ident, r"[\w-]", r"[\w-]")
        if self.addresses is None:
            self.addresses = AddressIndex(self.text)
        return self.addresses.has(ident)
