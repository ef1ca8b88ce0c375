"""ccl/report/promises.py: what the pre-registration promised the report would say, read back from the
text (issue 43). Each promise is kept by a hand-written text and broken by another, whose problem is
named; then the study's own report, records and labels."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ccl.report.artifacts import RUN_ATTEMPTS, RUN_TIMES, load_artifacts
from ccl.report.families import LABELS, STUDY1_FAMILIES, Family
from ccl.report.promises import (
    attempt_problems,
    family_label_problems,
    limitations_section,
    page_text,
    stage_time_problems,
)
from ccl.report.run_time import PREREGISTERED_BUDGET_MIN, budget_sentence, minutes
from ccl.stages.build_report import BrokenPromise, build, check, promise_problems
from ccl.stats import holm

ROOT = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------ run time, stage by stage
# 100 s of install, 10 s and 7,150.4 s of stages, 7,300 s in all: 121 min 40 s, 1 min 40 s over 120 minutes
RECORD = {"install_s": 100.0, "stages": [{"stage": "build_datasets", "seconds": 10.0},
                                         {"stage": "train@C_s0", "seconds": 7150.4}], "total_s": 7300.0}
TABLE = """| step | wall time |
| --- | --- |
| install (before the first stage) | 1 min 40 s |
| build_datasets | 10 s |
| train@C_s0 | 119 min 10 s |
| **all, install included** | **121 min 40 s** |
"""
OVER = ("The run took 121 min 40 s in all, install included, exceeding the pre-registered budget of 120 minutes on "
        "the machine it ran on; as the pre-registration requires, the study was not shrunk after the fact.")


def test_the_budget_sentence_says_whether_the_total_exceeded_the_budget():
    assert minutes(7150.4) == "119 min 10 s" and minutes(58) == "58 s"
    assert budget_sentence(RECORD, 120) == OVER
    assert budget_sentence(RECORD, 122) == ("The run took 121 min 40 s in all, install included, within the "
                                            "pre-registered budget of 122 minutes on the machine it ran on.")


def test_a_report_with_the_table_and_the_sentence_keeps_the_promise():
    assert stage_time_problems(f"## Run time\n\n{TABLE}\n{OVER}\n", RECORD, 120) == []
    wrapped = OVER.replace(" on the machine", "\non the machine")  # a template may wrap the sentence
    assert stage_time_problems(f"{TABLE}\n{wrapped}\n", RECORD, 120) == []


def test_a_missing_stage_row_is_named():
    text = TABLE.replace("| train@C_s0 | 119 min 10 s |\n", "") + OVER
    assert stage_time_problems(text, RECORD, 120) == [
        "run time: the stage-time table lacks 1 of its 4 rows (or has them out of order), "
        "first '| train@C_s0 | 119 min 10 s |'"]


def test_a_report_without_the_budget_sentence_or_calling_the_run_within_it_fails():
    problems = stage_time_problems(TABLE, RECORD, 120)
    assert len(problems) == 1 and problems[0].startswith(
        "run time: no sentence states that the run took 121 min 40 s and exceeded the pre-registered budget of "
        "120 minutes")
    within = budget_sentence(RECORD, 122).replace("122", "120")
    problems = stage_time_problems(TABLE + within, RECORD, 120)
    assert problems[-1] == ("run time: the report says the run was within the budget, but 121 min 40 s exceeds "
                            "120 minutes")


# ------------------------------------------------------------------ limitations: the attempts before the run
ATTEMPTS = [("exp/attempt_1", {"exit_status": 255, "failed_stage": "replay@A_base"}),
            ("exp/attempt_2", {"exit_status": 0, "failed_stage": None})]
KEPT = """## 11. Limitations

- An earlier attempt (`exp/attempt_1/`) stopped at stage `replay@A_base`; after the fix the study was
  rerun (`exp/attempt_2/`), and every number comes from the rerun.

