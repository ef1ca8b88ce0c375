"""The pieces studies 2 and 3's pages share (ccl/report/study_page.py), against hand-written tables."""
from __future__ import annotations

import pytest

from ccl.errors import InputError
from ccl.report import study_page as sp
from ccl.vocabulary import Contrast

ROW = {"contrast": "x_vs_y", "a": "x", "vs": "y", "a_success": 55.04, "diff": -1.25, "low": -3.21, "high": 0.64,
       "p": 0.2371, "p_holm": 0.3615, "significant": False, "n": 420, "seeds_a": 1,
       "components": [{"b_success": 56.29, "a_wins": 18, "b_wins": 23, "seeds_b": 2, "reverse_share": 0.039}]}
CONTRASTS = (Contrast("x_vs_y", "x", ("y",)), Contrast("z_vs_y", "z", ("y",)))


def test_a_family_table_with_seeds_has_their_column_and_a_missing_contrast_fills_every_cell():
    table = sp.family_table([ROW], CONTRASTS, {"x_vs_y": 0.09}, ci_label="95% CI", seeds=True).splitlines()
    assert table[0] == ("| contrast | a (%) | b (%) | a - b | 95% CI | exact p | Holm p | MDE | tasks | wins a / b "
                        "| seeds a / b | observed q (%) |")
    assert table[2] == "| `x_vs_y` | 55.0 | 56.3 | -1.2 | [-3.2, +0.6] | 0.2371 | 0.3615 | 9.0 | 420 | 18 / 23 | 1 / 2 | 3.9 |"
    assert table[3] == "| `z_vs_y` | not computed (enters Holm with p = 1) |" + "  |" * 10  # ten empty cells
    assert table[3].count("|") == table[0].count("|")


def test_a_family_table_without_seeds_and_without_an_mde_says_n_a():
    table = sp.family_table([ROW], CONTRASTS[:1], {}, ci_label="CI", seeds=False).splitlines()
    assert table[0].count("|") == 12 and "seeds" not in table[0] and "| CI |" in table[0]
    assert table[2] == "| `x_vs_y` | 55.0 | 56.3 | -1.2 | [-3.2, +0.6] | 0.2371 | 0.3615 | n/a | 420 | 18 / 23 | 3.9 |"


def test_the_conclusion_names_configurations_and_reads_the_verdict_from_holm():
    names = {"x": "Ex"}
    assert sp.conclusion(CONTRASTS[0], ROW, "primary", names) == (
        "Ex was not detected to beat y (`x_vs_y`, primary): -1.2 points [-3.2, +0.6], Holm p 0.3615.")
    worse = {**ROW, "significant": True, "p_holm": 1e-9}
    assert sp.conclusion(CONTRASTS[0], worse, "secondary", names) == (
        "Ex was detected to be worse than y (`x_vs_y`, secondary): -1.2 points [-3.2, +0.6], Holm p < 0.000001.")
    better = {**ROW, "significant": True, "diff": 2.0, "low": 0.5, "high": 3.5, "p_holm": 1e-6}
    assert sp.conclusion(CONTRASTS[0], better, "primary", names) == (
        "Ex was detected to beat y (`x_vs_y`, primary): +2.0 points [+0.5, +3.5], Holm p 1e-06.")
    assert sp.conclusion(CONTRASTS[1], None, "primary", names) == (
        "z against y (`z_vs_y`, primary): not computed (it enters Holm with p = 1).")


def test_task_families_and_the_curve():
    summary = {"families_of_tasks": [{"config": "C", "family": "chain", "tasks": 12, "ruler3_successes": 7.5}]}
    assert sp.task_family_table(summary, "ruler3", "s").splitlines()[2] == "| `C` | chain | 12 | 7.5 |"
    assert sp.task_family_table({}, "ruler3", "s") == "n/a"
    power = {"curve": [{"reverse_share": 0.05, "a": 0.0654, "b": None}]}
    assert sp.curve_table(power, ["a", "b"]).splitlines()[2] == "| 5.0 | 6.5 | n/a |"


def test_cells_and_the_stage_time_record(tmp_path):
    assert sp.pct({"mean": 55.555, "low": 50.0, "high": 60.04}) == "55.6 [50.0, 60.0]" and sp.pct(None) == "n/a"
    assert sp.num(0.123456) == "0.1235" and sp.num(7) == "7"
    assert sp.stage_times(tmp_path / "stage_times.json") == {}  # before the run has written it
    assert not sp.recorded({}) and sp.recorded({"total_s": 5990.0})


def test_deviations_take_sentences_and_stopped_attempts_and_refuse_anything_else(tmp_path):
    path = tmp_path / "deviations.yaml"
    assert sp.deviation_sentences(path) == []  # none recorded before the run
    path.write_text("- one\n- {deviation: two, attempt: runs/a1, stopped: '2026-12-01'}\n")
    assert sp.deviation_sentences(path) == ["one", "two"]
    path.write_text("- {deviation: two, attempt: runs/a1}\n")  # an attempt without when it stopped
    with pytest.raises(InputError, match="deviations.yaml: expected a list of sentences"):
        sp.deviation_items(path)
