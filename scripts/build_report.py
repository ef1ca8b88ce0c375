"""Stage build_report: the technical report, regenerated from the pipeline's artifacts.

    python scripts/build_report.py            # writes results/report.md and results/report.html
    python scripts/build_report.py --check    # exit 1 if results/report.md is stale (names the blocks)

Reads results/summary.json, data/v1/manifest.json, data/v1/leakage_audit.json,
data/v1/teacher/summary.json, data/v1/variants/variants.json and runs/*/summary.json. A
missing artifact is named in the report with the stage that produces it. The build fails
if the template asks for an unknown table, quotes a number no artifact holds, or a table
has a cell without a value or no source.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jinja2 import UndefinedError  # noqa: E402

from ccl.jsonio import atomic_write_bytes  # noqa: E402
from ccl.report.artifacts import load_artifacts  # noqa: E402
from ccl.report.facts import all_facts  # noqa: E402
from ccl.report.page import html_page  # noqa: E402
from ccl.report.render import markdown_to_html, render_markdown, stale_blocks  # noqa: E402
from ccl.report.tables import TableError, all_tables  # noqa: E402
from ccl.boundary import run_stage  # noqa: E402


def build(root: Path) -> str:
    art = load_artifacts(root)
    return render_markdown("report.md.j2", all_tables(art), all_facts(art))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root holding the artifacts")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: <root>/results)")
    ap.add_argument("--check", action="store_true", help="compare the written report with a fresh build")
    args = ap.parse_args(argv)
    out = args.out or args.root / "results"
    try:
        md = build(args.root)
    except (TableError, KeyError, UndefinedError) as e:
        print(f"build_report: {e}", file=sys.stderr)
        return 2
    if args.check:
        written = out / "report.md"
        if not written.exists():
            print(f"build_report --check: {written} missing; run `dvc repro build_report`", file=sys.stderr)
            return 1
        stale = stale_blocks(written.read_text(encoding="utf-8"), md)
        if stale or written.read_text(encoding="utf-8") != md:
            print(f"build_report --check: {written} is stale; blocks that differ: {', '.join(stale) or 'none (prose)'}",
                  file=sys.stderr)
            return 1
        print(f"build_report --check: {written} matches its artifacts")
        return 0
    atomic_write_bytes(out / "report.md", md.encode("utf-8"))
    atomic_write_bytes(out / "report.html", html_page("Report", markdown_to_html(md)).encode("utf-8"))
    print(f"build_report: wrote {out / 'report.md'} and report.html")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("build_report", main))
