"""Study 3's report page (docs/preregistration-3.md): results/study3/report.md and .html, and the site's copy.

Everything on the page is read from study 3's artifacts: the analysis (``results/study3/summary.json``), the
power analysis, the run's stage times (``results/study3/stage_times.json``, which ``scripts/timed_repro.sh``
writes after the run), the fresh pool's audit, the design, the adapters' summaries, the arms' training records,
the BFCL table and the deviations the run recorded (``study3/deviations.yaml``). ``check`` holds the written
page to the pre-registration's promises, and every conclusion sentence of the page and of the README's brief
(one per contrast: detected or not, its direction, estimate, interval and Holm p) to the summary's numbers.
The pieces both studies' pages have (tables, p-values, conclusion sentences, stage times, deviations) come from
``ccl.report.study_page``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ..analysis.declared import StudyDesign, read_design
from ..artifacts.inputs import read_record, read_rows
from ..artifacts.jsonio import atomic_write_files, sha256_file
from ..artifacts.shapes import GrpoSample, GrpoStepLog
from ..vocabulary import C, C_DAGGER, C_DPO, C_GRPO_SPARSE, RULER1, RULER2, RULER3, Contrast
from . import study_page
from .page import html_page
from .promises import conclusion_problems, stage_time_problems
from .render import NAMES, TEMPLATES, blocks, markdown_to_html, with_block
from .run_time import budget_sentence, exceeds, minutes, time_rows
from .study_page import Page, deviation_sentences, md_table, num, p_text, pct, recorded, unadjusted_sentence



@dataclass(frozen=True)
class Files:
    """What the page reads, relative to the root; the script names them (``scripts/layout_study3.py``)."""

    prereg: str
    design: str
    summary: str
    power: str
    times: str  # the run's stage times: scripts/timed_repro.sh writes them after the run
    pool_audit: str
    deviations: str
    bfcl: str  # study 3's BFCL summary (stage bfcl_score)
    dagger: str  # the folder of dagger_s<seed>/iter<k>/stats.json
    dpo_stats: str  # the DPO pairs' statistics (the pilot's stage dpo_pairs)

# docs/preregistration-3.md, "Power and time" (tests/test_study3.py reads both back from it)
BUDGET_MINUTES = 150
EXPECTED_MINUTES = (105, 110)
SAMPLES_SHOWN = 4  # GRPO's last-step samples the page prints per run (all of them are in samples.jsonl.gz)
README_BLOCK = "study3-brief"
# how the conclusions name the configurations (each sentence also names its contrast in code)
ARM_NAMES = {C: C, "C_plus": "C+", C_DAGGER: "DAgger", C_GRPO_SPARSE: "GRPO", C_DPO: "DPO"}
# summary family key -> (the role the sentences name, which design family); the README's brief concludes on
# the primary and the secondary family
ROLES = {"primary": ("primary", "primary"), "secondary": ("secondary", "secondary"),
         "sensitivity_ruler2": ("ruler 2 sensitivity", "primary")}
BRIEF_FAMILIES = ("primary", "secondary")


def _name(config: str) -> str:
    return ARM_NAMES.get(config, config)


def family_contrasts(design: StudyDesign, key: str) -> tuple[Contrast, ...]:
    return design.primary if ROLES[key][1] == "primary" else design.secondary


def conclusion(contrast: Contrast, row: dict | None, role: str) -> str:
    """One contrast's answer in one family (``study_page.conclusion``, with study 3's names)."""
    return study_page.conclusion(contrast, row, role, ARM_NAMES)


def conclusions(summary: dict, design: StudyDesign, key: str) -> list[str]:
    """The family's conclusions in the design's order; a primary contrast Holm rejects carries the seed-stability
    rule's verdict beside it."""
    rows = {r["contrast"]: r for r in summary["families"][key]["rows"]}
    out = []
    for c in family_contrasts(design, key):
        sentence = conclusion(c, rows.get(c.name), ROLES[key][0])
        stable = summary["seed_stable"].get(c.name) if key == "primary" else None
        if stable is not None:
            sentence += (" It is seed-stable: each seed-matched difference has its sign." if stable else
                         " It is not seed-stable: a seed-matched difference does not have its sign.")
        out.append(sentence)
    return out


