"""SHA-256 manifests of artifacts, and their verification.

A ``manifest.json`` lists the files beside and below it (paths relative to its folder)
with SHA-256, size in bytes, row count (JSON Lines) and per-family composition.
:func:`verify_tree` rechecks every manifest under a root and reports each file that
differs, is missing, or is present but listed by no manifest; :func:`check_against_manifest`
refuses a stage input whose bytes differ from its manifest.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable

from .errors import InputError
from .jsonio import read_json, read_jsonl, sha256_file, write_json

MANIFEST = "manifest.json"


def describe(path: Path) -> dict:
    entry = {"sha256": sha256_file(path), "bytes": path.stat().st_size, "rows": None, "families": None}
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        fam: Counter = Counter()
        rows = turns = 0
        for row in read_jsonl(path):
            rows += 1
            if isinstance(row, dict):
                fam[row.get("family")] += "family" in row
                turns += row.get("n_assistant_turns", 0)
        entry["rows"] = rows
        if turns:  # SFT files: supervised assistant turns, the write-up's "SFT rows"
            entry["assistant_turns"] = turns
        fam.pop(None, None)
        entry["families"] = dict(sorted(fam.items())) or None
    return entry


def write_manifest(folder: Path, files: Iterable[Path], extra: dict | None = None) -> dict:
    folder = Path(folder)
    listing = {p.relative_to(folder).as_posix(): describe(p) for p in sorted(files)}
    manifest = {**(extra or {}), "files": listing}
    write_json(folder / MANIFEST, manifest)
    return manifest


def _manifests(root: Path, scan: list[Path]) -> list[Path]:
    return sorted(m for d in scan if d.exists() for m in d.rglob(MANIFEST))


def verify_tree(root: Path, scan: list[Path] | None = None) -> list[str]:
    """Problems found under ``root`` (empty when everything matches)."""
    root = Path(root)
    scan = scan or [root]
    problems: list[str] = []
    listed: set[Path] = set()
    manifests = _manifests(root, scan)
    if not manifests:
        return [f"no {MANIFEST} found under {', '.join(str(d) for d in scan)}"]
    for m in manifests:
        try:
            files = read_json(m)["files"]
        except (ValueError, KeyError, TypeError) as e:
            problems.append(f"CORRUPT {m.relative_to(root)} (cannot read its file list: {e})")
            continue
        for rel, entry in files.items():
            path = m.parent / rel
            listed.add(path.resolve())
            shown = path.relative_to(root).as_posix()
            if not path.exists():
                problems.append(f"MISSING {shown}")
                continue
            got = sha256_file(path)
            if got != entry["sha256"]:
                problems.append(f"MISMATCH {shown} (sha256 {got[:12]}..., manifest says "
                                f"{entry['sha256'][:12]}...)")
    for m in manifests:
        for path in sorted(m.parent.rglob("*")):
            if (path.is_file() and path.name != MANIFEST and not path.name.startswith(".")
                    and path.resolve() not in listed):
                problems.append(f"UNEXPECTED {path.relative_to(root).as_posix()} (in no manifest)")
    return problems


def check_against_manifest(folder: Path, producers: dict[str, str], manifest_stage: str) -> None:
    """A file whose bytes differ from its folder's manifest is corrupt, even if it parses.

    ``producers`` maps each file name to the stage that writes it (the remedy to name)."""
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise InputError(f"{manifest}: missing; run the {manifest_stage} stage first")
    files = read_json(manifest)["files"]
    for name, stage in producers.items():
        path = folder / name
        if not path.exists():
            raise InputError(f"{path}: missing; run the {stage} stage first")
        if name not in files or sha256_file(path) != files[name]["sha256"]:
            raise InputError(f"{path}: corrupt (SHA-256 differs from {manifest}); rerun the {stage} stage "
                             f"and then {manifest_stage}")
