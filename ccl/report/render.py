"""Render the report: prose template + generated marker blocks -> Markdown -> HTML.

Each table sits between ``<!-- BEGIN:name -->`` and ``<!-- END:name -->``. ``stale_blocks``
compares the blocks of a written report with freshly generated ones, so a report whose
numbers no longer match its artifacts is caught by name.
"""
from __future__ import annotations

import re
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from .. import vocabulary as voc
from ..errors import InputError
from .families import LABELS
from .tables import Table, check_table

TEMPLATES = Path(__file__).parent / "templates"
BLOCK = re.compile(r"<!-- BEGIN:(?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- END:(?P=name) -->", re.S)


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def markdown_table(t: Table, traces: str | None = None) -> str:
    """A table as Markdown: title, the table (or the missing-artifact sentence), its note and sources.
    With ``traces`` (the explorer page's URL), cells that have a link open their episodes there
    (or, for a table with its own ``page``, that page: the replay tables open the decision explorer)."""
    out = [f"**{t.title}**", ""]
    if t.missing:
        out += [t.missing, ""]
    elif not t.rows:
        out += ["No rows: " + (t.note or "the artifact holds none."), ""]
    else:
        out.append("| " + " | ".join(_escape(c) for c in t.columns) + " |")
        out.append("|" + "|".join(" --- " for _ in t.columns) + "|")
        for i, row in enumerate(t.rows):
            cells = [f"[{_escape(c)}]({t.page or traces}#{t.links[(i, j)]})" if traces and (i, j) in t.links
                     else _escape(c) for j, c in enumerate(row)]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
        if t.note:
            out += [t.note, ""]
    out.append("Source: " + ", ".join(f"`{s}`" for s in t.sources))
    return "\n".join(out) + "\n"


def block(name: str, tables: dict[str, Table], traces: str | None = None) -> str:
    if name not in tables:
        raise KeyError(f"report template asks for table {name!r}; known: {', '.join(sorted(tables))}")
    t = tables[name]
    check_table(t)
    return f"<!-- BEGIN:{name} -->\n{markdown_table(t, traces)}<!-- END:{name} -->"


def render_markdown(template: str, tables: dict[str, Table], facts: dict, traces: str | None = None) -> str:
    """The report; with ``traces``, table cells link to their episodes in the trace explorer."""
    env = Environment(loader=FileSystemLoader(TEMPLATES), undefined=StrictUndefined, keep_trailing_newline=True,
                      autoescape=False)
    return env.get_template(template).render(table=lambda n: block(n, tables, traces), facts=facts, V=NAMES,
                                             F=LABELS)


# The study's names as the report's prose uses them (from ccl.vocabulary, never spelled in a template);
# ``F``: each family of tests' one label (ccl.report.families), never spelled in a template either
NAMES = {"base": voc.STUDENT_BASE, "fewshot": voc.STUDENT_FEWSHOT, "teacher": voc.TEACHER, "oracle": voc.ORACLE,
         "teacher_data": voc.B, "oracle_data": voc.C, "mixed": voc.DMIX, "sequential": voc.DSEQ}


MARKER = re.compile(r"^<!-- (?:BEGIN|END):[\w-]+ -->\n?", re.M)


def _markdown():
    """CommonMark with tables; raw HTML escaped, never passed through."""
    from markdown_it import MarkdownIt
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def markdown_to_html(md: str) -> str:
    """HTML of the report's markdown. Raw HTML is escaped, not passed through (prose like
    ``results/runs/<name>/...`` must show as written); the block markers, which only the markdown
    file needs for regeneration, are dropped first."""
    return _markdown().render(MARKER.sub("", md))


def inline_markdown_to_html(text: str) -> str:
    """One line of prose (a missing figure's reason, say) as HTML: `code` spans rendered, raw HTML escaped."""
    return _markdown().renderInline(text)


def with_block(path: Path, name: str, body: str) -> str:
    """The text of ``path`` (a README) with the body of its block ``name`` replaced by ``body``; a file
    without the block's two marker lines is refused, naming both."""
    text = path.read_text(encoding="utf-8")
    begin, end = f"<!-- BEGIN:{name} -->\n", f"<!-- END:{name} -->"
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise InputError(f"{path}: no {name} block ({begin.strip()} ... {end} lines)")
    return text[:start + len(begin)] + body + text[stop:]


def blocks(text: str) -> dict[str, str]:
    return {m["name"]: m["body"] for m in BLOCK.finditer(text)}


def stale_blocks(written: str, fresh: str) -> list[str]:
    """Names of marker blocks that differ between a written report and a fresh rendering."""
    old, new = blocks(written), blocks(fresh)
    return sorted(n for n in old.keys() | new.keys() if old.get(n) != new.get(n))
