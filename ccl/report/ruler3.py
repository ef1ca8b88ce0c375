"""Ruler 3 (issue 57) beside rulers 1 and 2: one table per study, every number read from the re-judging
stage's record (``results/ruler3/<study>/rejudge.json``, written by ``ccl/stages/rejudge_ruler3.py``).

Each configuration's row is its main splits pooled; a configuration with no main split (the teacher's
training-pool transcripts) gets one row per split it has. Rates are fractions in the record and shown in
percent (``pct``); ruler 3's reason counts are as the record holds them (``ccl/analysis/rejudge.py``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..vocabulary import RULER1, RULER2, RULER3
from .artifacts import (
    RULER3_CHANGED,
    RULER3_REJUDGE,
    STUDY2_RULER3,
    STUDY2_RULER3_CHANGED,
    Artifacts,
    Missing,
)
from .tables import Table, missing_table, pct

NAME = "ruler3"
COLUMNS = ["config", "splits", "episodes", "ruler 1", "ruler 2", "ruler 3", "only ruler 2 passes",
           "only ruler 3 passes", "ruler 3's two most frequent reasons where only ruler 2 passes"]
POOLED = "main, pooled"  # the splits cell of a configuration's pooled row
TOP_REASONS = 2


@dataclass(frozen=True)
class Study:
    """What differs between the two studies' tables: the record, its changed episodes, and which ruler was
    pre-registered (study 1: ruler 1; study 2: ruler 2 as its primary outcome, ruler 1 in secondary family A)."""

    source: str
    changed: str
    title: str
    kept: str  # the ruler(s) the published results keep


STUDIES = {
    1: Study(RULER3_REJUDGE, RULER3_CHANGED,
             "Success under three rulers (%): ruler 1, pre-registered; ruler 2, post hoc (issue 37); "
             "ruler 3, post hoc (issue 57)", "their pre-registered ruler (ruler 1)"),
    2: Study(STUDY2_RULER3, STUDY2_RULER3_CHANGED,
             "Success under three rulers (%): ruler 1, pre-registered secondary; ruler 2, pre-registered primary; "
             "ruler 3, post hoc (issue 57)",
             "their pre-registered rulers (ruler 2, the primary outcome; ruler 1, secondary family A)"),
}


def note(study: Study) -> str:
    """The table's note: which ruler the results keep, which one rewards read, and where the changed episodes are."""
    return (f"Published results keep {study.kept}, and ruler 3 is what rewards read from now on; every episode "
            f"rulers 2 and 3 judge differently is listed, with both rulers' reasons, in `{study.changed}`. "
            "Reason counts are ruler 3's reason codes (once per node), so they can exceed the episodes.")


def rate(cell: dict) -> str:
    """A ruler's rate (a fraction in the record, None over no episode) in percent."""
    return pct(None if cell["rate"] is None else 100 * cell["rate"])


def top_reasons(counts: dict[str, int], k: int = TOP_REASONS) -> str:
    """The ``k`` most frequent reason kinds with their counts (ties by name); "—" when there are none."""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:k]
    return ", ".join(f"{reason} ({n})" for reason, n in ranked) or "—"


def tally_row(config: str, splits: str, t: dict[str, Any]) -> list[str]:
    return [config, splits, str(t["n"]), rate(t[RULER1]), rate(t[RULER2]), rate(t[RULER3]),
            str(t[f"{RULER2}_only"]), str(t[f"{RULER3}_only"]), top_reasons(t[f"{RULER2}_only_by_reason"])]


def ruler3_rows(record: dict[str, Any]) -> list[list[str]]:
    """One row per configuration (its main splits pooled), or per split where it has no main split."""
    rows = []
    for config, entry in record["configs"].items():
        if entry["pooled_main"] is not None:
            rows.append(tally_row(config, POOLED, entry["pooled_main"]))
        else:
            rows += [tally_row(config, split, t) for split, t in entry["splits"].items()]
    return rows


def ruler3_table(record: dict[str, Any] | Missing, study: int = 1) -> Table:
    """Study ``study``'s three rulers side by side from its rejudge record (or the missing-artifact message)."""
    s = STUDIES[study]
    if isinstance(record, Missing):
        return missing_table(NAME, s.title, record)
    return Table(NAME, s.title, list(COLUMNS), ruler3_rows(record), [s.source], note=note(s))


def study1_ruler3_table(art: Artifacts) -> Table:
    """Study 1's table, from ``results/ruler3/study1/rejudge.json`` as loaded with the other artifacts."""
    return ruler3_table(art.get(RULER3_REJUDGE))
