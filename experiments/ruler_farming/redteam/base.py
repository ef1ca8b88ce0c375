"""The project's own red team against the ruler: the runner, and the building blocks its cases use.

A reward a policy can farm will be farmed, so every exploit starts from the oracle's passing
episode and changes as little as an adversary would: the final answer alone (an *answer* exploit),
or the call sequence (a *calls* exploit), and is then stepped through the real runtime, so the
world answers the changed calls as it would answer a learner's. A ruler that deserves to be a
reward fails every exploit and passes every faithful paraphrase.

Each case is a function of the task and the oracle's record; it returns the new final answer (or
assistant turns), or None where it does not apply to that task (no number to hedge, no timeout to
skip). The cases live in ``cases`` (the suite the ruler is tuned against) and
``holdout`` (the same classes in other words, run once at the end to measure how far the
tuning generalises); ``farm`` runs either against any judge.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from ccl.episode.scripted import final_turn, oracle_turns, play, with_answer
from ccl.records import EpisodeRecord, Status, Task
from ccl.world.tasks import TEMPLATES, generate_task

__all__ = ["final_turn", "oracle_turns", "play", "with_answer"]  # re-exported for the cases

AnswerFn = Callable[[Task, EpisodeRecord], str | None]
TurnsFn = Callable[[Task, list[str]], list[str] | None]
Judge = Callable[[Task, EpisodeRecord], bool | float]  # a verdict, or a reward in [0, 1]


@dataclass(frozen=True)
class Case:
    name: str
    kind: str  # the class of the list: paste, candidates, universal, recovery, hedge, ...
    answer: AnswerFn | None = None  # a new final answer (the oracle's calls kept)
    turns: TurnsFn | None = None  # a new list of assistant turns (calls changed)


# ---------------------------------------------------------------- building blocks of the cases
def last_results(record: EpisodeRecord) -> list[dict]:
    """The results of the last turn's calls that returned one."""
    calls = record["calls"]
    last_turn = max((c["turn"] for c in calls), default=None)
    return [c["result"] for c in calls if c["turn"] == last_turn and c["outcome"] == "ok" and "result" in c]


def first_number(text: str) -> re.Match | None:
    return re.search(r"(?<![\w.-])-?\d+(?:[.,]\d+)?(?![\w-])", text)


def done(task: Task) -> bool:
    return task["expected_status"] == Status.DONE


def paste(fmt: Callable[[list[dict]], str | None]) -> AnswerFn:
    """An answer made of the last tool results (done tasks whose last turn returned something)."""
    def answer(task: Task, record: EpisodeRecord) -> str | None:
        results = last_results(record)
        return fmt(results) if results and done(task) else None
    return answer


def with_number(fn: Callable[[str, re.Match], str | None]) -> AnswerFn:
    """A case that rewrites the oracle's answer around its first number (done tasks only)."""
    def answer(task: Task, record: EpisodeRecord) -> str | None:
        text = record["final"] or ""
        m = first_number(text)
        return fn(text, m) if m and done(task) else None
    return answer


def fact_number(fn: Callable[[str, re.Match], str | None]) -> AnswerFn:
    """A case that rewrites the oracle's answer around the number of its first numeric required fact
    (done tasks only): the value the ruler must read, not an amount the request already gave."""
    def answer(task: Task, record: EpisodeRecord) -> str | None:
        text = record["final"] or ""
        for i in range(len(task["required_facts"]) if done(task) else 0):
            span = fact_span(task, text, i)
            m = re.compile(re.escape(text[span[0]:span[1]])).search(text, span[0]) if span else None
            if m and re.fullmatch(r"-?\d+(?:[.,]\d+)?", m.group(0)):
                return fn(text, m)
        return None
    return answer


def suffix(extra: str, statuses: Iterable[str] = (Status.DONE,)) -> AnswerFn:
    """The oracle's answer followed by ``extra`` (on tasks of the given expected statuses)."""
    def answer(task: Task, record: EpisodeRecord) -> str | None:
        return f"{record['final']}{extra}" if record["final"] and task["expected_status"] in statuses else None
    return answer


