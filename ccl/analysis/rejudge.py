"""Re-judging committed transcripts with a newer ruler: per configuration, pooled over the main splits
and per split, how many episodes each ruler passes, and which episodes change verdict. Ruler 2 against
ruler 1 (issue 37, stage ``rejudge``) and ruler 3 against ruler 2, with ruler 1 beside them (issue 57,
stage ``rejudge_ruler3``) are the same code, told which rulers to compare.

Nothing is regenerated: the transcripts are the evaluation runs' and the teacher's, as committed.
Both verdicts are computed here by the judging code itself (``ccl.judge.judging.verdict_row``),
so the numbers are the ones the judge and acceptance stages write, not a second implementation.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..judge.judging import JudgeError, verdict_row
from ..judge.ruler3 import judge as ruler3_judge
from ..records import EpisodeRow, Task
from ..vocabulary import MAIN_SPLITS, RULER1, RULER2, RULER3, parse_run_name

# directions of a changed verdict: the ruler that alone passes the episode
RULER1_ONLY, RULER2_ONLY = f"{RULER1}_only", f"{RULER2}_only"
POOLED_MAIN = "pooled_main"


@dataclass(frozen=True)
class Transcripts:
    """One run's committed transcripts: the configuration it belongs to, its name, its rows."""

    config: str
    run: str
    rows: Sequence[EpisodeRow]


def config_of(run: str) -> str:
    """The configuration a run of results/runs belongs to (``B_s0`` -> ``B``; a single run is its own)."""
    return parse_run_name(run)[0]


def rejudged(tasks: Mapping[str, Task], source: Transcripts, with_ruler3: bool = False) -> list[dict]:
    """One row per episode: where it comes from, rulers 1 and 2's verdicts (and ruler 3's when asked) and
    the final answer."""
    out = []
    for row in source.rows:
        task = tasks.get(row["task_id"])
        if task is None:
            raise JudgeError(f"{source.run}: episode of task {row['task_id']!r}, which is in no task file")
        judged = verdict_row(task, row)
        third = {RULER3: ruler3_judge(task, row["record"])} if with_ruler3 else {}
        out.append({"config": source.config, "run": source.run, "split": row["dataset"],
                    "task_id": row["task_id"], "template": row["template"],
                    RULER1: judged["verdict"], RULER2: judged[RULER2], **third, "final": row["record"]["final"]})
    return out


def _direction(episode: dict, older: str = RULER1, newer: str = RULER2) -> str | None:
    first, second = bool(episode[older]["success"]), bool(episode[newer]["success"])
    return None if first == second else f"{older}_only" if first else f"{newer}_only"


def _rate(k: int, n: int) -> float | None:
    return round(k / n, 6) if n else None


def _reason_kinds(episodes: Iterable[dict], ruler: str = RULER2) -> dict[str, int]:
    """``ruler``'s reason codes (without their ':node' suffix) over ``episodes``, most frequent first."""
    counts = Counter(r.split(":", 1)[0] for e in episodes for r in dict.fromkeys(e[ruler]["reasons"]))
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def tally(episodes: Sequence[dict]) -> dict[str, Any]:
    """n, each ruler's successes and rate, and the episodes that changed verdict in each direction
    (with the templates and ruler-2 reasons of those ruler 1 alone passed)."""
    n = len(episodes)
    first = sum(bool(e[RULER1]["success"]) for e in episodes)
    second = sum(bool(e[RULER2]["success"]) for e in episodes)
    lost = [e for e in episodes if _direction(e) == RULER1_ONLY]
    gained = [e for e in episodes if _direction(e) == RULER2_ONLY]
    return {"n": n, RULER1: {"successes": first, "rate": _rate(first, n)},
            RULER2: {"successes": second, "rate": _rate(second, n)},
            RULER1_ONLY: len(lost), RULER2_ONLY: len(gained),
            f"{RULER1_ONLY}_by_template": dict(sorted(Counter(e["template"] for e in lost).items())),
            f"{RULER1_ONLY}_by_reason": _reason_kinds(lost),
            f"{RULER2_ONLY}_by_template": dict(sorted(Counter(e["template"] for e in gained).items()))}


