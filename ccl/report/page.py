"""HTML pages from the Jinja templates in ``templates/`` (the report page and the site)."""
from __future__ import annotations

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from .render import TEMPLATES

NAV = [("index.html", "Report"), ("methods.html", "Methods & reproducibility"), ("figures.html", "Figures"),
       ("traces.html", "Trace explorer"), ("replay.html", "Replay")]


def environment() -> Environment:
    return Environment(loader=FileSystemLoader(TEMPLATES), undefined=StrictUndefined,
                       autoescape=select_autoescape(["html", "j2"]), keep_trailing_newline=True)


def html_page(title: str, body_html: str, page: str = "report", stamp: dict | None = None,
              nav: list[tuple[str, str]] | None = None, scripts: list[str] | None = None) -> str:
    """A standalone page; ``body_html`` is trusted (rendered by us from artifacts)."""
    return environment().get_template("page.html.j2").render(
        title=title, body=body_html, page=page, stamp=stamp, nav=nav or [], scripts=scripts or [])