def family_table(summary: dict, design: StudyDesign, key: str, power: dict | None) -> str:
    """A family's contrasts in the design's order, with each side's seeds; the MDE for the primary only."""
    mde = {r["contrast"]: r["mde"] for r in power["contrasts"]} if power else {}
    return study_page.family_table(summary["families"][key]["rows"], family_contrasts(design, key), mde,
                                   ci_label="95% CI", seeds=True)


def seed_table(summary: dict) -> str:
    stable = summary["seed_stable"]
    rows = [[f"`{m['contrast']}`", m["seed"], f"`{m['a_run']}` - `{m['b_run']}`", f"{m['diff']:+.1f}",
             f"{m['a_wins']} / {m['b_wins']}", p_text(m["p"]),
             {True: "yes", False: "no", None: "n/a (not rejected)"}[stable.get(m["contrast"])]]
            for m in summary["seed_matched"]]
    return md_table(["contrast", "seed", "runs", "a - b", "wins a / b", "McNemar exact p", "seed-stable"], rows)


def disagreement_table(summary: dict) -> str:
    rows = [[f"`{c}`", d["disagree"], d["tasks"], f"{100 * d['share']:.1f}"] for c, d in summary["seed_disagreement"].items()]
    return md_table(["configuration", "tasks its two seeds disagree on", "tasks", "share (%)"], rows)


def minutes_table(summary: dict) -> str:
    m = summary["minutes"]
    rows = []
    for config, runs in summary["configs"].items():
        ratio = m["ratio_to_comparator"].get(config)
        rows.append([f"`{config}`", ", ".join(f"`{r}` {m['runs'][r]['minutes']:.2f}" for r in runs),
                     f"{m['configs'][config]:.2f}", "" if ratio is None else f"{ratio:.2f}"])
    return md_table(["configuration", "minutes per run", "mean minutes", "ratio to C+"], rows)


def success_table(summary: dict) -> str:
    rows = [[f"`{r['config']}`", r["seeds"], r["split"], r["tasks"], *(pct(r[k]) for k in (RULER3, RULER2, RULER1))]
            for r in summary["success"]]
    return md_table(["configuration", "seeds", "split", "tasks", "ruler 3 (primary)", "ruler 2", "ruler 1"], rows)


def runs_table(summary: dict, root: Path, design: StudyDesign) -> str:
    """Per run: successes under each ruler and the adapter's SHA-256 (from its training summary)."""
    rows = []
    splits = summary["splits"]
    for r in summary["runs"]:
        sha = read_record(root / design.runs[r["run"]] / "summary.json", "train").get("adapter_sha256", "")
        rows.append([f"`{r['run']}`", f"{r[RULER3]}/{r['tasks']}", *(r["by_split"][s] for s in splits),
                     f"{r[RULER2]}/{r['tasks']}", f"{r[RULER1]}/{r['tasks']}", f"`{sha}`"])
    return md_table(["run", "ruler 3", *(f"ruler 3, {s}" for s in splits), "ruler 2", "ruler 1", "adapter SHA-256"],
                    rows)


def task_family_table(summary: dict) -> str:
    return study_page.task_family_table(summary, RULER3, "ruler-3 successes (seed mean)")


def curve_table(power: dict) -> str:
    return study_page.curve_table(power, [r["contrast"] for r in power["contrasts"]])


def oracle_sentence(check: dict) -> str:
    if not check.get("evaluated"):
        return "not evaluated."
    return "; ".join(f"{ruler.replace('ruler', 'ruler ')} passes it on {check['tasks'] - len(check[ruler])} of "
                     f"{check['tasks']} fresh tasks" + (f" (fails {', '.join(check[ruler][:5])})" if check[ruler] else "")
                     for ruler in (RULER3, RULER2, RULER1)) + "."


