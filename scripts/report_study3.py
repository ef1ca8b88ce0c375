"""Stage report of study 3: its page from its artifacts (``ccl/report/study3.py``), into the results and the site.

    python -m scripts.report_study3            # results/study3/report.md, report.html; web/study3/index.html
    python -m scripts.report_study3 --check    # the written page against a fresh build and the pre-registration's
                                               # promises; the brief's conclusions against results/study3/summary.json

The README's study-3 block (between its study3-brief markers) is rewritten from the same artifacts.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.errors import InputError
from ccl.report import study3

from .layout import ROOT
from .layout_study3 import STUDY3_PAGE_FILES, STUDY3_RESULTS, STUDY3_SITE


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root holding the artifacts")
    ap.add_argument("--out", type=Path, default=STUDY3_RESULTS, help="folder of report.md and report.html")
    ap.add_argument("--site", type=Path, default=STUDY3_SITE, help="folder of the site's copy (index.html)")
    ap.add_argument("--check", action="store_true", help="check the written page instead of writing it")
    ap.add_argument("--no-readme", action="store_true", help="leave README.md's study-3 block alone")
    args = ap.parse_args(argv)
    readme = args.root / "README.md"
    readme = None if args.no_readme or not readme.is_file() else readme
    files = study3.Files(**STUDY3_PAGE_FILES)
    if args.check:
        problems = study3.check(args.root, files, args.out / "report.md", readme)
        if problems:
            raise InputError("study 3's page breaks its promises:\n  " + "\n  ".join(problems))
        print(f"report (study 3) --check: {args.out / 'report.md'} matches its artifacts and keeps its promises")
        return 0
    study3.write(args.root, files, args.out / "report.md", args.out / "report.html", args.site / "index.html", readme)
    print(f"report (study 3): {args.out / 'report.md'}, report.html and {args.site / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("report_study3", main))
