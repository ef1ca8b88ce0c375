"""Study 2's report page (docs/preregistration-2.md): results/study2/report.md and .html, and the site's copy.

Everything on the page is read from study 2's artifacts: the analysis (``results/study2/summary.json``), the
power analysis, the run's stage times (``results/study2/stage_times.json``, which ``scripts/timed_repro.sh``
writes after the run), the fresh pool's audit, the adapters' summaries and the deviations the run recorded
(``study2/deviations.yaml``). ``check`` holds the written page to the pre-registration's promises, and the
conclusion sentences of the page and of the README's brief (one per contrast: detected or not, its direction,
estimate, interval and Holm p) to the summary's numbers.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ..artifacts.inputs import read_record, read_rows
from ..artifacts.jsonio import atomic_write_files, sha256_file
from ..artifacts.shapes import GrpoSample, GrpoStepLog
from ..errors import InputError
from ..vocabulary import C, C_DAGGER, C_GRPO_DENSE, C_GRPO_SPARSE, RULER2, STUDY2_CONTRASTS, Contrast
from . import artifacts as A
from . import study_page
from .page import html_page
from .promises import conclusion_problems, stage_time_problems
from .render import TEMPLATES, blocks, markdown_table, markdown_to_html, with_block
from .ruler3 import ruler3_table
from .run_time import budget_sentence, exceeds, minutes, time_rows
from .study_page import (Page, deviation_items, deviation_sentences, md_table, num, pct, recorded,
                         unadjusted_sentence)
from .tables import check_table

# the artifacts the page reads, relative to the root (ccl/report/artifacts.py names them)
PREREG, SUMMARY, POWER, TIMES = A.STUDY2_PREREG, A.STUDY2_SUMMARY, A.STUDY2_POWER, A.STUDY2_TIMES
POOL_AUDIT, DEVIATIONS, RUNS, DAGGER = A.STUDY2_POOL_AUDIT, A.STUDY2_DEVIATIONS, A.STUDY2_RUNS, A.STUDY2_DAGGER

# docs/preregistration-2.md, "Power and time" (tests/test_study2.py reads both back from it): the budget for
# the whole of study 2, install included, and the expected total on the slower machine type
BUDGET_MINUTES = 150
EXPECTED_MINUTES = (97, 103)
SAMPLES_SHOWN = 4  # GRPO's last-step samples the page prints per arm (all of them are in samples.jsonl.gz)


README_BLOCK = "study2-brief"  # the README's block of study 2's results in brief, rewritten by each build
# The configurations as the conclusions name them in prose (each sentence also names its contrast in code).
ARM_NAMES = {C: C, C_DAGGER: "DAgger", C_GRPO_SPARSE: "GRPO sparse", C_GRPO_DENSE: "GRPO dense"}
# The families the README's brief concludes on: the pre-registered questions (primary) and the stricter
# reading that fails repeats of answered calls (secondary B), which changes GRPO sparse's picture.
BRIEF_ROLES = ("primary", "secondary B")


def _name(config: str) -> str:
    return ARM_NAMES.get(config, config)


def conclusion(contrast: Contrast, row: dict | None, role: str) -> str:
    """One contrast's answer in one family (``study_page.conclusion``, with study 2's names)."""
    return study_page.conclusion(contrast, row, role, ARM_NAMES)


def conclusions(family: dict) -> list[str]:
    """The family's conclusions, one per contrast of ``STUDY2_CONTRASTS``, in the pre-registration's order."""
    rows = {r["contrast"]: r for r in family["rows"]}
    return [conclusion(c, rows.get(c.name), family["role"]) for c in STUDY2_CONTRASTS]


def family_of(summary: dict, role: str) -> tuple[str, dict]:
    """(outcome key, family) of the family with ``role``."""
    found = [(o, f) for o, f in summary["families"].items() if f["role"] == role]
    if not found:
        raise InputError(f"{SUMMARY}: no {role} family; rerun study 2's analyze stage")
    return found[0]


def family_table(family: dict, power: dict) -> str:
    """One family's contrasts: difference, CI, exact p, Holm p, MDE, tasks, wins, observed q."""
    mde = {r["contrast"]: r["mde"] for r in power["contrasts"]}
    return study_page.family_table(family["rows"], STUDY2_CONTRASTS, mde, ci_label="CI", seeds=False)