## 12. Reproducibility
"""


def test_limitations_that_name_the_stopped_attempt_and_the_rerun_keep_the_promise():
    assert limitations_section(KEPT).strip().startswith("- An earlier attempt")
    assert attempt_problems(KEPT, ATTEMPTS) == []
    assert attempt_problems("no limitations at all", ATTEMPTS[1:]) == []  # nothing stopped: nothing to say


def test_limitations_silent_about_the_first_attempt_fail_naming_it():
    silent = KEPT.replace("An earlier attempt (`exp/attempt_1/`) stopped at stage `replay@A_base`; after", "After")
    assert attempt_problems(silent, ATTEMPTS) == [
        "attempts: the limitations do not mention the attempt that stopped (exp/attempt_1)",
        "attempts: the limitations do not name the stage the attempt in exp/attempt_1 stopped at (replay@A_base)"]
    elsewhere = silent + "\nThe first attempt (exp/attempt_1) stopped at replay@A_base.\n"  # outside the section
    assert len(attempt_problems(elsewhere, ATTEMPTS)) == 2
    assert attempt_problems(KEPT.replace("(`exp/attempt_2/`)", ""), ATTEMPTS) == [
        "attempts: the limitations do not name the run the published numbers come from (exp/attempt_2)"]
    assert attempt_problems("# Report\n\nno such section\n", ATTEMPTS) == [
        "attempts: the report has no limitations section to list the 1 attempt(s) that stopped (exp/attempt_1)"]


def test_a_published_run_that_did_not_finish_is_named():
    assert attempt_problems(KEPT, [ATTEMPTS[0]]) == [
        "attempts: the published run (exp/attempt_1) did not finish (exit status 255)"]


# ------------------------------------------------------------------ families of tests: one label each
FAMS = {"replay": Family("secondary and descriptive, Holm-corrected within its own family", (r"\breplay\b",), True),
        "strata": Family("exploratory and uncorrected", (r"\bdepth\b",), False)}
GOOD = """Success by depth is exploratory and uncorrected.

Replay is secondary and descriptive, Holm-corrected within its own family.

a - b in replay pass, main splits pooled. p_holm: Holm over these 14 tests only (the replay family:
secondary and descriptive, Holm-corrected within its own family).
"""


def test_one_label_per_family_keeps_the_promise():
    assert family_label_problems(GOOD, FAMS) == []
    # a sentence may name two families when it gives each its own label
    both = "Depth is exploratory and uncorrected, replay secondary and descriptive, Holm-corrected within its own family."
    assert family_label_problems(both, FAMS) == []


def test_replay_called_exploratory_and_uncorrected_fails_naming_the_family_and_its_label():
    bad = GOOD + "\nEverything else (depth, replay, serving) is exploratory and uncorrected.\n"
    assert family_label_problems(bad, FAMS) == [
        "report: a sentence labels the replay family ('exploratory and uncorrected') without its label "
        "'secondary and descriptive, Holm-corrected within its own family': "
        "'Everything else (depth, replay, serving) is exploratory and uncorrected.'"]


def test_a_table_notes_later_sentence_continues_its_family():
    # the note's second sentence names no family; it continues the first, which names replay
    note = ("a - b in replay pass, main splits pooled. p_holm: Holm over these 14 tests only (a family of its own, "
            "fixed in advance).")
    problems = family_label_problems(GOOD + "\n" + note + "\n", FAMS)
    assert len(problems) == 1 and "labels the replay family ('family of its own') without its label" in problems[0]


def test_conflicting_and_contradicting_labels_are_named():
    two = "Replay is secondary and descriptive, Holm-corrected within its own family, and exploratory and uncorrected."
    assert family_label_problems(GOOD + two, FAMS) == [
        f"report: a sentence gives the replay family the label of the strata family ('exploratory and "
        f"uncorrected'): {two!r}"]
    corrected = "Success by depth (exploratory and uncorrected) is Holm-corrected."
    assert family_label_problems(GOOD + corrected, FAMS) == [
        f"report: a sentence calls the strata family Holm-corrected, but it is not corrected: {corrected!r}"]
    uncorrected = "Replay (secondary and descriptive, Holm-corrected within its own family) has no correction."
    assert family_label_problems(GOOD + uncorrected, FAMS) == [
        f"report: a sentence calls the replay family uncorrected, but its tests are Holm-corrected: {uncorrected!r}"]


def test_a_label_that_appears_nowhere_is_named_unless_the_page_need_not_name_it():
    text = "Success by depth is exploratory and uncorrected.\n"
    assert family_label_problems(text, FAMS) == [
        "report: the replay family's label 'secondary and descriptive, Holm-corrected within its own family' "
        "appears nowhere"]
    assert family_label_problems(text, FAMS, require=False) == []


def test_a_bare_label_names_its_family_by_its_key_and_html_pages_are_read_as_text():
    page = "<h1>Replay</h1><p>The replay comparisons are <em>exploratory and uncorrected</em>.</p>"
    assert page_text(page).split() == ["Replay", "The", "replay", "comparisons", "are", "exploratory", "and",
                                       "uncorrected."]
    problems = family_label_problems(page_text(page), {"replay": "secondary, descriptive"}, "site page x.html")
    assert problems == ["site page x.html: the replay family's label 'secondary, descriptive' appears nowhere",
                        "site page x.html: a sentence labels the replay family ('uncorrected') without its label "
                        "'secondary, descriptive': 'The replay comparisons are exploratory and uncorrected.'"]


# ------------------------------------------------------------------ study 1: its labels, records and report
def test_the_replay_label_is_true_to_the_preregistration_and_to_the_computation():
    prereg = (ROOT / "docs" / "preregistration.md").read_text(encoding="utf-8")
    assert "**Secondary, descriptive:** decision-point replay pass rate" in prereg
    assert LABELS["replay"].startswith("secondary and descriptive") and STUDY1_FAMILIES["replay"].holm
    # the analysis adjusts the replay comparisons by Holm over those comparisons alone
    paired = json.loads((ROOT / "results" / "replay_summary.json").read_text())["replay_paired"]
    assert paired["n_tests"] == len(paired["rows"]) > 1
    adjusted = holm([r["p"] for r in paired["rows"]])  # from the raw p as stored (rounded to 6 places)
    assert [float(p) for p in adjusted] == pytest.approx([r["p_holm"] for r in paired["rows"]], abs=1e-5)
    assert any(r["p_holm"] > r["p"] for r in paired["rows"])


def test_the_budget_is_the_preregistrations():
    prereg = re.sub(r"\s+", " ", (ROOT / "docs" / "preregistration.md").read_text(encoding="utf-8"))
    assert f"at most {PREREGISTERED_BUDGET_MIN} minutes of `dvc repro` on 2 cores" in prereg
    assert f"if it exceeds {PREREGISTERED_BUDGET_MIN} minutes on the machine it ran on, the report says so" in prereg


@pytest.mark.parametrize("path", RUN_ATTEMPTS)
def test_each_attempts_record_is_its_log_read_by_stage_times(path, tmp_path, capsys):
    from scripts.stage_times import main

    committed = json.loads((ROOT / path).read_text(encoding="utf-8"))
    folder = ROOT / path.rsplit("/", 1)[0]
    out = tmp_path / "stage_times.json"
    assert main([str(folder / "repro.log.gz"), "--json", str(out), "--machine", committed["machine"],
                 "--commit", committed["commit"]]) == 0
    assert capsys.readouterr().out == (folder / "stage_times.md").read_text(encoding="utf-8")  # the README's table
    assert json.loads(out.read_text(encoding="utf-8")) == committed


def test_the_first_attempt_stopped_at_replay_and_the_rerun_finished():
    first, run = (json.loads((ROOT / p).read_text(encoding="utf-8")) for p in RUN_ATTEMPTS)
    assert (first["exit_status"], first["failed_stage"], minutes(first["total_s"])) == (255, "replay@A_base",
                                                                                        "149 min 10 s")
    assert (run["exit_status"], run["failed_stage"], minutes(run["total_s"])) == (0, None, "175 min 40 s")
    assert RUN_TIMES == RUN_ATTEMPTS[-1]


@pytest.fixture(scope="module")
def study():
    """The repository's artifacts and a fresh build of its report and README brief."""
    md, brief = build(ROOT)
    return load_artifacts(ROOT), md, brief


