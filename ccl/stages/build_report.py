"""Stage build_report: the report (Markdown and HTML) from the artifacts of a repository-shaped root."""
from __future__ import annotations

from pathlib import Path

from jinja2 import UndefinedError

from ..artifacts.jsonio import atomic_write_files
from ..errors import InputError, StageError
from ..report.artifacts import RUN_TIMES, Artifacts, Missing, load_artifacts
from ..report.facts import all_facts
from ..report.families import STUDY1_FAMILIES
from ..report.learning import every_table
from ..report.page import html_page
from ..report.promises import (
    attempt_problems,
    family_label_problems,
    page_text,
    stage_time_problems,
)
from ..report.render import markdown_to_html, render_markdown, stale_blocks, with_block
from ..report.run_time import PREREGISTERED_BUDGET_MIN, attempts_of


class StaleReport(StageError):
    """``--check``: the written report does not match a fresh build from its artifacts."""

    exit_code = 1


class BrokenPromise(StageError):
    """``--check``: the report does not say what the pre-registration promised it would (``promises``)."""

    exit_code = 1


# The README's block of results in brief (between its BEGIN/END marker lines), rewritten by each build.
BRIEF = "results-in-brief"


def build(root: Path) -> tuple[str, str]:
    """The report's Markdown and the README's results-in-brief, every number read from an artifact
    under ``root`` (the artifacts are read, tabled and summarised once for both)."""
    art = load_artifacts(root)
    try:
        tables, facts = every_table(art), all_facts(art)
        return (render_markdown("report.md.j2", tables, facts), render_markdown("brief.md.j2", tables, facts))
    except (KeyError, UndefinedError) as e:  # a fact or table the template needs is absent
        raise InputError(f"report template: {e}") from None


def run(root: Path, out: Path, readme: Path | None = None) -> list[Path]:
    """Write ``out/report.md`` and ``out/report.html``; with ``readme``, rewrite its results-in-brief."""
    md, brief = build(root)
    files = {out / "report.md": md, out / "report.html": html_page("Report", markdown_to_html(md))}
    if readme is not None:
        files[readme] = with_block(readme, BRIEF, brief)
    atomic_write_files({path: text.encode("utf-8") for path, text in files.items()})  # all or none
    return list(files)


def promise_problems(art: Artifacts, report: str, brief: str | None = None, site: Path | None = None) -> list[str]:
    """What the pre-registration promised the pages would say, read back from them: the run's time stage by
    stage against its budget, the attempts before it in the limitations, one label per family of tests
    (in the report, the README's brief and every page of the ``site`` folder, when given and present)."""
    record = art.get(RUN_TIMES)
    problems = [] if isinstance(record, Missing) else stage_time_problems(report, record, PREREGISTERED_BUDGET_MIN)
    problems += attempt_problems(report, attempts_of(art))
    problems += family_label_problems(report, STUDY1_FAMILIES, "report")
    if brief is not None:
        problems += family_label_problems(brief, STUDY1_FAMILIES, "README's results-in-brief", require=False)
    for page in sorted(site.glob("*.html")) if site is not None and site.is_dir() else []:
        problems += family_label_problems(page_text(page.read_text(encoding="utf-8")), STUDY1_FAMILIES,
                                          f"site page {page.name}", require=page.name == "index.html")
    return problems


def check(root: Path, written: Path, readme: Path | None = None, site: Path | None = None) -> None:
    """Refuse (``StaleReport``) a written report, or README brief, that differs from a fresh build, and
    (``BrokenPromise``) one that does not keep the pre-registration's promises (``promise_problems``)."""
    if not written.is_file():
        raise StaleReport(f"--check: {written} missing; run `dvc repro build_report`")
    (md, brief), text = build(root), written.read_text(encoding="utf-8")
    if text != md:
        stale = stale_blocks(text, md)
        raise StaleReport(f"--check: {written} is stale; blocks that differ: {', '.join(stale) or 'none (prose)'}")
    if readme is not None and readme.read_text(encoding="utf-8") != with_block(readme, BRIEF, brief):
        raise StaleReport(f"--check: {readme}'s results-in-brief differs from its artifacts; run `dvc repro "
                          "build_report`")
    problems = promise_problems(load_artifacts(root), text, brief if readme is not None else None, site)
    if problems:
        raise BrokenPromise(f"--check: {len(problems)} promise(s) of the pre-registration not kept:\n- "
                            + "\n- ".join(problems))