def success_table(summary: dict) -> str:
    roles = sorted(((o, f["role"]) for o, f in summary["families"].items()), key=lambda x: x[1])
    rows = [[f"`{r['config']}`", r["split"], r["tasks"], *(pct(r[o]) for o, _ in roles)] for r in summary["success"]]
    return md_table(["configuration", "split", "tasks", *(f"{role} outcome" for _, role in roles)], rows)


def oracle_sentence(check: dict) -> str:
    if not check.get("evaluated"):
        return "not evaluated."
    parts = []
    for outcome, label in ((RULER2, "ruler 2"), ("success", "ruler 1")):
        c = check[outcome]
        failed = c["failed"]
        parts.append(f"{label} passes it on {c['tasks'] - len(failed)} of {c['tasks']} fresh tasks"
                     + (f" (fails {', '.join(failed[:5])})" if failed else ""))
    return "; ".join(parts) + "."


def stage_times(root: Path) -> dict:
    return study_page.stage_times(root / TIMES)


def times_text(times: dict) -> str:
    """The run's stage times against the budget (``ccl.report.run_time``, as the first study's), or why
    there are none yet."""
    if not recorded(times):
        return ("Not recorded yet: `scripts/timed_repro.sh` writes the stage times after the run "
                f"(`{TIMES}`). The budget is {BUDGET_MINUTES} minutes, install included.")
    return (f"Measured on {times['machine']} at commit `{times['commit']}`, from a fresh clone "
            f"(`bash scripts/timed_repro.sh LOG study2/dvc.yaml`; log `{times['log']}`, started {times['started_utc']}, "
            f"exit status {times['exit_status']}). The report and the site were then rebuilt with these times "
            "(seconds, not counted). Each stage from its start to its lock-file update in `dvc repro`'s log.\n\n"
            + md_table(["step", "wall time"], time_rows(times))
            + f"\n\n{budget_sentence(times, BUDGET_MINUTES)} The pre-registration expected "
              f"{EXPECTED_MINUTES[0]}-{EXPECTED_MINUTES[1]} minutes.")


def adapters_table(root: Path) -> str:
    rows = []
    for d in sorted((root / RUNS).glob("*/summary.json")):
        s = read_record(d, "train")
        rows.append([f"`{d.parent.name}`", s.get("steps", ""), f"{s.get('train_minutes', 0):.1f}",
                     f"`{s.get('adapter_sha256', '')}`"])
    return md_table(["run", "steps", "train minutes", "adapter SHA-256"], rows) if rows else "No adapter trained yet."


def curve_table(power: dict) -> str:
    return study_page.curve_table(power, [c.name for c in STUDY2_CONTRASTS])


def task_family_table(summary: dict) -> str:
    return study_page.task_family_table(summary, RULER2, "ruler-2 successes")


def three_rulers_table(root: Path) -> str:
    """The three rulers side by side (``ccl.report.ruler3``), or the sentence naming the missing record."""
    record = A.load_one(root, A.STUDY2_RULER3, A.STUDY2_RULER3_STAGE,
                        "study 2's transcripts judged by rulers 1, 2 and 3")
    t = ruler3_table(record, study=2)
    check_table(t)
    return markdown_table(t).rstrip("\n")


def dagger_table(root: Path) -> str:
    keys = ["tasks", "beta", "states", "states_off_expert_path", "unrecoverable", "student_passes", "rows",
            "train_rows", "episodes_ruler2_success"]
    stats = [read_record(f, "dagger_rollout") for f in sorted((root / DAGGER).glob("iter*/stats.json"))]
    rows = [[s.get("iteration"), *(s.get(k) for k in keys)] for s in stats]
    return md_table(["iteration", *keys], rows) if rows else "No DAgger iteration has run."