def test_the_study_report_keeps_every_promise(study):
    art, md, brief = study
    assert promise_problems(art, md, brief) == []
    assert "exceeding the pre-registered budget of 120 minutes" in md and "| **all, install included** | " \
        "**175 min 40 s** |" in md
    section = limitations_section(md)
    assert "experiments/cpu_rerun_attempt_1/" in section and "`replay@A_base`" in section
    assert "experiments/cpu_rerun_attempt_2/" in section


@pytest.mark.parametrize("cut, named", [
    # 72 rows: the install, 70 stages and the total
    (r"<!-- BEGIN:run_time -->.*?<!-- END:run_time -->", "run time: the stage-time table lacks 72 of its 72 rows"),
    (r"The run took 175 min 40 s in all[^\n]*", "run time: no sentence states that the run took 175 min 40 s and "
                                                 "exceeded the pre-registered budget of 120 minutes"),
    (r"- An earlier attempt of the study's run.*?that rerun\.\n", "attempts: the limitations do not mention the "
                                                                   "attempt that stopped (experiments/cpu_rerun_attempt_1)"),
])
def test_the_study_report_breaking_a_promise_fails_naming_it(study, cut, named):
    art, md, _ = study
    broken = re.sub(cut, "", md, count=1, flags=re.S)
    assert broken != md
    assert any(p.startswith(named) for p in promise_problems(art, broken)), promise_problems(art, broken)


def test_the_check_reads_the_site_pages_back(study, tmp_path):
    _, md, _ = study
    written = tmp_path / "report.md"
    written.write_text(md, encoding="utf-8")
    site = tmp_path / "site"
    site.mkdir()
    (site / "methods.html").write_text("<p>Decision-point replay is exploratory and uncorrected.</p>")
    with pytest.raises(BrokenPromise, match=r"1 promise\(s\) of the pre-registration not kept:\n- site page "
                                            r"methods.html: a sentence labels the replay family"):
        check(ROOT, written, None, site)
    (site / "methods.html").write_text(f"<p>Decision-point replay is {LABELS['replay']}.</p>")
    check(ROOT, written, None, site)