def dagger_table(root: Path, files: Files) -> str:
    keys = ["tasks", "beta", "states", "states_off_expert_path", "unrecoverable", "student_passes", "rows", "train_rows"]
    rows = []
    for f in sorted((root / files.dagger).glob("dagger_s*/iter*/stats.json")):
        s = read_record(f, "dagger_rollout")
        rows.append([f.parent.parent.name.removeprefix("dagger_"), s.get("iteration"), *(s.get(k) for k in keys)])
    return md_table(["seed", "iteration", *keys], rows) if rows else "No DAgger iteration has run."


def grpo_last_step(root: Path, design: StudyDesign) -> tuple[str, str]:
    """Each GRPO run's monitors at its last step and a few of that step's samples."""
    keys = ["step", "reward", "kl", "zero_spread_groups", "screened", "flagged", "updated"]
    monitors, samples = [], []
    for run, adapter in design.configs.get(C_GRPO_SPARSE, {}).items():
        log = root / adapter / "train_log.jsonl"
        last = read_rows(log, "grpo_train", GrpoStepLog, need_rows=True)[-1]
        monitors.append([f"`{run}`", *(num(last.get(k)) for k in keys)])
        rows = [r for r in read_rows(root / adapter / "samples.jsonl.gz", "grpo_train", GrpoSample)
                if r["step"] == last["step"]]
        for r in rows[:SAMPLES_SHOWN]:
            final = " ".join(str(r.get("final") or "").split())[:100].replace("|", "/")
            samples.append([f"`{run}`", r.get("family"), r.get("sparse"), ", ".join(r.get("flags") or []),
                            final or "(no final answer)"])
    if not monitors:
        return "No GRPO run has trained.", ""
    return (md_table(["run", *keys], monitors),
            md_table(["run", "task family", "ruler-3 success", "red-team flags", "final answer (first 100 characters)"],
                     samples))


def grpo_loads(summary: dict) -> str:
    """What GRPO's minutes hold beyond its optimizer steps: the sampler's weight reloads (the pilot's count)."""
    runs = {r: m for r, m in summary["minutes"]["runs"].items() if "sampler_loads" in m}
    if not runs:
        return ""
    each = ", ".join(f"`{r}` {m['sampler_loads']} loads, {m['sampler_load_minutes']:.2f} min" for r, m in runs.items())
    return ("GRPO's minutes are its sampling and update seconds, as the pilot counted them; sampling includes "
            "reloading the updated weights into the OpenVINO sampler after each update, which the training summary "
            f"bounds ({each}, the load at construction among them, which no step counts).")


def dpo_sentence(root: Path, files: Files) -> str:
    if not (root / files.dpo_stats).is_file():
        return "DPO's pairs: not built."
    s = read_record(root / files.dpo_stats, "dpo_pairs")
    return f"DPO's pairs (`{files.dpo_stats}`): " + ", ".join(f"{k} {num(v)}" for k, v in s.items()
                                                                      if isinstance(v, (int, float))) + "."


def bfcl_table(root: Path, files: Files) -> str:
    """BFCL accuracy per scope (percent, Wilson 95% interval) for study 3's configurations (exploratory). The
    first study's table (results/bfcl/summary.json) is not read: it sits downstream of the first study's
    trained adapters, which would make study 3's pipeline rerun the first study's training."""
    if not (root / files.bfcl).is_file():
        return "BFCL: not answered yet."
    ours = read_record(root / files.bfcl, "bfcl_score")
    scopes = list(next(iter(ours["configs"].values()))["cells"])
    rows = [[f"`{name}`", *(_wilson(c["cells"][s]) for s in scopes)] for name, c in ours["configs"].items()]
    return md_table(["configuration", *scopes], rows)


