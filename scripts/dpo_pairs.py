"""Stage dpo_pairs: DPO's preference pairs from the states C itself visited in DAgger's first iteration
(issue 41): chosen the expert's label, rejected C's turn where that turn fails its grade.

    python -m scripts.dpo_pairs            # reads data/v1/dagger/iter1, writes data/v1/dpo/
"""
from __future__ import annotations

import sys
from pathlib import Path

from ccl.artifacts.boundary import run_stage
from ccl.stages import dpo_pairs

from .cli import stage_parser
from .layout import DAGGER, DATA, ROOT


def repo_relative(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it (the default data root is absolute), so
    the records are the same bytes in every clone; else the path as given."""
    try:
        return Path(path).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    ap = stage_parser(__doc__)
    ap.add_argument("--source", type=Path, default=None,
                    help=f"a dagger_rollout iteration's folder (default: {DAGGER.name}/iter1 in --data)")
    ap.add_argument("--out", type=Path, default=None, help=f"default: {DATA.name}/dpo in --data")
    ap.add_argument("--keep-unrecoverable", action="store_true",
                    help="also pair states the expert cannot recover (label: stop honestly)")
    args = ap.parse_args(argv)
    source, out = args.source or args.data / DAGGER.name / "iter1", args.out or args.data / "dpo"
    s = dpo_pairs.run(args.data, source, out, args.keep_unrecoverable, repo_relative(source))
    print(f"dpo_pairs: {s['pairs']} pairs from {s['student_fails']} failed turns of {s['states']} states "
          f"({s['tasks_with_pairs']} tasks); by kind {s['pairs_by_kind']} -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(run_stage("dpo_pairs", main))
