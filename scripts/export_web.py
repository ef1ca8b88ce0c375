"""Stage export_web: the static report site, written to web/public/.

    python scripts/export_web.py                 # then open web/public/index.html
    python -m http.server -d web/public 8000      # or serve it (scripts/serve.py adds live mode)

Pages: the report (the same template and artifacts as results/report.md, with result cells
linking to their episodes), methods and reproducibility (datasets with
SHA-256, leakage audit, teacher record, training runs and adapter hashes, pipeline
commands), figures (matplotlib) and a trace explorer over every evaluated episode. The
site needs no network access; pages are stamped with the export time and git commit.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ccl.report.artifacts import load_artifacts  # noqa: E402
from ccl.report.site import write_site  # noqa: E402
from ccl.report.tables import TableError, all_tables  # noqa: E402
from ccl.boundary import run_stage  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root holding the artifacts")
    ap.add_argument("--out", type=Path, default=None, help="site folder (default: <root>/web/public)")
    args = ap.parse_args(argv)
    out = args.out or args.root / "web" / "public"
    art = load_artifacts(args.root)
    try:
        done = write_site(args.root, art, all_tables(art), out, ROOT / "dvc.yaml")
    except (TableError, ValueError) as e:  # ValueError: transcripts judged under another version
        print(f"export_web: {e}", file=sys.stderr)
        return 2
    absent = {k: v for k, v in done["figures"].items() if v}
    print(f"export_web: {len(done['pages'])} pages, {len(done['figures']) - len(absent)} figures, "
          f"{sum(i['episodes'] for i in done['traces'].values())} episodes from {len(done['traces'])} configurations "
          f"-> {out} (commit {done['stamp']['commit']})")
    for name, reason in absent.items():
        print(f"  figure {name} not drawn: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("export_web", main))