def _wilson(cell: dict) -> str:
    low, high = cell.get("low"), cell.get("high")
    interval = f" [{100 * low:.1f}, {100 * high:.1f}]" if low is not None and high is not None else ""
    return f"{100 * cell['rate']:.1f}{interval}"


def stage_times(root: Path, files: Files) -> dict:
    return study_page.stage_times(root / files.times)


def times_text(times: dict, files: Files) -> str:
    if not recorded(times):
        return ("Not recorded yet: `scripts/timed_repro.sh` writes the stage times after the run "
                f"(`{files.times}`). The budget is {BUDGET_MINUTES} minutes, install included.")
    return (f"Measured on {times['machine']} at commit `{times['commit']}`, from a fresh clone "
            f"(`bash scripts/timed_repro.sh LOG study3/dvc.yaml`; log `{times['log']}`, started {times['started_utc']}, "
            f"exit status {times['exit_status']}). Each stage from its start to its lock-file update in `dvc repro`'s "
            "log; the page was then rebuilt with these times (seconds, not counted).\n\n"
            + md_table(["step", "wall time"], time_rows(times))
            + f"\n\n{budget_sentence(times, BUDGET_MINUTES)} The pre-registration expected "
              f"{EXPECTED_MINUTES[0]}-{EXPECTED_MINUTES[1]} minutes.")


def deviations(root: Path, files: Files) -> list[str]:
    """The deviations the run recorded (``study3/deviations.yaml``: a list, in study 2's format)."""
    return deviation_sentences(root / files.deviations)


def run_sentence(times: dict) -> str:
    if not recorded(times):
        return ""
    verdict = "exceeding" if exceeds(times, BUDGET_MINUTES) else "within"
    return (f" It ran once on {times['machine']} in {minutes(times['total_s'])}, install included ({verdict} the "
            f"{BUDGET_MINUTES}-minute budget).")


def answer_sentence(summary: dict, power: dict) -> str:
    """The title question answered from the primary family: which learning arms were detected to beat more
    imitation (C+) at the same minutes, or to be worse, and the differences the design could miss."""
    rows = summary["families"]["primary"]["rows"]
    if not rows:
        return "The question is not answered: no primary contrast was computed."
    beat = [_name(r["a"]) for r in rows if r["significant"] and r["diff"] > 0]
    worse = [_name(r["a"]) for r in rows if r["significant"] and r["diff"] < 0]
    parts = []
    if beat:
        parts.append(f"{' and '.join(beat)} {'was' if len(beat) == 1 else 'were'} detected to beat more imitation (C+)")
    if worse:
        parts.append(f"{' and '.join(worse)} {'was' if len(worse) == 1 else 'were'} detected to be worse than more "
                     "imitation (C+)")
    if not parts:
        parts.append("no learning arm was detected to beat or to be worse than more imitation (C+)")
    mdes = sorted({100 * r["mde"] for r in power["contrasts"] if r["mde"] is not None})
    missed = ""
    if mdes and len(beat) + len(worse) < len(rows):
        missed = (f"; a true difference below {mdes[-1]:.1f} points (the pre-registered MDE at "
                  f"{100 * power['power']:.0f}% power after Holm) could go undetected, so \"not detected\" is not "
                  "\"no difference\"")
    return f"The answer on the primary outcome, at the same extra minutes after C: {', and '.join(parts)}{missed}."


def _bullets(sentences: list[str]) -> str:
    return "".join(f"- {s}\n" for s in sentences)


