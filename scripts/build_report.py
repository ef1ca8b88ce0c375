"""Stage build_report: the technical report, regenerated from the pipeline's artifacts.

    python -m scripts.build_report            # writes results/report.md and results/report.html
    python -m scripts.build_report --check    # exit 1 if results/report.md is stale (names the blocks), or
                                              # breaks a promise of the pre-registration (names each)

It also rewrites README.md's results-in-brief (between its BEGIN/END marker lines) from the
same artifacts, and --check compares that block too (--no-readme: neither). --check then reads the
pages back for what docs/preregistration.md promised they would say: the run's time stage by stage
with the sentence on its budget, the attempts before it in the limitations, and one label per family of
tests in the report, the README's brief and the site's pages (--site, default <root>/web/public, when
present); ccl/report/promises.py.

Reads results/summary.json, results/replay_summary.json, data/v1/manifest.json, data/v1/leakage_audit.json,
data/v1/teacher/summary.json, data/v1/variants/variants.json and runs/*/summary.json. A
missing artifact is named in the report with the stage that produces it. The build fails
if the template asks for an unknown table, quotes a number no artifact holds, or a table
has a cell without a value or no source.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import build_report

from .layout import ROOT


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root holding the artifacts")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: <root>/results)")
    ap.add_argument("--check", action="store_true", help="compare the written report with a fresh build")
    ap.add_argument("--no-readme", action="store_true", help="leave README.md's results-in-brief alone")
    ap.add_argument("--site", type=Path, default=None,
                    help="--check: the site whose pages to read back (default: <root>/web/public, when present)")
    args = ap.parse_args(argv)
    out = args.out or args.root / "results"
    readme = args.root / "README.md"
    readme = None if args.no_readme or not readme.is_file() else readme  # a bare artifact root has none
    if args.check:
        build_report.check(args.root, out / "report.md", readme, args.site or args.root / "web" / "public")
        print(f"build_report --check: {out / 'report.md'}{' and README.md' if readme else ''} match their artifacts "
              "and keep the pre-registration's promises (run time, attempts, one label per family of tests)")
        return 0
    build_report.run(args.root, out, readme)
    print(f"build_report: wrote {out / 'report.md'}, report.html{' and README.md (results in brief)' if readme else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("build_report", main))
