"""The three rulers side by side (issue 57) in both studies' reports: every cell read from a hand-built
rejudge record, worked out by hand here, and the missing-artifact sentence where the record is absent."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ccl.report.artifacts import (
    RULER3_REJUDGE,
    STUDY2_RULER3,
    Artifacts,
    Missing,
    load_artifacts,
    load_one,
)
from ccl.report.render import markdown_table
from ccl.report.ruler3 import (
    COLUMNS,
    STUDIES,
    rate,
    ruler3_rows,
    ruler3_table,
    study1_ruler3_table,
    top_reasons,
)
from ccl.report.study2 import three_rulers_table
from ccl.report.tables import check_table

TITLE1 = ("Success under three rulers (%): ruler 1, pre-registered; ruler 2, post hoc (issue 37); "
          "ruler 3, post hoc (issue 57)")
TITLE2 = ("Success under three rulers (%): ruler 1, pre-registered secondary; ruler 2, pre-registered primary; "
          "ruler 3, post hoc (issue 57)")


def _tally(n: int, k1: int, k2: int, k3: int, r2_only: int, r3_only: int, reasons: dict[str, int]) -> dict[str, Any]:
    """A tally as ``ccl.analysis.rejudge.tally3`` writes it (rates are fractions rounded to 6 places)."""
    def cell(k: int) -> dict[str, Any]:
        return {"successes": k, "rate": round(k / n, 6) if n else None}
    return {"n": n, "ruler1": cell(k1), "ruler2": cell(k2), "ruler3": cell(k3), "ruler2_only": r2_only,
            "ruler3_only": r3_only, "ruler2_only_by_reason": reasons, "ruler2_only_by_template": {},
            "ruler3_only_by_template": {}}


# C: 8 episodes pooled; ruler 2 passes 4, ruler 3 2 = 4 - 3 (only ruler 2) + 1 (only ruler 3).
# Its reasons tie at 2 between repeated_answered and unoffered_tool: ties go by name, wrong_currency (1) drops.
C_POOLED = _tally(8, 5, 4, 2, 3, 1, {"unoffered_tool": 2, "repeated_answered": 2, "wrong_currency": 1})
RECORD: dict[str, Any] = {
    "episodes": 11, "changed": 4,
    "configs": {
        "C": {"runs": ["C_s0"], "pooled_main": C_POOLED,
              "splits": {"eval_id": _tally(5, 3, 2, 1, 2, 1, {"repeated_answered": 2}),
                         "eval_renamed": _tally(3, 2, 2, 1, 1, 0, {"unoffered_tool": 2, "wrong_currency": 1})}},
        # the teacher's training-pool transcripts: no main split, so its one split is the row
        "teacher_acceptance": {"runs": ["pass1"], "pooled_main": None,
                               "splits": {"train_pool": _tally(3, 1, 1, 1, 0, 0, {})}},
    },
}
ROW_C = ["C", "main, pooled", "8", "62.5", "50.0", "25.0", "3", "1", "repeated_answered (2), unoffered_tool (2)"]
ROW_TEACHER = ["teacher_acceptance", "train_pool", "3", "33.3", "33.3", "33.3", "0", "0", "—"]


def test_cells_are_worked_out_by_hand():
    assert rate({"successes": 5, "rate": 0.625}) == "62.5"
    assert rate({"successes": 1, "rate": 0.333333}) == "33.3"
    assert rate({"successes": 0, "rate": None}) == "—"  # no episode: the repo's undefined cell
    assert top_reasons({"b": 1, "a": 1, "c": 4}) == "c (4), a (1)"
    assert top_reasons({}) == "—"


def test_rows_pool_the_main_splits_and_fall_back_to_the_single_split():
    assert ruler3_rows(RECORD) == [ROW_C, ROW_TEACHER]


def test_study1_table_renders_the_exact_rows_under_its_title_and_source():
    t = study1_ruler3_table(Artifacts(root=Path("."), files={RULER3_REJUDGE: RECORD}))
    check_table(t)
    assert (t.name, t.title, t.columns, t.sources) == ("ruler3", TITLE1, COLUMNS, [RULER3_REJUDGE])
    assert "keep their pre-registered ruler (ruler 1)" in t.note and "ruler 3 is what rewards read" in t.note
    assert "`results/ruler3/study1/changed.jsonl`" in t.note
    md = markdown_table(t)
    assert md.startswith(f"**{TITLE1}**\n")
    assert "| C | main, pooled | 8 | 62.5 | 50.0 | 25.0 | 3 | 1 | repeated_answered (2), unoffered_tool (2) |" in md
    assert "| teacher_acceptance | train_pool | 3 | 33.3 | 33.3 | 33.3 | 0 | 0 | — |" in md
    assert md.rstrip().endswith("Source: `results/ruler3/study1/rejudge.json`")


def test_study2_table_names_its_own_preregistered_rulers_and_files():
    t = ruler3_table(RECORD, study=2)
    assert (t.title, t.sources, t.rows) == (TITLE2, [STUDY2_RULER3], [ROW_C, ROW_TEACHER])
    assert "ruler 2, the primary outcome" in t.note and "`results/ruler3/study2/changed.jsonl`" in t.note


def test_a_missing_record_shows_the_missing_sentence_not_an_error(tmp_path):
    art = load_artifacts(tmp_path)  # an empty root: every artifact missing
    assert isinstance(art.get(RULER3_REJUDGE), Missing)
    t = study1_ruler3_table(art)
    check_table(t)
    assert t.rows == [] and t.sources == [RULER3_REJUDGE]
    assert t.missing == ("Not available: `results/ruler3/study1/rejudge.json` (every published transcript judged "
                         "by rulers 1, 2 and 3) is missing; it is written by the `rejudge_ruler3` stage "
                         "(`dvc repro rejudge_ruler3`).")
    assert t.missing in markdown_table(t)


def test_study2_page_table_reads_the_record_or_says_it_is_missing(tmp_path):
    md = three_rulers_table(tmp_path)
    assert md.startswith(f"**{TITLE2}**\n\nNot available: `{STUDY2_RULER3}`")
    assert "`dvc repro study2/dvc.yaml:rejudge_ruler3`" in md
    path = tmp_path / STUDY2_RULER3
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(RECORD))
    assert load_one(tmp_path, STUDY2_RULER3, "x") == RECORD
    md = three_rulers_table(tmp_path)
    assert "| C | main, pooled | 8 | 62.5 | 50.0 | 25.0 | 3 | 1 | repeated_answered (2), unoffered_tool (2) |" in md
    assert md.endswith(f"Source: `{STUDY2_RULER3}`")


def test_each_study_table_points_at_its_own_changed_file():
    assert [s.changed for s in STUDIES.values()] == ["results/ruler3/study1/changed.jsonl",
                                                     "results/ruler3/study2/changed.jsonl"]
