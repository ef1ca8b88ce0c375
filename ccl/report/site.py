"""The static site: report, methods and reproducibility, figures, trace explorer, replay failure map.

Pages are Jinja templates filled from artifacts; everything lands in one output folder
that works opened from disk or behind any static server, with no network access.
"""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

from ..artifacts.jsonio import atomic_folder, atomic_write_bytes
from ..config import read_yaml
from ..errors import InputError
from .artifacts import EVAL_RUNS, REPLAY_GOLDEN, REPLAY_RUNS, REPLAY_SUMMARY, REPORT, TASKS, Artifacts, Missing
from .figures import FIGURES, write_figures
from .page import NAV, environment, html_page
from .render import BLOCK, block, blocks, inline_markdown_to_html, markdown_table, markdown_to_html
from .replay_data import export_replay
from .tables import Table, check_table
from .traces import export_traces, js_assign

STATIC = Path(__file__).parent / "static"  # a package resource, not a repository path
TRACE_DATA = "data/traces"  # the trace explorer's data, inside the site folder
REPLAY_DATA = "data/replay"  # the replay page's data


def stamp(root: Path) -> dict:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown (not a git checkout)"
    return {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": commit}


def pipeline_commands(dvc_yaml: Path, params_file: Path) -> list[tuple[str, str]]:
    """(stage, command) for every stage of dvc.yaml, with foreach stages expanded; a foreach
    given as ``${key}`` takes its items from that top-level key of ``params_file``."""
    stages = read_yaml(dvc_yaml, InputError)["stages"]
    params = (read_yaml(params_file) or {}) if params_file.is_file() else {}
    out = []
    for name, st in stages.items():
        if "foreach" not in st:
            out.append((name, st["cmd"]))
            continue
        items = st["foreach"]
        if isinstance(items, str):
            items = params[items.removeprefix("${").removesuffix("}")]
        pairs = items.items() if isinstance(items, dict) else ((i, i) for i in items)
        for key, item in pairs:
            cmd = st["do"]["cmd"].replace("${key}", str(key)).replace("${item}", str(item))
            if isinstance(item, dict):
                for k, v in item.items():
                    cmd = cmd.replace("${item.%s}" % k, str(v))
            out.append((f"{name}@{key}", cmd))
    return out


def methods_markdown(tables: dict[str, Table], commands: list[tuple[str, str]], missing: dict[str, str]) -> str:
    parts = ["# Methods & reproducibility", "",
             "How every number was produced: the exact data files with their SHA-256, the leakage audit, "
             "the teacher-generation record, the training runs with their adapter hashes, and the commands "
             "of the pipeline. Everything here is exported from the repository's artifacts.", ""]
    for name in ("datasets", "leakage", "teacher", "training"):
        check_table(tables[name])
        parts += [f'<div id="{name}"></div>', "", markdown_table(tables[name]), ""]
    parts += ["## Pipeline", "", "`dvc repro` runs these stages in dependency order; each can also be run alone.", "",
              "| stage | command |", "| --- | --- |"]
    parts += [f"| {s} | `{c}` |" for s, c in commands]
    parts += ["", "## Verifying hashes", "",
              "`python -m scripts.verify` recomputes the SHA-256 of every dataset, teacher file, variant and "
              "adapter and compares them with the manifests; it exits non-zero naming each file that differs.", ""]
    if missing:
        parts += ["## Missing artifacts", ""] + [f"- {m}" for m in missing.values()]
    return "\n".join(parts) + "\n"


def figures_html(status: dict[str, str | None]) -> str:
    parts = ["<h1>Figures</h1>"]
    env = environment()
    for name, (caption, _) in FIGURES.items():
        reason = status[name]
        if reason is None:
            parts.append(env.from_string('<figure><img src="figures/{{ n }}" alt="{{ c }}"><figcaption>{{ c }}'
                                         '</figcaption></figure>').render(n=name, c=caption))
        else:
            parts.append(env.from_string('<div class="missing"><strong>{{ c }}</strong> {{ r | safe }}</div>')
                         .render(c=caption, r=inline_markdown_to_html(reason)))  # escaped by markdown-it
    return "\n".join(parts)


def report_html(report: Path, tables: dict[str, Table]) -> str:
    """The report ``build_report`` wrote, with result cells linked to their episodes.

    The page is that file, not a second rendering, so ``build_report.py --check`` guards the
    site too: a written report whose tables no longer match the artifacts is refused here,
    naming the stale tables."""
    if not report.is_file():
        raise InputError(f"{report}: missing; run the build_report stage first")
    written = report.read_text(encoding="utf-8")
    stale = sorted(n for n, body in blocks(written).items() if n not in tables or block(n, tables) !=
                   f"<!-- BEGIN:{n} -->\n{body}<!-- END:{n} -->")
    if stale:
        raise InputError(f"{report}: tables {', '.join(stale)} no longer match their artifacts; "
                         f"run the build_report stage first")
    linked = BLOCK.sub(lambda m: block(m["name"], tables, traces="traces.html"), written)
    return markdown_to_html(linked)


def write_site(root: Path, art: Artifacts, tables: dict[str, Table], out: Path, dvc_yaml: Path,
               params_file: Path) -> dict:
    """Write every page, figure and trace file of the site ``out``; return what was written. The site is
    built whole in a temporary folder and swapped in (a configuration no longer evaluated leaves nothing
    behind; a bad input leaves the previous site as it was). ``dvc_yaml`` and ``params_file`` define the
    pipeline whose commands the methods page lists."""
    with atomic_folder(out) as tmp:
        return _write_pages(root, art, tables, tmp, dvc_yaml, params_file)


def _write_pages(root: Path, art: Artifacts, tables: dict[str, Table], out: Path, dvc_yaml: Path,
                 params_file: Path) -> dict:
    st = stamp(root)
    prompts: dict[str, str] = {}  # system prompts by hash, shared by the trace explorer and the replay page
    index = export_traces(root / EVAL_RUNS, root / TASKS, out / TRACE_DATA, prompts)
    replay = export_replay(art.get(REPLAY_SUMMARY), root / REPLAY_GOLDEN, root / REPLAY_RUNS, out / REPLAY_DATA,
                           prompts)
    atomic_write_bytes(out / TRACE_DATA / "prompts.js", js_assign("prompts", None, prompts))
    fig_status = write_figures(art, out / "figures")
    missing = {p: v.message() for p, v in art.files.items() if isinstance(v, Missing)}
    pages = {
        "index.html": ("Report", report_html(root / REPORT, tables), []),
        "methods.html": ("Methods & reproducibility",
                         markdown_to_html(methods_markdown(tables, pipeline_commands(dvc_yaml, params_file), missing)), []),
        "figures.html": ("Figures", figures_html(fig_status), []),
        "traces.html": ("Trace explorer", environment().get_template("traces.html.j2").render(),
                        ["data/traces/index.js", "data/traces/tasks.js", "data/traces/prompts.js", "common.js",
                         "traces.js"]),
        "replay.html": ("Replay failure map", environment().get_template("replay.html.j2").render(),
                        ["data/replay/index.js", "data/replay/prefixes.js", "data/traces/prompts.js", "common.js",
                         "replay.js"]),
    }
    for name, (title, body, scripts) in pages.items():
        html = html_page(title, body, page=name.split(".")[0], stamp=st, nav=NAV, scripts=scripts)
        atomic_write_bytes(out / name, html.encode("utf-8"))
    for script in ("common.js", "traces.js", "replay.js"):
        atomic_write_bytes(out / script, (STATIC / script).read_bytes())
    for p in out.rglob("*"):  # atomic writes create 0600 files; a site must be readable by any web server
        p.chmod(0o755 if p.is_dir() else 0o644)
    return {"pages": sorted(pages), "figures": fig_status, "traces": index, "replay": replay, "stamp": st}
