"""What ``dvc.lock`` (in git) records of the stages' outputs: the anchor that ``verify`` checks the
manifests, and every file beside them, against. A manifest can be deleted or edited on disk; its
MD5 in the committed lock file cannot change without a commit.

DVC never drops a lock entry whose stage left ``dvc.yaml`` (a run taken out of ``params.yaml``'s
matrix leaves ``train@<run>`` and its dependants behind), so only the stages ``dvc.yaml`` still
defines are anchors; :func:`prune_stale` removes the others from the file.

A repository may hold more than one pipeline (study 2's ``study2/dvc.yaml``, its lock beside it, its
paths relative to the root through ``wdir``). ``pipeline`` names the one to read, relative to the root;
the default is the root's ``dvc.yaml``."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import yaml

from ..errors import InputError
from .jsonio import atomic_write_bytes


@dataclass(frozen=True)
class Recorded:
    path: str  # relative to the repository root, posix
    md5: str
    stage: str


@dataclass(frozen=True)
class Unlisted:
    """A directory output whose file listing is not in the local DVC cache (so its files cannot be named)."""

    path: str
    stage: str


def lock_file(root: Path, pipeline: str | None = None) -> Path:
    """The lock file DVC keeps beside ``pipeline`` (default: the root's ``dvc.yaml``, whose lock is ``dvc.lock``)."""
    return Path(root) / (Path(pipeline).with_suffix(".lock") if pipeline else "dvc.lock")


def locked_stages(root: Path, pipeline: str | None = None) -> dict:
    """The pipeline's lock entries by stage name; no lock file: none."""
    lock = lock_file(root, pipeline)
    if not lock.is_file():
        return {}
    try:
        stages = (yaml.safe_load(lock.read_text()) or {}).get("stages", {})
    except (yaml.YAMLError, AttributeError) as e:
        raise InputError(f"{lock}: not a DVC lock file ({type(e).__name__}: {e})") from None
    if not isinstance(stages, dict):
        raise InputError(f"{lock}: 'stages' must map stage names to entries, got {type(stages).__name__}")
    return stages


def defined_stages(root: Path, pipeline: str | None = None) -> set[str] | None:
    """The stage names the pipeline (default ``root/dvc.yaml``) defines, each ``foreach`` expanded by DVC
    itself from its params file; None for a tree without that file (then every lock entry counts)."""
    # imported here: a second or so, and only a pipeline needs it. DVC's own name for its pipeline
    # file, so the library names no repository path (tests/test_layout.py).
    from dvc.dvcfile import PROJECT_FILE
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    dvc_yaml = Path(root) / (pipeline or PROJECT_FILE)
    if not dvc_yaml.is_file():
        return None

    try:
        with Repo(str(root), uninitialized=True) as repo:
            return {s.name for s in repo.index.stages if Path(s.path).resolve() == dvc_yaml.resolve()}
    except DvcException as e:
        raise InputError(f"{dvc_yaml}: DVC cannot read the pipeline with its params.yaml and dvc.lock "
                         f"({type(e).__name__}: {e})") from None


def stale_stages(root: Path, pipeline: str | None = None) -> list[str]:
    """Lock entries of stages the pipeline no longer defines, in the lock file's order."""
    locked = locked_stages(root, pipeline)  # first, so a broken lock file is named as such
    defined = defined_stages(root, pipeline) if locked else None
    return [] if defined is None else [name for name in locked if name not in defined]


def prune_stale(root: Path) -> list[str]:
    """Remove the stale entries from ``root/dvc.lock`` (atomically) and return their names. Works on
    the text, so every other line keeps DVC's own formatting byte for byte; the result is checked to
    parse to the same entries less the stale ones."""
    stale = set(stale_stages(root))
    if not stale:
        return []
    lock = lock_file(root)
    before = locked_stages(root)
    kept, dropping = [], False
    for line in lock.read_text().splitlines(keepends=True):
        if line.startswith("  ") and not line.startswith("   ") and line.rstrip().endswith(":"):
            dropping = line.strip()[:-1].strip("'\"") in stale  # a stage's first line: "  name:"
        if not dropping:
            kept.append(line)
    text = "".join(kept)
    after = (yaml.safe_load(text) or {}).get("stages", {})
    if after != {k: v for k, v in before.items() if k not in stale}:
        raise InputError(f"{lock}: pruning {sorted(stale)} would change other entries; edit it by hand")
    atomic_write_bytes(lock, text.encode())
    return [name for name in before if name in stale]


def recorded_outputs(root: Path, stale: list[str] | None = None,
                     pipeline: str | None = None) -> tuple[list[Recorded], list[Unlisted]]:
    """Every output file the pipeline's lock records for a stage it still defines (directory outputs
    expanded through the DVC cache's listing), and the directory outputs whose listing is absent. No
    lock file: nothing recorded. ``stale``: :func:`stale_stages`, when the caller has it."""
    lock = lock_file(root, pipeline)
    stale = set(stale_stages(root, pipeline) if stale is None else stale)
    try:
        outs = [(stage, o["path"], o["md5"]) for stage, entry in locked_stages(root, pipeline).items()
                if stage not in stale for o in entry.get("outs", [])]
    except (AttributeError, KeyError, TypeError) as e:
        raise InputError(f"{lock}: cannot read the recorded outputs ({type(e).__name__}: {e})") from None
    files, unlisted = [], []
    for stage, path, md5 in outs:
        if not md5.endswith(".dir"):
            files.append(Recorded(path, md5, stage))
            continue
        listing = Path(root) / ".dvc" / "cache" / "files" / "md5" / md5[:2] / md5[2:]
        if not listing.is_file():
            unlisted.append(Unlisted(path, stage))
            continue
        try:
            files += [Recorded(f"{path}/{e['relpath']}", e["md5"], stage) for e in json.loads(listing.read_text())]
        except (ValueError, KeyError, TypeError) as e:
            raise InputError(f"{listing}: the DVC cache's file list of {path} is damaged ({type(e).__name__}: {e}); "
                             f"delete it and run `dvc pull` or `dvc repro {stage}`") from None
    return files, unlisted


def overlapping(path: str, outputs: set[str]) -> str | None:
    """The first of ``outputs`` that ``path`` is, lies inside (a folder output), or holds (a folder with an
    output in it); None if none. A dependency overlapping an output missing from the workspace has a hash
    that cannot be computed there (``runs`` without its adapters), so the lock's is the only one to keep."""
    base = PurePosixPath(path)
    return next((o for o in sorted(outputs) if base == PurePosixPath(o) or PurePosixPath(o) in base.parents
                 or base in PurePosixPath(o).parents), None)
