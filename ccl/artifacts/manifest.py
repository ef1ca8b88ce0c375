"""SHA-256 manifests of artifacts, and their verification.

A ``manifest.json`` lists the files beside and below it (paths relative to its folder)
with SHA-256, size in bytes, row count (JSON Lines) and per-family composition.
``ccl.artifacts.verification`` rechecks them all (for ``scripts/verify.py``);
:func:`check_against_manifest`
refuses a stage input whose bytes differ from its manifest.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable

from ..errors import InputError
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


def folder_files(folder: Path) -> list[Path]:
    """Every artifact under ``folder`` a run's manifest lists: all files but the manifest itself and
    dotfiles (the .gitignore DVC keeps beside an output; ``scripts/verify.py`` skips them too)."""
    return [p for p in Path(folder).rglob("*") if p.is_file() and p.name != MANIFEST and not p.name.startswith(".")]


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
