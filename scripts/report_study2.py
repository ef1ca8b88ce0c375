"""Stage report of study 2: its page from its artifacts (``ccl/report/study2.py``), into the results and the site.

    python -m scripts.report_study2            # results/study2/report.md, report.html; web/study2/index.html
    python -m scripts.report_study2 --check    # the written page against a fresh build and the pre-registration's promises;
                                               # the brief's conclusion sentences against results/study2/summary.json

The site's copy lives in web/study2/ (the first study's site, web/public, is stage export_web's output). The
README's study-2 block (between its study2-brief markers) is rewritten from the same artifacts: the run, the
answer to the title question, one conclusion per pre-registered question and per contrast of secondary B.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.errors import InputError
from ccl.report import study2

from .layout import ROOT, STUDY2_RESULTS, STUDY2_SITE


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root holding the artifacts")
    ap.add_argument("--out", type=Path, default=STUDY2_RESULTS, help="folder of report.md and report.html")
    ap.add_argument("--site", type=Path, default=STUDY2_SITE, help="folder of the site's copy (index.html)")
    ap.add_argument("--check", action="store_true", help="check the written page instead of writing it")
    ap.add_argument("--no-readme", action="store_true", help="leave README.md's study-2 block alone")
    args = ap.parse_args(argv)
    readme = args.root / "README.md"
    readme = None if args.no_readme or not readme.is_file() else readme  # a bare artifact root has none
    if args.check:
        problems = study2.check(args.root, args.out / "report.md", readme)
        if problems:
            raise InputError("study 2's page breaks its promises:\n  " + "\n  ".join(problems))
        print(f"report (study 2) --check: {args.out / 'report.md'} matches its artifacts and keeps its promises")
        return 0
    study2.write(args.root, args.out / "report.md", args.out / "report.html", args.site / "index.html", readme)
    print(f"report (study 2): {args.out / 'report.md'}, report.html and {args.site / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("report_study2", main))
