"""Stage export_web: the static report site, written to web/public/.

    python -m scripts.export_web                 # then open web/public/index.html
    python -m http.server -d web/public 8000      # or serve it (scripts/serve.py adds live mode)

Pages: the report (the same template and artifacts as results/report.md, with result cells
linking to their episodes), methods and reproducibility (datasets with
SHA-256, leakage audit, teacher record, training runs and adapter hashes, pipeline
commands), figures (matplotlib), a trace explorer over every evaluated episode and the
replay page (failure maps from results/replay_summary.json as heat maps; a cell lists its
graded decisions with prefix, model action and gold action). The
site needs no network access; pages are stamped with the export time and git commit.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import export_web

from .layout import DVC_YAML, PARAMS, ROOT


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root holding the artifacts")
    ap.add_argument("--out", type=Path, default=None, help="site folder (default: <root>/web/public)")
    args = ap.parse_args(argv)
    out = args.out or args.root / "web" / "public"
    # the pipeline table shows the commands of the dvc.yaml and params.yaml of the root being published
    dvc_yaml, params = (args.root / f.relative_to(ROOT) for f in (DVC_YAML, PARAMS))
    done = export_web.run(args.root, out, dvc_yaml, params)
    absent = {k: v for k, v in done["figures"].items() if v}
    print(f"export_web: {len(done['pages'])} pages, {len(done['figures']) - len(absent)} figures, "
          f"{sum(i['episodes'] for i in done['traces'].values())} episodes from {len(done['traces'])} configurations "
          f"-> {out} (commit {done['stamp']['commit']})")
    for name, reason in absent.items():
        print(f"  figure {name} not drawn: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("export_web", main))