def grpo_last_step(root: Path) -> tuple[str, str]:
    """Each GRPO arm's monitors at its last step (train_log.jsonl) and a few of that step's samples."""
    keys = ["step", "reward", "success", "kl", "zero_spread_groups", "flagged", "flagged_and_passed"]
    monitors, samples = [], []
    for log in sorted((root / RUNS).glob("C_grpo_*/train_log.jsonl")):
        last = read_rows(log, "grpo_train", GrpoStepLog, need_rows=True)[-1]
        monitors.append([f"`{log.parent.name}`", *(num(last.get(k)) for k in keys)])
        samples_file = log.parent / "samples.jsonl.gz"
        rows = [r for r in read_rows(samples_file, "grpo_train", GrpoSample) if r["step"] == last["step"]]
        for r in rows[:SAMPLES_SHOWN]:
            final = " ".join(str(r.get("final") or "").split())[:100].replace("|", "/")
            samples.append([f"`{log.parent.name}`", r.get("family"), r.get("sparse"), ", ".join(r.get("flags") or []),
                            final or "(no final answer)"])
    if not monitors:
        return "No GRPO run has trained.", ""
    return (md_table(["run", *keys], monitors),
            md_table(["run", "task family", "ruler-2 success", "red-team flags", "final answer (first 100 characters)"],
                     samples))


@dataclass(frozen=True)
class Attempt:
    """An attempt of the run that was stopped before the complete one: its folder and when it stopped."""
    folder: str
    stopped: str


def deviations(root: Path) -> list[str]:
    """The deviations the run recorded, one sentence each (``study2/deviations.yaml``: a list)."""
    return deviation_sentences(root / DEVIATIONS)


def attempts(root: Path) -> list[Attempt]:
    """The attempts stopped before the complete run, in the order the deviations list them."""
    items = deviation_items(root / DEVIATIONS)
    return [Attempt(i["attempt"], i["stopped"]) for i in items if isinstance(i, dict) and "attempt" in i]


def facts(root: Path, summary: dict, times: dict, power: dict) -> dict:
    audit = read_record(root / POOL_AUDIT, "fresh_pool")
    tables = {f["role"]: family_table(f, power) for f in summary["families"].values()}
    monitors, samples = grpo_last_step(root)
    pooled_tasks = next((r["tasks"] for r in summary["success"] if r["split"] == "all"), 0)
    over = recorded(times) and exceeds(times, BUDGET_MINUTES)
    return {"prereg_sha256": sha256_file(root / PREREG), "profile": summary["profile"],
            "n_tasks": pooled_tasks, "power_pct": f"{100 * power['power']:.0f}",
            "ci_pct": f"{100 * (1 - summary['alpha']):.0f}", "alpha": summary["alpha"],
            "over_budget": budget_sentence(times, BUDGET_MINUTES) if over else "",
            "tasks_by_split": ", ".join(f"{a['tasks']} {s}" for s, a in audit["splits"].items()),
            "planned_q": f"{100 * power['reverse_share']:.1f}",
            "family_labels": {f["role"]: f["label"] for f in summary["families"].values()},
            "tables": {**tables, "success": success_table(summary), "adapters": adapters_table(root),
                       "curve": curve_table(power), "task_families": task_family_table(summary),
                       "ruler3": three_rulers_table(root),
                       "dagger": dagger_table(root), "grpo_monitors": monitors, "grpo_samples": samples},
            "oracle": oracle_sentence(summary["oracle"]), "times": times_text(times),
            "deviations": deviations(root), "configs": sorted(summary["configs"]),
            "the_run": the_run(attempts(root)), "unadjusted": unadjusted_sentence(summary),
            "conclusions": {f["role"]: conclusions(f) for f in summary["families"].values()}}


def attempts_clause(stopped: list[Attempt]) -> str:
    """The attempts stopped before the complete run, in words; empty when there were none."""
    if not stopped:
        return ""
    if len(stopped) == 1:
        return f"a first attempt (`{stopped[0].folder}`) was stopped {stopped[0].stopped} (see the deviations)"
    each = "; ".join(f"`{a.folder}` {a.stopped}" for a in stopped)
    return f"{len(stopped)} earlier attempts were stopped ({each}; see the deviations)"


def the_run(stopped: list[Attempt]) -> str:
    """The run the page's numbers come from, as its first sentence names it."""
    if not stopped:
        return "one run"
    which = "attempt stopped before it is" if len(stopped) == 1 else "attempts stopped before it are"
    return f"one complete run (the {which} listed under the limitations)"


