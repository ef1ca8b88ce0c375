"""Stage build_report: the report (Markdown and HTML) from the artifacts of a repository-shaped root."""
from __future__ import annotations

from pathlib import Path

from jinja2 import UndefinedError

from ..errors import InputError, StageError
from ..jsonio import atomic_write_bytes
from ..report.artifacts import load_artifacts
from ..report.facts import all_facts
from ..report.page import html_page
from ..report.render import markdown_to_html, render_markdown, stale_blocks
from ..report.tables import all_tables


class StaleReport(StageError):
    """``--check``: the written report does not match a fresh build from its artifacts."""

    exit_code = 1


def build(root: Path) -> str:
    """The report's Markdown, every number read from an artifact under ``root``."""
    art = load_artifacts(root)
    try:
        return render_markdown("report.md.j2", all_tables(art), all_facts(art))
    except (KeyError, UndefinedError) as e:  # a fact or table the template needs is absent
        raise InputError(f"report template: {e}") from None


def run(root: Path, out: Path) -> list[Path]:
    """Write ``out/report.md`` and ``out/report.html``."""
    md = build(root)
    atomic_write_bytes(out / "report.md", md.encode("utf-8"))
    atomic_write_bytes(out / "report.html", html_page("Report", markdown_to_html(md)).encode("utf-8"))
    return [out / "report.md", out / "report.html"]


def check(root: Path, written: Path) -> None:
    """Refuse (``StaleReport``) a written report that differs from a fresh build."""
    if not written.is_file():
        raise StaleReport(f"--check: {written} missing; run `dvc repro build_report`")
    md, text = build(root), written.read_text(encoding="utf-8")
    if text != md:
        stale = stale_blocks(text, md)
        raise StaleReport(f"--check: {written} is stale; blocks that differ: {', '.join(stale) or 'none (prose)'}")