def brief(summary: dict, design: StudyDesign, times: dict, power: dict) -> str:
    pooled = {r["config"]: r for r in summary["success"] if r["split"] == "all"}
    tasks = next(iter(pooled.values()))["tasks"] if pooled else 0
    success = ", ".join(f"{_name(c)} {pct(r[RULER3])} ({r['seeds']} seed{'s' if r['seeds'] > 1 else ''})"
                        for c, r in pooled.items())
    return (f"Study 3 (`docs/preregistration-3.md`): after imitation, how should a fixed budget of minutes be spent?"
            f"{run_sentence(times)}\n"
            f"On its {tasks} fresh paired tasks, ruler-3 strict success (percent, 95% interval): {success}.\n"
            f"{answer_sentence(summary, power)}\n\n"
            f"Primary family ({summary['families']['primary']['label']}):\n\n"
            f"{_bullets(conclusions(summary, design, 'primary'))}\n"
            f"Secondary family ({summary['families']['secondary']['label']}):\n\n"
            f"{_bullets(conclusions(summary, design, 'secondary'))}\n"
            f"{unadjusted_sentence(summary)} `results/study3/report.md` has every table, each arm's minutes, the "
            "seeds' agreement, the run's stage times and its deviations.\n")


def facts(root: Path, files: Files, summary: dict, design: StudyDesign, times: dict, power: dict) -> dict:
    audit = read_record(root / files.pool_audit, "fresh_pool")
    monitors, samples = grpo_last_step(root, design)
    over = recorded(times) and exceeds(times, BUDGET_MINUTES)
    return {"prereg_sha256": sha256_file(root / files.prereg), "design_sha256": sha256_file(root / files.design),
            "profile": summary["profile"],
            "n_tasks": next((r["tasks"] for r in summary["success"] if r["split"] == "all"), 0),
            "tasks_by_split": ", ".join(f"{a['tasks']} {s}" for s, a in audit["splits"].items()),
            "power_pct": f"{100 * power['power']:.0f}", "planned_q": f"{100 * power['reverse_share']:.1f}",
            "ci_pct": f"{100 * (1 - summary['alpha']):.0f}", "unadjusted": unadjusted_sentence(summary),
            "labels": {k: f["label"] for k, f in summary["families"].items()},
            "conclusions": {k: conclusions(summary, design, k) for k in summary["families"]},
            "answer": answer_sentence(summary, power),
            "off_budget": summary["minutes"]["off_budget"], "tolerance_pct": f"{100 * summary['minutes']['tolerance']:.0f}",
            "seeds": ", ".join(f"{_name(c)} {len(runs)}" for c, runs in summary["configs"].items()),
            "not_amx": recorded(times) and "amx-bf16" not in times["machine"],
            "grpo_loads": grpo_loads(summary),
            "over_budget": budget_sentence(times, BUDGET_MINUTES) if over else "",
            "tables": {"primary": family_table(summary, design, "primary", power),
                       "secondary": family_table(summary, design, "secondary", None),
                       "sensitivity_ruler2": family_table(summary, design, "sensitivity_ruler2", None),
                       "curve": curve_table(power), "seeds": seed_table(summary),
                       "disagreement": disagreement_table(summary), "minutes": minutes_table(summary),
                       "success": success_table(summary), "runs": runs_table(summary, root, design),
                       "task_families": task_family_table(summary), "dagger": dagger_table(root, files),
                       "grpo_monitors": monitors, "grpo_samples": samples, "bfcl": bfcl_table(root, files)},
            "dpo": dpo_sentence(root, files), "oracle": oracle_sentence(summary["oracle"]),
            "times": times_text(times, files), "deviations": deviations(root, files)}


def build(root: Path, files: Files) -> Page:
    env = Environment(loader=FileSystemLoader(TEMPLATES), undefined=StrictUndefined, keep_trailing_newline=True,
                      autoescape=False)
    summary, power = read_record(root / files.summary, "analyze"), read_record(root / files.power, "power")
    design, times = read_design(root / files.design), stage_times(root, files)
    md = env.get_template("study3.md.j2").render(f=facts(root, files, summary, design, times, power), V=NAMES)
    return Page(md, html_page("Study 3: how to spend the minutes after imitation", markdown_to_html(md), page="study3"),
                brief(summary, design, times, power))


FAMILY_TAG = re.compile(r"\(`[\w-]+`, (?P<family>[\w ]+)\):")


