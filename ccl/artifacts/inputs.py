"""Reading a stage's input rows: a missing or corrupt file is an ``InputError`` naming the
file and the stage that makes it, never a traceback."""
from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .jsonio import read_json, read_jsonl


def read_rows(path: Path, stage: str) -> list[dict]:
    """Every row of a JSON Lines file (gzip or not) written by ``stage``."""
    if not path.is_file():
        raise InputError(f"{path}: missing; run the {stage} stage first")
    try:
        return list(read_jsonl(path))
    except (OSError, EOFError, ValueError) as e:
        raise InputError(f"{path}: corrupt ({e}); rerun the {stage} stage") from None


def split_rows(tasks_dir: Path, split: str) -> list[dict]:
    """The tasks of one split file ``tasks_dir/<split>.jsonl`` (stage build_datasets), in file order."""
    path = tasks_dir / f"{split}.jsonl"
    if not path.is_file():
        raise InputError(f"{path}: split file missing; run the build_datasets stage first")
    return read_rows(path, "build_datasets")


def read_record(path: Path, stage: str) -> dict:
    """A JSON file written by ``stage``."""
    if not path.is_file():
        raise InputError(f"{path}: missing; run the {stage} stage first")
    try:
        return read_json(path)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: corrupt ({e}); rerun the {stage} stage") from None