def by_config(episodes: Sequence[dict], tallied: Callable[[Sequence[dict]], dict[str, Any]] = tally) -> dict[str, Any]:
    """config -> its runs, ``tallied`` pooled over the main splits (None without one) and per split (``tally3``
    for ruler 3 against ruler 2)."""
    out: dict[str, Any] = {}
    for config in dict.fromkeys(e["config"] for e in episodes):
        mine = [e for e in episodes if e["config"] == config]
        main = [e for e in mine if e["split"] in MAIN_SPLITS]
        splits = sorted({e["split"] for e in mine})
        out[config] = {"runs": sorted({e["run"] for e in mine}), POOLED_MAIN: tallied(main) if main else None,
                       "splits": {s: tallied([e for e in mine if e["split"] == s]) for s in splits}}
    return out


def changed_rows(episodes: Sequence[dict]) -> list[dict]:
    """One row per episode whose verdict the change of ruler flips: where it is, ruler 1's verdict,
    ruler 2's reasons and the final answer."""
    out = []
    for e in episodes:
        direction = _direction(e)
        if direction is None:
            continue
        first = e[RULER1]
        out.append({"config": e["config"], "run": e["run"], "split": e["split"], "task_id": e["task_id"],
                    "template": e["template"], "direction": direction,
                    RULER1: {"success": first["success"], "reasons": first["reasons"],
                             "strict_reasons": first["strict_reasons"]},
                    f"{RULER2}_reasons": e[RULER2]["reasons"], "final": e["final"]})
    return out


# ---------------------------------------------------------------- ruler 3 against ruler 2 (issue 57)
def tally3(episodes: Sequence[dict]) -> dict[str, Any]:
    """n, each of the three rulers' successes and rate, and the episodes on which ruler 2 and ruler 3
    disagree in each direction (with the templates, and ruler 3's reasons for those it alone fails)."""
    n = len(episodes)
    out: dict[str, Any] = {"n": n}
    for ruler in (RULER1, RULER2, RULER3):
        k = sum(bool(e[ruler]["success"]) for e in episodes)
        out[ruler] = {"successes": k, "rate": _rate(k, n)}
    lost = [e for e in episodes if _direction(e, RULER2, RULER3) == f"{RULER2}_only"]
    gained = [e for e in episodes if _direction(e, RULER2, RULER3) == f"{RULER3}_only"]
    return {**out, f"{RULER2}_only": len(lost), f"{RULER3}_only": len(gained),
            f"{RULER2}_only_by_template": dict(sorted(Counter(e["template"] for e in lost).items())),
            f"{RULER2}_only_by_reason": _reason_kinds(lost, RULER3),
            f"{RULER3}_only_by_template": dict(sorted(Counter(e["template"] for e in gained).items()))}


def changed_rows3(episodes: Sequence[dict], records: Mapping[tuple[str, str], dict]) -> list[dict]:
    """One row per episode ruler 2 and ruler 3 judge differently: where it is, both rulers' reasons, the
    calls as the world answered them (turn, tool, arguments, outcome) and the final answer, so that a
    reader can check the change without the transcript files."""
    out = []
    for e in episodes:
        direction = _direction(e, RULER2, RULER3)
        if direction is None:
            continue
        record = records[(e["run"], e["task_id"])]
        calls = [[c.get("turn"), c.get("tool"), c.get("args"), c.get("outcome")] for c in record["calls"]]
        out.append({"config": e["config"], "run": e["run"], "split": e["split"], "task_id": e["task_id"],
                    "template": e["template"], "direction": direction, f"{RULER2}_reasons": e[RULER2]["reasons"],
                    f"{RULER3}_reasons": e[RULER3]["reasons"], "calls": calls, "status": record["status"],
                    "final": e["final"]})
    return out
