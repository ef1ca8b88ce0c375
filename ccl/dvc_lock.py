"""What ``dvc.lock`` (in git) records of the stages' outputs: the anchor that ``verify`` checks the
manifests, and every file beside them, against. A manifest can be deleted or edited on disk; its
MD5 in the committed lock file cannot change without a commit."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from .errors import InputError


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


def recorded_outputs(root: Path) -> tuple[list[Recorded], list[Unlisted]]:
    """Every output file ``root/dvc.lock`` records (directory outputs expanded through the DVC cache's
    listing), and the directory outputs whose listing is absent. No dvc.lock: nothing recorded."""
    lock = Path(root) / "dvc.lock"
    if not lock.is_file():
        return [], []
    try:
        stages = (yaml.safe_load(lock.read_text()) or {}).get("stages", {})
        outs = [(stage, o["path"], o["md5"]) for stage, entry in stages.items() for o in entry.get("outs", [])]
    except (yaml.YAMLError, AttributeError, KeyError, TypeError) as e:
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