def conclusion_check(summary: dict, design: StudyDesign, text: str, keys: tuple[str, ...], where: str) -> list[str]:
    """``text``'s conclusions on the families ``keys`` against the summary. Each family is read on its own lines
    (every conclusion sentence is one line, tagged with its family's name), because the families have different
    contrasts; a sentence tagged with a family the page does not have is a problem too."""
    roles = {ROLES[key][0]: key for key in keys}
    problems = [f"{where}: a conclusion is tagged with the family {m['family']!r}, which is none of {sorted(roles)}"
                for m in FAMILY_TAG.finditer(text) if m["family"] not in {r for r, _ in ROLES.values()}]
    for role, key in roles.items():
        lines = "\n".join(line for line in text.splitlines() if f", {role})" in line)
        names = [c.name for c in family_contrasts(design, key)]
        problems += conclusion_problems(lines, {role: summary["families"][key]}, names, summary["alpha"], ARM_NAMES,
                                        where)
    return problems


def promises(root: Path, files: Files, text: str) -> list[str]:
    """What the pre-registration promised the page shows, checked on ``text``; one problem per broken promise."""
    problems = []
    for path in (files.prereg, files.design):
        if sha256_file(root / path) not in text:
            problems.append(f"the page does not quote {path}'s SHA-256")
    summary, design = read_record(root / files.summary, "analyze"), read_design(root / files.design)
    primary = text.split("## Primary family", 1)[-1].split("\n## ", 1)[0] if "## Primary family" in text else ""
    for c in design.primary:
        if f"| `{c.name}` |" not in primary:
            problems.append(f"the primary table lacks {c.name}")
    if " ".join(unadjusted_sentence(summary).split()) not in " ".join(text.split()):
        problems.append(f"the page does not say {unadjusted_sentence(summary)!r}")
    problems += conclusion_check(summary, design, text, tuple(summary["families"]), "the page")
    times = stage_times(root, files)
    if not recorded(times):
        problems.append(f"study 3 has results but no recorded stage times ({files.times})")
    else:
        problems += stage_time_problems(text, times, BUDGET_MINUTES)
        limitations = text.split("## Limitations", 1)[-1] if "## Limitations" in text else ""
        if exceeds(times, BUDGET_MINUTES) and budget_sentence(times, BUDGET_MINUTES) not in limitations:
            problems.append("the run exceeded the budget and the limitations do not say so")
    for d in deviations(root, files):
        if f"Deviation: {d}" not in text:
            problems.append(f"the limitations omit the deviation {d!r}")
    return problems


def write(root: Path, files: Files, out_md: Path, out_html: Path, site_html: Path, readme: Path | None = None) -> Page:
    """Write the page, its HTML and the site's copy; with ``readme``, rewrite its study-3 block (all or none)."""
    page = build(root, files)
    files = {out_md: page.markdown, out_html: page.html, site_html: page.html}
    if readme is not None:
        files[readme] = with_block(readme, README_BLOCK, page.brief)
    atomic_write_files({path: text.encode("utf-8") for path, text in files.items()})
    return page


def check(root: Path, files: Files, written_md: Path, readme: Path | None = None) -> list[str]:
    """Problems with the written page and the README's study-3 block: stale against a fresh build, or a broken promise."""
    if not written_md.is_file():
        return [f"{written_md}: missing; run study 3's report stage"]
    text, fresh = written_md.read_text(encoding="utf-8"), build(root, files)
    problems = [] if fresh.markdown == text else [f"{written_md} differs from a fresh build of its artifacts"]
    brief_text, where = fresh.brief, "the brief"
    if readme is not None:
        brief_text, where = blocks(readme.read_text(encoding="utf-8")).get(README_BLOCK, ""), f"{readme}'s brief"
        if brief_text != fresh.brief:
            problems.append(f"{readme}: its {README_BLOCK} block differs from a fresh build")
    summary, design = read_record(root / files.summary, "analyze"), read_design(root / files.design)
    return problems + conclusion_check(summary, design, brief_text, BRIEF_FAMILIES, where) + promises(root, files, text)
