"""Benchmark: the judge's worst case on hostile episodes, new against old (issue 55: cost as an attack).

    python -m scripts.bench_judge [--sizes 8000,16000] [--skip-old] [--patterns]

A reward is an input a policy controls: an episode whose call arguments or final answer hold a long
hostile string (runs of word characters, digits, spaces, ``a.``, ``ORD-``, many ``@``, numbers with
commas, a fact repeated, ...) must cost the judge time linear in its length. For each target below and
each size, every family of ``FAMILIES`` (and, for answers, each task fact repeated) is timed; the JSON
printed gives, per target, the slowest family's times and time(16k)/time(8k) (target: at most 2.2),
every family whose ratio stays over the target when timed again (``over_target``), and ``met``.

Targets: ``validate_args``/``validate_answer``/``validate_echo`` (ruler 1 with the string in a call's
arguments, in the final answer, or first echoed back by an unknown tool's error and then sent again, so
that every identifier in it has been seen), ``judge_args``/``judge_echo`` (ruler 2, the reward's judge)
and ``turn_grade`` (``ccl.learn.turn_grade.grade_turn``, the dense reward's grade of one turn, here a
call carrying the string: it judges the expert's ending before and after the turn; an episode is graded
turn by turn, about nine judgings). Ruler 2 refuses answers over ``MAX_ANSWER_CHARS`` (2,000) unread,
so ``judge_answer`` is timed at 1,000 and 2,000 characters instead.

The old judge is the code of commit ``BASE`` (before issue 55), unpacked with ``git archive`` as the
package ``ccl_old`` and run in the same process on the same episodes, on the families ``OLD_FAMILIES``
(all of them would take many minutes), and its verdicts are compared with the new ones. Episodes are
built with a larger ``max_action_chars`` so that 16,000 characters fit in one call with its JSON.

``--patterns`` also times every compiled pattern of ``ccl/judge`` as it is used (scanned, matched at one
place, or searched at the end of a window) on the families at both sizes and lists those whose ratio
is over 2.2.
"""
from __future__ import annotations

import argparse
import atexit
import collections
import functools
import gc
import importlib
import importlib.util
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
BASE = "29b9e458e0707247aac633d191807ffbb582ba99"  # issue 54's last commit: the judge before issue 55
TARGET_RATIO = 2.2
# hostile units, each repeated to the length wanted; (head, unit) repeats the unit after the head, and
# (head, unit, tail) ends with the tail
FAMILIES: list[str | tuple[str, ...]] = [
    "a", "A", "1", " ", "\n", "a.", "a-", "a+", ".a", "1.", "1,", "1-", "-1", "a1", "_", "a_", "1e", "é", "\u00a0",
    "ORD-", "ORD-1", "ord-1", "AB-12.", "ab-12-", "a@", "@", "a@b.", "x.y@", "+a@b.c", "1,234,", "1 234 ", "1 ",
    "a ", "1, ", "1 and ", "1 or ", "not ", "not a ", "no ", "zero ", "minus 1 ", "1 am ", "1am.", "twenty-",
    "1°c ", "1°C (", "| a ", "|--", "{a", "<a", "a: ", "1 usd ", "usd 1 ", "1 is ", "1 to ", "1-1 ", "(1", "~~",
    "sent ", "it's ", "a'b-", ". ", "?", ("1", " "), ("1", "\t"), ("zero", " "), ("not", " "), ("|", " "),
    ("1", "a"), ("ORD-12", " "), ("below", " "), ("a@b", "1 "), ("1 (", " "),
    ("", " ", "a respectively"), ("x", " ", "is respectively"), ("", "1", " respectively"), ("", "1, ", " respectively"),
    ("respectively ", "a is "), ("", "\n", "a"), ("", "\n ", "Label x,"), ("", "1", "°C (1°F)"), ("", "1,", " usd is 1 usd"),
]
OLD_FAMILIES = ["1", "ORD-"]  # the old judge's worst on arguments (digits, identifier prefixes)
ARGS_TASK = "ch_contact_email"  # find_contact echoes its argument in its error: arguments and observation
ANSWER_TASKS = ("args_fx_symbols", "par_weather", "un_stock_parallel")
OLD_ANSWER = ("args_fx_symbols", "29.1 ")  # a fact repeated: ruler 1 read the answer again per occurrence