def run_sentence(times: dict, stopped: list[Attempt]) -> str:
    """The run's time against the budget, and the attempts stopped before it: "ran once" only when there
    were none."""
    tried = attempts_clause(stopped)
    if not recorded(times):
        return f" {tried[0].upper()}{tried[1:]}." if tried else ""
    verdict = "exceeding" if exceeds(times, BUDGET_MINUTES) else "within"
    budget = f"install included ({verdict} the {BUDGET_MINUTES}-minute budget)"
    if not tried:
        return f" It ran once on {times['machine']} in {minutes(times['total_s'])}, {budget}."
    return f" Its one complete run took {minutes(times['total_s'])} on {times['machine']}, {budget}; {tried}."


def _names(configs: list[str]) -> tuple[str, str]:
    """The configurations joined for prose, and the verb that agrees with them."""
    return " and ".join(map(_name, configs)), "was" if len(configs) == 1 else "were"


def title_answer(primary: dict, power: dict) -> str:
    """The title question answered from the primary family: which learning arms were detected to beat
    imitation (C) or to be worse than it, and the differences the design could miss."""
    vs_c = [r for r in primary["rows"] if r["vs"] == C]
    if not vs_c:
        return "The title question is not answered: no contrast against imitation (C) was computed."
    beat = [r["a"] for r in vs_c if r["significant"] and r["diff"] > 0]
    worse = [r["a"] for r in vs_c if r["significant"] and r["diff"] < 0]
    answer = "{} {} detected to beat imitation (C)".format(*_names(beat)) if beat else \
        "no learning arm was detected to beat imitation (C)"
    if worse:
        answer += ", and {} {} detected to be worse than it".format(*_names(worse))
    mdes = sorted({100 * r["mde"] for r in power["contrasts"] if r["mde"] is not None})
    missed = ""
    if mdes and len(beat) + len(worse) < len(vs_c):
        span = f"{mdes[0]:.1f}" if len(mdes) == 1 else f"{mdes[0]:.1f}-{mdes[-1]:.1f}"
        missed = (f"; a true difference below {span} points (the pre-registered MDE: "
                  f"{100 * power['power']:.0f}% power after Holm) could go undetected, so \"not detected\" is not "
                  "\"no difference\"")
    return f"The answer on the primary outcome: {answer}{missed}."


def repeats_sentence(summary: dict) -> str:
    """Secondary B's outcome against the primary's, pooled, per configuration."""
    first, _ = family_of(summary, "primary")
    strict, family = family_of(summary, "secondary B")
    pooled = [r for r in summary["success"] if r["split"] == "all"]
    if not pooled:
        return f"Secondary B ({family['label']}): no configuration was evaluated."
    moves = ", ".join(f"{r[first]['mean']:.1f}% to {r[strict]['mean']:.1f}% for {_name(r['config'])}" for r in pooled)
    return (f"Secondary B ({family['label']}): counting as failures the episodes that repeat an answered call, "
            f"pooled ruler-2 strict success goes from {moves}.")


def _bullets(sentences: list[str]) -> str:
    return "".join(f"- {s}\n" for s in sentences)


def brief(summary: dict, times: dict, power: dict, stopped: list[Attempt]) -> str:
    """Study 2 in brief for the README: the run, success per configuration, the answer to the title question,
    one conclusion per pre-registered question and per contrast of secondary B."""
    _, primary = family_of(summary, "primary")
    _, repeats = family_of(summary, "secondary B")
    pooled = {r["config"]: r for r in summary["success"] if r["split"] == "all"}
    tasks = next(iter(pooled.values()))["tasks"] if pooled else 0
    success = ", ".join(f"{c} {pct(r[RULER2])}" for c, r in pooled.items())
    return (f"Study 2 (`docs/preregistration-2.md`): does learning from its own mistakes beat imitation?"
            f"{run_sentence(times, stopped)}\n"
            f"On its {tasks} fresh paired tasks, ruler-2 strict success (percent, 95% interval): {success}.\n"
            f"{title_answer(primary, power)}\n\n"
            f"Primary family ({primary['label']}), one conclusion per pre-registered question:\n\n"
            f"{_bullets(conclusions(primary))}\n"
            f"{repeats_sentence(summary)}\n\n"
            f"{_bullets(conclusions(repeats))}\n"
            f"{unadjusted_sentence(summary)} "
            "`results/study2/report.md` has every table, the run's stage times and its deviations.\n")