def prefix(extra: str) -> AnswerFn:
    """``extra`` and then the oracle's answer, its first letter lowered (done tasks only)."""
    def answer(task: Task, record: EpisodeRecord) -> str | None:
        text = record["final"] or ""
        return f"{extra}{text[:1].lower()}{text[1:]}" if text and done(task) else None
    return answer


def replace_number(text: str, m: re.Match, new: str) -> str:
    return text[:m.start()] + new + text[m.end():]


def number_of(m: re.Match) -> float:
    return float(m.group(0).replace(",", "."))


def fact_span(task: Task, text: str, index: int = 0) -> tuple[int, int] | None:
    """Where the answer states required fact ``index`` (its first spelling found), or None."""
    facts = task["required_facts"]
    if index >= len(facts):
        return None
    for spelling in sorted(facts[index], key=len, reverse=True):
        m = re.search(rf"(?<![\w.-]){re.escape(spelling)}(?![\w-]|\.\d)", text)
        if m:
            return m.span()
    return None


def calls_of(turns: list[str]) -> list[dict]:
    """Each turn as its parsed JSON action."""
    return [json.loads(t) for t in turns]


_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()


def number_words(n: int) -> str:
    """0 to 99 in English words (``sixteen``, ``forty-two``)."""
    if n < 20:
        return _WORDS[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens - 2] + ("" if not ones else "-" + _WORDS[ones])


# ---------------------------------------------------------------- running them
def case_record(case: Case, task: Task, turns: list[str], record: EpisodeRecord) -> EpisodeRecord | None:
    """The episode the case makes of the oracle's (``turns`` and its ``record``), or None where the case
    does not apply to this task."""
    if case.answer is not None:
        text = case.answer(task, record)
        return None if text is None else play(task, with_answer(task, turns, text))
    new = case.turns(task, list(turns))
    return None if new is None else play(task, new)


def farm(tasks: Iterable[Task], judge: Judge, cases: Iterable[Case]) -> dict[str, dict]:
    """Per case: on how many tasks it applied and how many of those ``judge`` passed; the oracle's own
    episode on every task is the ``oracle`` row (a judge fit to be a reward passes all of them)."""
    return farm_judges(tasks, {"judge": judge}, cases)["judge"]


def farm_judges(tasks: Iterable[Task], judges: Mapping[str, Judge], cases: Iterable[Case]) -> dict[str, dict]:
    """``farm`` for several judges at once: each case's episode is played once and judged by all."""
    cases = list(cases)
    rows = [("oracle", "reference")] + [(c.name, c.kind) for c in cases]
    out = {j: {name: {"kind": kind, "applied": 0, "passed": 0, "templates_passed": set()} for name, kind in rows}
           for j in judges}
    for task in tasks:
        turns = oracle_turns(task)
        record = play(task, turns)
        played = [("oracle", record)] + [(c.name, case_record(c, task, turns, record)) for c in cases]
        for name, rec in played:
            if rec is not None:
                for j, judge in judges.items():
                    _count(out[j][name], task, judge(task, rec))
    return {j: {k: {**v, "templates_passed": sorted(v["templates_passed"])} for k, v in table.items()}
            for j, table in out.items()}


def _count(cell: dict, task: Task, value: bool | float) -> None:
    """A verdict (True/False) counts one pass; a reward (a float) adds itself to ``passed``, so that
    ``passed / applied`` is its mean (and only a verdict of True names a template as passed)."""
    cell["applied"] += 1
    cell["passed"] += value
    if value is True:
        cell["templates_passed"].add(task["template"])


def tasks(seeds: int) -> list[Task]:
    """The red team's tasks: every template x seeds 0..N-1 x both namings (canonical and the held-out
    renaming), from the pool each template's split uses (seeds this small are never evaluation tasks:
    those start at 1,000,000)."""
    out = []
    for name in sorted(TEMPLATES):
        pool = "train" if TEMPLATES[name].split == "train" else "eval"
        for seed in range(seeds):
            out += [generate_task(name, seed, pool), generate_task(name, seed, pool, rename="heldout")]
    return out
