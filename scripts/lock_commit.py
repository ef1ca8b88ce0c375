"""Record a stage's current dependencies in its lock file without rerunning it: a code-only lock commit.

    python -m scripts.lock_commit STAGE [STAGE ...] [--pipeline dvc.yaml] [--record-outputs] [--dry-run]

After a pure refactor (code a stage imports changed, its outputs did not), `dvc repro` would rerun the
stage, and `dvc commit` needs every dependency in the workspace; on a machine whose DVC cache lacks the
adapters (a new session), neither is possible for stages that read them. This script loads each named
stage (a foreach group name takes all its items) with its lock entry and:

- recomputes the hash of every dependency present in the workspace, and of every params entry;
- keeps the recorded hash of a dependency that is absent, or that is a folder holding an output of some
  stage that is absent (``runs`` without its adapters): its true hash cannot be computed here;
- checks every output present in the workspace against its recorded hash and refuses, naming the stage and
  the file, when one differs: a code-only commit never changes a published output. With
  ``--record-outputs`` (after rerunning the stage's command by hand) it records the new hash instead, and
  puts a cached output into the DVC cache as ``dvc commit`` does. Absent outputs keep their hash.

It prints every hash it changes and every dependency it kept; ``--dry-run`` writes nothing.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ccl.artifacts.dvc_lock import overlapping

ROOT = Path(__file__).resolve().parents[1]


class LockCommitError(RuntimeError):
    """A stage whose output differs from its lock (without --record-outputs), or an unknown stage."""


@dataclass
class StageChange:
    stage: str
    changed: list[str] = field(default_factory=list)  # "<path>: <old> -> <new>"
    kept: list[str] = field(default_factory=list)  # "<path> (<why>)"
    refused: list[str] = field(default_factory=list)  # outputs whose bytes changed, without --record-outputs


def _rel(repo, path: str) -> str:
    return Path(path).resolve().relative_to(Path(repo.root_dir).resolve()).as_posix()


def absent_outputs(repo) -> set[str]:
    """Every output of any stage of the repository (both pipelines) missing from the workspace."""
    return {_rel(repo, out.fs_path) for stage in repo.index.stages for out in stage.outs if not out.exists}


def _hash(item) -> str:
    value = item.hash_info.value if item.hash_info else None
    return str(value) if value is not None else str(getattr(item, "params", None) or "none")


def commit_stage(repo, stage, absent: set[str], record_outputs: bool) -> StageChange:
    """Recompute ``stage``'s hashes in place (see the module's docstring); return what changed."""
    from dvc.dependency.param import ParamsDependency

    change = StageChange(stage.addressing)
    for dep in stage.deps:
        path = _rel(repo, dep.fs_path)
        if isinstance(dep, ParamsDependency):
            before = dict(dep.hash_info.value or {}) if dep.hash_info else {}
            dep.save()
            if dict(dep.hash_info.value or {}) != before:
                change.changed.append(f"params {path}: {sorted(before)} values updated")
            continue
        if not dep.exists:
            change.kept.append(f"{path} (absent)")
            continue
        inside = overlapping(path, absent)
        if inside is not None:
            change.kept.append(f"{path} (overlaps the absent output {inside})")
            continue
        before = _hash(dep)
        dep.save()
        if _hash(dep) != before:
            change.changed.append(f"{path}: {before} -> {_hash(dep)}")
    for out in stage.outs:
        path = _rel(repo, out.fs_path)
        if not out.exists:
            change.kept.append(f"{path} (output absent)")
            continue
        before = _hash(out)
        out.save()
        if _hash(out) == before:
            continue
        if not record_outputs:
            change.refused.append(f"{stage.addressing}: output {path} differs from dvc.lock ({before} -> {_hash(out)})")
            continue
        if out.use_cache:
            out.commit()
        change.changed.append(f"output {path}: {before} -> {_hash(out)}")
    return change


def named(repo, pipeline: str, target: str) -> list:
    """The stages of ``pipeline`` named ``target``, or its items if ``target`` is a foreach group. Read
    from the index DVC builds once (collecting each target apart re-reads the pipeline: seconds each)."""
    path = (Path(repo.root_dir) / pipeline).resolve()
    return [s for s in repo.index.stages if Path(s.path).resolve() == path
            and (s.name == target or s.name.startswith(f"{target}@"))]


def lock_commit(root: Path, pipeline: str, targets: list[str], record_outputs: bool = False,
                dry_run: bool = False) -> list[StageChange]:
    """Commit each target stage of ``pipeline`` (see the module's docstring); all are checked before any
    is written, so a refused output leaves the lock file untouched."""
    from dvc.repo import Repo

    repo = Repo(str(root))
    with repo.lock:
        absent = absent_outputs(repo)
        stages = []
        for target in targets:
            found = named(repo, pipeline, target)
            if not found:
                raise LockCommitError(f"{pipeline}: no stage {target!r}")
            stages += found
        changes = [commit_stage(repo, stage, absent, record_outputs) for stage in stages]
        refused = [line for c in changes for line in c.refused]
        if refused:
            raise LockCommitError("; ".join(refused) + ". A code-only commit keeps outputs: rerun the stage, or pass "
                                  "--record-outputs after rerunning its command by hand (nothing written)")
        if not dry_run:
            for stage in stages:
                stage.dump(update_pipeline=False)
    return changes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stages", nargs="+", help="stage names (a foreach group name takes all its items)")
    ap.add_argument("--pipeline", default="dvc.yaml", help="dvc.yaml (default), study2/dvc.yaml or scale/dvc.yaml")
    ap.add_argument("--record-outputs", action="store_true",
                    help="record outputs whose bytes changed (after rerunning the stage's command by hand)")
    ap.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    ap.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        changes = lock_commit(args.root, args.pipeline, args.stages, args.record_outputs, args.dry_run)
    except LockCommitError as e:
        print(f"lock_commit: {e}", file=sys.stderr)
        return 1
    for c in changes:
        print(f"{c.stage}: {len(c.changed)} hash(es) {'would change' if args.dry_run else 'updated'}, "
              f"{len(c.kept)} kept")
        for line in c.changed:
            print(f"  changed {line}")
        for line in c.kept:
            print(f"  kept    {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
