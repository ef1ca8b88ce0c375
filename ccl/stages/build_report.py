"""Stage build_report: the report (Markdown and HTML) from the artifacts of a repository-shaped root."""
from __future__ import annotations

from pathlib import Path

from jinja2 import UndefinedError

from ..artifacts.jsonio import atomic_write_bytes
from ..errors import InputError, StageError
from ..report.artifacts import load_artifacts
from ..report.facts import all_facts
from ..report.learning import every_table
from ..report.page import html_page
from ..report.render import markdown_to_html, render_markdown, stale_blocks


class StaleReport(StageError):
    """``--check``: the written report does not match a fresh build from its artifacts."""

    exit_code = 1


# The README's results-in-brief sits between these lines, rewritten from the artifacts by each build.
BRIEF_BEGIN, BRIEF_END = "<!-- BEGIN:results-in-brief -->\n", "<!-- END:results-in-brief -->"


def build(root: Path) -> tuple[str, str]:
    """The report's Markdown and the README's results-in-brief, every number read from an artifact
    under ``root`` (the artifacts are read, tabled and summarised once for both)."""
    art = load_artifacts(root)
    try:
        tables, facts = every_table(art), all_facts(art)
        return (render_markdown("report.md.j2", tables, facts), render_markdown("brief.md.j2", tables, facts))
    except (KeyError, UndefinedError) as e:  # a fact or table the template needs is absent
        raise InputError(f"report template: {e}") from None


def with_brief(readme: Path, text: str) -> str:
    """``readme``'s text with the block between the brief's markers replaced by ``text``."""
    body = readme.read_text(encoding="utf-8")
    start, end = body.find(BRIEF_BEGIN), body.find(BRIEF_END)
    if start < 0 or end < start:
        raise InputError(f"{readme}: no results-in-brief block ({BRIEF_BEGIN.strip()} ... {BRIEF_END} lines)")
    return body[:start + len(BRIEF_BEGIN)] + text + body[end:]


def run(root: Path, out: Path, readme: Path | None = None) -> list[Path]:
    """Write ``out/report.md`` and ``out/report.html``; with ``readme``, rewrite its results-in-brief."""
    md, brief = build(root)
    atomic_write_bytes(out / "report.md", md.encode("utf-8"))
    atomic_write_bytes(out / "report.html", html_page("Report", markdown_to_html(md)).encode("utf-8"))
    written = [out / "report.md", out / "report.html"]
    if readme is not None:
        atomic_write_bytes(readme, with_brief(readme, brief).encode("utf-8"))
        written.append(readme)
    return written


def check(root: Path, written: Path, readme: Path | None = None) -> None:
    """Refuse (``StaleReport``) a written report, or README brief, that differs from a fresh build."""
    if not written.is_file():
        raise StaleReport(f"--check: {written} missing; run `dvc repro build_report`")
    (md, brief), text = build(root), written.read_text(encoding="utf-8")
    if text != md:
        stale = stale_blocks(text, md)
        raise StaleReport(f"--check: {written} is stale; blocks that differ: {', '.join(stale) or 'none (prose)'}")
    if readme is not None and readme.read_text(encoding="utf-8") != with_brief(readme, brief):
        raise StaleReport(f"--check: {readme}'s results-in-brief differs from its artifacts; run `dvc repro "
                          "build_report`")