def build(root: Path) -> Page:
    env = Environment(loader=FileSystemLoader(TEMPLATES), undefined=StrictUndefined, keep_trailing_newline=True,
                      autoescape=False)
    summary, times, power = read_record(root / SUMMARY, "analyze"), stage_times(root), read_record(root / POWER, "power")
    md = env.get_template("study2.md.j2").render(f=facts(root, summary, times, power))
    return Page(md, html_page("Study 2: learning from its own mistakes", markdown_to_html(md), page="study2"),
                brief(summary, times, power, attempts(root)))


def conclusion_check(summary: dict, text: str, roles: list[str], where: str) -> list[str]:
    """``text``'s conclusions on the families with ``roles`` against the summary (``promises.conclusion_problems``)."""
    families = {role: family_of(summary, role)[1] for role in roles}
    return conclusion_problems(text, families, [c.name for c in STUDY2_CONTRASTS], summary["alpha"], ARM_NAMES, where)


def promises(root: Path, text: str) -> list[str]:
    """What the pre-registration promised the page shows, checked on ``text``; one problem per broken promise."""
    problems = []
    if sha256_file(root / PREREG) not in text:
        problems.append(f"the page does not quote {PREREG}'s SHA-256")
    summary = read_record(root / SUMMARY, "analyze") if (root / SUMMARY).is_file() else {"families": {}, "configs": {}}
    for label in (f["label"] for f in summary["families"].values()):
        if text.count(label) != 1:
            problems.append(f"the family label {label!r} appears {text.count(label)} times, not once")
    primary = text.split("## Primary family", 1)[-1].split("\n## ", 1)[0] if "## Primary family" in text else ""
    for c in STUDY2_CONTRASTS:
        if f"| `{c.name}` |" not in primary:
            problems.append(f"the primary table lacks {c.name}")
    if summary["families"]:
        if " ".join(unadjusted_sentence(summary).split()) not in " ".join(text.split()):
            problems.append(f"the page does not say {unadjusted_sentence(summary)!r}")
        problems += conclusion_check(summary, text, [f["role"] for f in summary["families"].values()], "the page")
    times = stage_times(root)
    if summary["configs"] and not recorded(times):
        problems.append(f"study 2 has results but no recorded stage times ({TIMES})")
    if recorded(times):
        problems += stage_time_problems(text, times, BUDGET_MINUTES)
        limitations = text.split("## Limitations", 1)[-1] if "## Limitations" in text else ""
        if exceeds(times, BUDGET_MINUTES) and budget_sentence(times, BUDGET_MINUTES) not in limitations:
            problems.append("the run exceeded the budget and the limitations do not say so")
    for d in deviations(root):
        if f"Deviation: {d}" not in text:
            problems.append(f"the limitations omit the deviation {d!r}")
    return problems


def write(root: Path, out_md: Path, out_html: Path, site_html: Path, readme: Path | None = None) -> Page:
    """Write the page, its HTML and the site's copy; with ``readme``, rewrite its study-2 block."""
    page = build(root)
    files = {out_md: page.markdown, out_html: page.html, site_html: page.html}
    if readme is not None:
        files[readme] = with_block(readme, README_BLOCK, page.brief)
    atomic_write_files({path: text.encode("utf-8") for path, text in files.items()})  # all or none
    return page


def check(root: Path, written_md: Path, readme: Path | None = None) -> list[str]:
    """Problems with the written page (and the README's study-2 block): stale against a fresh build, or a
    broken promise."""
    if not written_md.is_file():
        return [f"{written_md}: missing; run study 2's report stage"]
    text, fresh = written_md.read_text(encoding="utf-8"), build(root)
    problems = [] if fresh.markdown == text else [f"{written_md} differs from a fresh build of its artifacts"]
    brief_text, where = fresh.brief, "the brief"
    if readme is not None:
        brief_text, where = blocks(readme.read_text(encoding="utf-8")).get(README_BLOCK, ""), f"{readme}'s brief"
        if brief_text != fresh.brief:
            problems.append(f"{readme}: its {README_BLOCK} block differs from a fresh build")
    # the brief's words against the summary's numbers: a fault of the brief's writer shows here, where the
    # comparison with a fresh build cannot see it
    problems += conclusion_check(read_record(root / SUMMARY, "analyze"), brief_text, list(BRIEF_ROLES), where)
    return problems + promises(root, text)
