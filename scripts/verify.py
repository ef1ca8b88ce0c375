"""Recompute the SHA-256 of every dataset and adapter and compare with the manifests.

    python -m scripts.verify              # data/ and runs/ of this repository
    python -m scripts.verify --root DIR   # every manifest.json under DIR
    python -m scripts.verify --compare runs/C_s0 /elsewhere/runs/C_s0   # a retrained run against the published one
    python -m scripts.verify --prune-lock   # drop dvc.lock's entries of stages dvc.yaml no longer defines
    python -m scripts.verify --pipeline study2/dvc.yaml   # study 2 alone: its lock, data/study2 and study2/runs
    python -m scripts.verify --pipeline study3/dvc.yaml   # study 3 alone: its lock, data/study3 and study3/runs

Exit status 0 when everything matches; 1 with one line per file that differs, is
missing, or is present but listed in no manifest (UNCHECKED: nothing checks its bytes).
A tree without dvc.lock passes only as "consistent": its manifests agree with their files,
but nothing anchors the manifests themselves. With --compare: 0 when the retrained
adapter is byte-identical (same CPU kernel path) or within the stated tolerance of the
published one (ccl/models/adapter_check.py), 1 when it differs.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ccl.artifacts.dvc_lock import lock_file, prune_stale, stale_stages
from ccl.artifacts.verification import verify_tree
from ccl.errors import InputError
from ccl.models import adapter_check

from .layout import DATA, ROOT, STUDY2_DATA, STUDY2_RUNS, TRAIN_RUNS
from .layout_study3 import STUDY3_DATA, STUDY3_RUNS

# a pipeline other than the root's, and the folders its outputs with manifests live in
PIPELINE_FOLDERS = {"study2/dvc.yaml": (STUDY2_DATA, STUDY2_RUNS), "study3/dvc.yaml": (STUDY3_DATA, STUDY3_RUNS)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=None, help="tree to check instead of this repository")
    ap.add_argument("--compare", type=Path, nargs=2, metavar=("PUBLISHED", "RETRAINED"),
                    help="two folders of the same training run: is the retrained one the published one?")
    ap.add_argument("--pipeline", choices=sorted(PIPELINE_FOLDERS), default=None,
                    help="check one pipeline's outputs against its own lock (default: the first study's dvc.yaml, "
                         "data/ and runs/)")
    ap.add_argument("--prune-lock", action="store_true",
                    help="remove dvc.lock's entries of stages dvc.yaml no longer defines, then verify")
    args = ap.parse_args(argv)
    if args.compare:
        try:
            result = adapter_check.compare(*args.compare)
        except InputError as e:
            ap.error(str(e))
        print(adapter_check.describe(result))
        return 0 if result.within() else 1
    if args.root is not None:
        if not args.root.is_dir():
            ap.error(f"--root {args.root}: not a directory")
        root, scan = args.root, [args.root]
    elif args.pipeline:
        root, scan = ROOT, list(PIPELINE_FOLDERS[args.pipeline])
    else:
        root, scan = ROOT, [DATA.parent, TRAIN_RUNS]
    try:
        if args.prune_lock:
            for name in prune_stale(root):
                print(f"pruned {name} from {root / 'dvc.lock'}", file=sys.stderr)
        stale = stale_stages(root, args.pipeline)
        problems = verify_tree(root, scan, stale, args.pipeline)
    except InputError as e:
        print(f"verify: {e}", file=sys.stderr)
        return 2
    if stale:
        print(f"note: dvc.lock keeps {len(stale)} entries of stages dvc.yaml no longer defines "
              f"({', '.join(stale)}); not checked (`python -m scripts.verify --prune-lock` removes them)",
              file=sys.stderr)
    anchored = lock_file(root, args.pipeline).is_file()
    for p in problems:
        print(p)
    if problems:
        if not anchored:
            print(f"note: {root} has no dvc.lock: each manifest is checked against the files it lists, and every "
                  f"file no manifest lists is named, but nothing checks the manifests themselves (a file edited "
                  f"together with its manifest passes); a clone's dvc.lock anchors them", file=sys.stderr)
        print(f"verify: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(_passed(root, anchored))
    return 0


def _passed(root: Path, anchored: bool) -> str:
    """The one line of a clean check. Without a lock file nothing anchors the manifests, so "match" would
    overstate it: the files only agree with manifests that could have been rewritten with them."""
    if anchored:
        return f"verify: all files match their manifests under {root}"
    return (f"verify: consistent only: every file under {root} matches its manifest, but no dvc.lock anchors "
            f"the manifests (a file edited together with its manifest would pass)")


if __name__ == "__main__":
    sys.exit(main())