def hostile(family: str | tuple[str, ...], n: int) -> str:
    head, unit, tail = (*family, "")[:3] if isinstance(family, tuple) else ("", family, "")
    body = n - len(tail)
    return (head + unit * (body // len(unit) + 1))[:body] + tail


def distinct_ids(n: int) -> str:
    """Identifiers all different (a set or cache of them does not help), as many as fit."""
    return " ".join(f"AB-{i}" for i in range(10, 10 + n // 6))[:n].rsplit(" ", 1)[0]


def distinct_emails(n: int) -> str:
    return " ".join(f"a{i}@b.c" for i in range(n // 8))[:n].rsplit(" ", 1)[0]


GENERATED: dict[str, Callable[[int], str]] = {"distinct_ids": distinct_ids, "distinct_emails": distinct_emails}


def cpu_name() -> str:
    """The processor's name, its bfloat16 kernel path and the cores this process may use (timings are
    only comparable on one machine)."""
    from ccl.devices import cpu_record, cpu_threads

    record = cpu_record()
    return f"{record['cpu']} ({cpu_threads()} cores usable; kernel path {record['kernel_path']})"


# ---------------------------------------------------------------- the two judges
@functools.lru_cache(maxsize=None)
def package(name: str) -> ModuleType | None:
    """``ccl`` itself, or ``ccl_old``: the tree of BASE unpacked beside it (None where git or BASE is missing)."""
    if name == "ccl":
        return importlib.import_module("ccl")
    try:
        tar = subprocess.run(["git", "archive", BASE, "ccl"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    folder = Path(tempfile.mkdtemp(prefix="bench_judge_"))
    atexit.register(shutil.rmtree, folder, True)
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        t.extractall(folder)
    (folder / "ccl").rename(folder / "ccl_old")  # the package imports itself relatively only
    root = folder / "ccl_old"  # loaded by location: the import path is left as it is
    spec = importlib.util.spec_from_file_location("ccl_old", root / "__init__.py", submodule_search_locations=[str(root)])
    module = importlib.util.module_from_spec(spec)
    sys.modules["ccl_old"] = module
    spec.loader.exec_module(module)
    return module


def mod(pkg: str, name: str) -> Any:
    return importlib.import_module(f"{pkg}.{name}")


@functools.lru_cache(maxsize=None)
def task_of(pkg: str, name: str) -> dict:
    tasks = mod(pkg, "world.tasks")
    return tasks.generate_task(name, 0, "train" if tasks.TEMPLATES[name].split == "train" else "eval")


def episode(pkg: str, task: dict) -> Any:
    runtime = mod(pkg, "episode.runtime")
    return runtime.Episode(task, limits=runtime.Limits(max_action_chars=200_000))


def call(tool: str, args: dict) -> str:
    return json.dumps({"calls": [{"tool": tool, "args": args}]}, ensure_ascii=False)


def final(text: str, status: str = "done") -> str:
    return json.dumps({"final": text, "status": status}, ensure_ascii=False)


def args_record(pkg: str, text: str, echo: bool = False) -> tuple[dict, dict]:
    """The string as find_contact's argument (after an unknown tool named by it, with ``echo``), then "Done."."""
    task = task_of(pkg, ARGS_TASK)
    ep = episode(pkg, task)
    turns = ([call(text, {})] if echo else []) + [call("find_contact", {"name": text}), final("Done.")]
    for turn in turns:  # (echo: the error names the tool, so every identifier in it is then seen)
        if not ep.done:  # two unparseable turns end it (the runtime counts every "{" as nesting)
            ep.step(turn)
    return task, ep.record()


@functools.lru_cache(maxsize=None)
def oracle_turns(pkg: str, name: str) -> tuple[str, ...]:
    task, oracle = task_of(pkg, name), mod(pkg, "episode.oracle").OraclePolicy()
    ep, memory, turns = episode(pkg, task), oracle.memory(), []
    while not ep.done:
        turns.append(oracle.act(ep, memory))
        ep.step(turns[-1])
    return tuple(turns)


def answer_record(pkg: str, name: str, text: str) -> tuple[dict, dict]:
    """The oracle's calls for task ``name``, then ``text`` as the final answer with the oracle's status."""
    task, turns = task_of(pkg, name), oracle_turns(pkg, name)
    ep = episode(pkg, task)
    for turn in [*turns[:-1], final(text, json.loads(turns[-1]).get("status", "done"))]:
        if not ep.done:
            ep.step(turn)
    return task, ep.record()


def answer_units(name: str) -> list[str]:
    """The oracle's answer, and each spelling of each required fact repeated with what surrounds a value."""
    task, text = task_of("ccl", name), json.loads(oracle_turns("ccl", name)[-1])["final"]
    facts = [s for f in task["required_facts"] for s in f[:1]]
    return [text + " ", *(u for f in facts for u in (f + " ", f + ", ", f + " or ", "not " + f + " ",
                                                     "maybe " + f + ". ", f + " USD ", f + "-", "(" + f + ") "))]


# ---------------------------------------------------------------- targets
def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def run_target(pkg: str, target: str, family: Any, n: int) -> tuple[float, Any]:
    """Seconds one judging takes, and its verdict (compared between the judges)."""
    text = GENERATED[family](n) if isinstance(family, str) and family in GENERATED else None
    if target == "turn_grade":
        task = task_of(pkg, ARGS_TASK)
        grade = mod(pkg, "learn.turn_grade").grade_turn
        g = _timed(lambda: grade(task, episode(pkg, task), call("find_contact", {"name": text or hostile(family, n)})))
        return g[0], (g[1].passed, g[1].why)
    if target.endswith("answer"):
        name, unit = family
        task, record = answer_record(pkg, name, hostile(unit, n))
    else:
        task, record = args_record(pkg, text or hostile(family, n), echo=target.endswith("echo"))
    fn = mod(pkg, "judge.validate").validate if target.startswith("validate") else mod(pkg, "judge.ruler2").judge
    return _timed(lambda: fn(task, record))


def families_of(target: str, old: bool) -> list[Any]:
    if target.endswith("answer"):
        return [OLD_ANSWER] if old else [(name, u) for name in ANSWER_TASKS for u in answer_units(name)] + [
            (ANSWER_TASKS[0], f) for f in FAMILIES]
    extra = list(GENERATED) if target.endswith("echo") or target == "turn_grade" else []
    return (OLD_FAMILIES + extra[:1]) if old else FAMILIES + extra


def worst(pkg: str, target: str, sizes: list[int], old: bool) -> dict:
    """The family slowest at the largest size, with its time at every size and the ratio of the last two; and
    every family whose ratio is over the target (timed again, best of three, to tell it from noise)."""
    rows = []
    for family in families_of(target, old):
        times, verdicts = zip(*(run_target(pkg, target, family, n) for n in sizes))
        rows.append({"family": family, "seconds": list(times), "verdicts": verdicts})
    over = []
    for r in rows:
        if not old and r["seconds"][-1] > 0.002 and ratio_of(r["seconds"]) > TARGET_RATIO:
            r["seconds"] = [min(run_target(pkg, target, r["family"], n)[0] for _ in range(3)) for n in sizes]
            if ratio_of(r["seconds"]) > TARGET_RATIO:
                over.append({"family": repr(r["family"]), "seconds": rounded(r["seconds"]), "ratio": ratio_of(r["seconds"])})
    top = max(rows, key=lambda r: r["seconds"][-1])
    return {"family": repr(top["family"]), "seconds": rounded(top["seconds"]), "ratio": ratio_of(top["seconds"]),
            "families": len(rows), "over_target": over, "rows": rows}


def ratio_of(seconds: list[float]) -> float:
    return round(seconds[-1] / max(seconds[-2], 1e-9), 2)


def rounded(seconds: list[float]) -> list[float]:
    return [round(t, 4) for t in seconds]


TARGETS = ("validate_args", "validate_answer", "validate_echo", "judge_args", "judge_echo", "turn_grade")


def same_verdicts(new: dict, old: dict) -> bool:
    """Whether the two judges gave the same verdicts on every family the old one was run on."""
    by_family = {repr(r["family"]): r["verdicts"] for r in new["rows"]}
    return all(repr(by_family.get(repr(r["family"]))) == repr(r["verdicts"]) for r in old["rows"])


def bench(sizes: list[int], skip_old: bool) -> dict:
    out: dict[str, Any] = {"cpu": cpu_name(), "sizes": sizes, "target_ratio": TARGET_RATIO, "targets": {}}
    has_old = not skip_old and package("ccl_old") is not None
    for target in TARGETS + ("judge_answer",):
        at = [1000, 2000] if target == "judge_answer" else sizes
        new = worst("ccl", target, at, old=False)
        row: dict[str, Any] = {"sizes": at, "new": {k: v for k, v in new.items() if k != "rows"}}
        if has_old:
            old = worst("ccl_old", target, at, old=True)
            row["old"] = {k: v for k, v in old.items() if k != "rows"}
            row["same_verdicts_old_new"] = same_verdicts(new, old)
        row["met"] = row["new"]["ratio"] <= TARGET_RATIO and not row["new"]["over_target"]
        out["targets"][target] = row
    return out


# ---------------------------------------------------------------- every compiled pattern, as used
# How a module-level pattern is used where it is not scanned whole: matched at one position, searched in
# the window its caller bounds (the runs before a position), matched whole, applied line by line, read on
# normalised text (one space between words: ``answers.norm``), or through the function named.
USAGE = {
    "match": {"claims._OFF", "answers._WORDISH", "answers._LETTER", "answers._LETTERS", "answers._RANGE_AFTER_RE", "reading._SPACED_CAPITAL",
              "fact_checks._CURRENCY_AFTER_RE", "slots._WORD_AFTER_RE", "statements._UNIT_AFTER_RE", "statements._OFF_RE",
              "statements._NUMBER_RUN", "linear.SPACE", "linear.NON_SPACE", "effects._TOKEN_CHAR", "fact_checks._SPACE_OR_COLON",
              "fact_checks._SPACE_OR_TAB", "fact_checks._LETTER", "canonical._SPACES", "canonical._DIGIT", "structure._DASH_AT",
              "structure._SPACE_RUN"},
    "window": {"statements._WORKING_RE", "claims._DENIED", "claims._NOT_YET", "claims._TO", "claims._BE",
               "claims._EMPHATIC", "answers._RANGE_BEFORE_RE", "answers._MINUS_WORD", "reading._BELOW", "fact_checks._CURRENCY_BEFORE_RE",
               "slots._SYMBOL_BEFORE_RE", "slots._WORD_BEFORE_RE", "statements._DENIAL_RE"},
    "full": {"answer._AFTER_GAP", "answer._BEFORE_GAP", "lexicon.NEUTRAL_SENTENCES", "reading._BLANK", "linear._AT_SHAPED"},
    "lines": {"canonical._ROW_RE", "canonical._RULE_RE", "structure._ROW_LINE_RE", "structure._RESULTS_LINE_RE"},
    "normalised": {"statements._ALTERNATIVE_GAP_RE"},
}
# patterns read through a function that gives their answer in linear time (issue 55)
THROUGH = {"answers._CLAUSE_RE": ("answers", "clauses"),
           "answers._SENTENCE_RE": ("answers", "clauses"), "canonical._RESPECTIVELY_RE": ("canonical", "_respectively_match"),
           "canonical._VALUES_THEN_NAMES_RE": ("canonical", "_values_then_names_sub"),
           "statements._SAME_CURRENCY_RE": ("statements", "_same_currency"),
           "structure.SEGMENT_LABEL_RE": ("structure", "_segment_labels"), "structure.TABLE_ROW_RE": ("structure", "_table_rows"),
           "structure.FRAMING_RE": ("structure", "_framed")}


def judge_patterns() -> dict[str, tuple[Any, list[str]]]:
    """Every compiled pattern held by a module of ccl.judge (in tuples and dicts too), once: its first name
    (module.name) -> the pattern and every name it goes by (a module imports another's)."""
    from ccl.judge.linear import RunPattern

    found: dict[int, tuple[Any, list[str]]] = {}
    for path in sorted((ROOT / "ccl" / "judge").rglob("*.py")):  # ruler 3's subpackage too
        module = importlib.import_module(".".join(("ccl", *path.relative_to(ROOT / "ccl").with_suffix("").parts)))
        for name, value in vars(module).items():
            values = list(value.values()) if isinstance(value, dict) else list(value) if isinstance(value, tuple) else [value]
            for i, v in enumerate(x[1] if isinstance(x, tuple) and len(x) == 2 else x for x in values):
                if isinstance(v, (re.Pattern, RunPattern)):
                    found.setdefault(id(v), (v, []))[1].append(f"{path.stem}.{name}" + (f"[{i}]" if len(values) > 1 else ""))
    return {names[0]: (v, names) for v, names in found.values()}


def use(names: list[str], p: Any) -> Callable[[str], Any]:
    """The pattern as the judge uses it (see USAGE and THROUGH, under any of its names); scanned whole otherwise."""
    from ccl.judge.answers import norm
    from ccl.judge.linear import RunPattern, leftmost_spans

    bases = [n.split("[")[0] for n in names]
    kind = next((k for k, members in USAGE.items() if any(b in members for b in bases)), "scan")
    if through := next((THROUGH[b] for b in bases if b in THROUGH), None):
        return getattr(mod("ccl", f"judge.{through[0]}"), through[1])
    if isinstance(p, RunPattern):
        return lambda t: leftmost_spans(t, p)
    return {"match": p.match, "full": p.fullmatch, "window": lambda t: p.search(t, max(0, len(t) - 100)),
            "lines": lambda t: [p.match(line) for line in t.split("\n")], "normalised": lambda t: p.match(norm(t)),
            "scan": lambda t: collections.deque(p.finditer(t), maxlen=0)}[kind]  # read, not kept


def time_pattern(fn: Callable[[str], Any], text: str) -> float:
    """Seconds for one use, the garbage collector off (its passes over thousands of match objects are
    the noise that makes a linear scan look worse than linear at a millisecond)."""
    gc.disable()
    try:
        t0 = time.perf_counter()
        fn(text)
        return time.perf_counter() - t0
    finally:
        gc.enable()


def pattern_sweep(sizes: list[int]) -> list[dict]:
    """Each pattern, as used, on each family at the last two sizes (best of five); ratios over the target."""
    flagged = []
    for key, (p, names) in judge_patterns().items():
        fn = use(names, p)
        for family in FAMILIES:
            small = min(time_pattern(fn, hostile(family, sizes[-2])) for _ in range(5))
            if small > 2.0:  # already too slow to try the larger size
                flagged.append({"pattern": key, "family": repr(family), "ms": [round(small * 1e3, 2), None]})
                continue
            large = min(time_pattern(fn, hostile(family, sizes[-1])) for _ in range(5))
            if large > 0.001 and large / max(small, 1e-9) > TARGET_RATIO:
                flagged.append({"pattern": key, "family": repr(family), "ms": [round(small * 1e3, 2),
                                round(large * 1e3, 2)], "ratio": round(large / max(small, 1e-9), 2)})
    return flagged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="8000,16000", help="hostile string lengths, comma-separated")
    ap.add_argument("--skip-old", action="store_true", help="time only the current judge")
    ap.add_argument("--patterns", action="store_true", help="also time every compiled pattern of ccl/judge")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    out = bench(sizes, args.skip_old)
    if args.patterns:
        out["patterns_over_target"] = pattern_sweep(sizes)
    print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
