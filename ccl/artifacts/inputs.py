"""The one reader of a stage's input files (rows, logs, records): a missing, corrupt, empty or
misshapen input is an ``InputError`` of one line naming the file, the line where there is one, what
is wrong and the stage that makes it; never a traceback, and never a stage that runs on nothing.

    read_rows(path, stage, shape=None, need_rows=False)   JSON Lines, gzip or not
    read_record(path, stage, shape=None)                  one JSON object

``shape`` is a ``ccl.artifacts.shapes.Shape``: each row is checked against it on read (strict types,
extra fields allowed) and kept as read, so checking never changes what a stage computes.
"""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any

import pydantic

from ..errors import InputError
from .jsonio import read_json, read_jsonl
from .shapes import Shape, Task

# What a torn or tampered file raises while being read: gzip's own errors (BadGzipFile, a truncated stream
# an EOFError, a damaged deflate stream zlib.error), bytes that are not UTF-8 (UnicodeDecodeError, a
# ValueError) and JSON syntax (a ValueError from read_jsonl / json.load). Any other OSError (no permission,
# a folder where the file should be) is no corruption: the stage's error boundary names it with its remedy.
UNREADABLE = (gzip.BadGzipFile, EOFError, ValueError, zlib.error)


def one_line(text: object) -> str:
    """``text`` with every run of whitespace (newlines too) as one space: an error stays one line."""
    return " ".join(str(text).split())


def _missing(path: Path, stage: str) -> InputError:
    return InputError(f"{path}: missing; run the {stage} stage first")


def _corrupt(path: Path, stage: str, e: BaseException) -> InputError:
    what = one_line(e) or type(e).__name__
    if what.startswith(f"{path}:"):  # read_jsonl names the file and line itself
        return InputError(f"{what}; rerun the {stage} stage")
    return InputError(f"{path}: corrupt ({what}); rerun the {stage} stage")


def _where(row: Any, loc: tuple) -> str:
    """The field path of a pydantic error, cut where the row ends: a union's error appends the name of
    the member it tried (``loss.float``), which is no place in the row."""
    path, node = [], row
    for part in loc:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            if isinstance(part, str) and isinstance(node, dict):  # a missing field: name it
                path.append(part)
            break
        path.append(str(part))
    return ".".join(path) or "the row"


def shape_problem(row: Any, shape: type[Shape]) -> str | None:
    """What is wrong with ``row`` for ``shape`` (its first problem, one line), or None."""
    try:
        shape.model_validate(row)
    except pydantic.ValidationError as e:
        err = e.errors()[0]
        got = "nothing" if err["type"] == "missing" else type(err["input"]).__name__
        return one_line(f"{_where(row, err['loc'])}: {err['msg']} (got {got}; expected a {shape.__name__})")
    return None


def check_rows(rows: list[Any], path: Path, stage: str, shape: type[Shape]) -> None:
    """Refuse the first row of ``rows`` (line k of ``path``, counting non-blank lines) that breaks ``shape``."""
    for k, row in enumerate(rows, 1):
        if problem := shape_problem(row, shape):
            raise InputError(f"{path}: row {k}: {problem}; rerun the {stage} stage")


def read_rows(path: Path, stage: str, shape: type[Shape] | None = None, need_rows: bool = False) -> list[dict]:
    """Every row of a JSON Lines file (gzip when its name ends in .gz) written by ``stage``. With
    ``need_rows`` a file without rows is refused: the stage needs some to do anything honest."""
    path = Path(path)
    if not path.is_file():
        raise _missing(path, stage)
    try:
        rows = list(read_jsonl(path))
    except UNREADABLE as e:
        raise _corrupt(path, stage, e) from None
    if need_rows and not rows:
        raise InputError(f"{path}: no rows; rerun the {stage} stage (this stage needs at least one)")
    if shape is not None:
        check_rows(rows, path, stage, shape)
    return rows


def split_rows(tasks_dir: Path, split: str, need_rows: bool = False) -> list[dict]:
    """The tasks of one split file ``tasks_dir/<split>.jsonl`` (stage build_datasets), in file order."""
    path = tasks_dir / f"{split}.jsonl"
    if not path.is_file():
        raise InputError(f"{path}: split file missing; run the build_datasets stage first")
    return read_rows(path, "build_datasets", Task, need_rows)


def read_record(path: Path, stage: str, shape: type[Shape] | None = None) -> dict:
    """A JSON object written by ``stage``; anything but an object (a list, a number) is refused."""
    path = Path(path)
    if not path.is_file():
        raise _missing(path, stage)
    try:
        record = read_json(path)
    except UNREADABLE as e:
        raise _corrupt(path, stage, e) from None
    if not isinstance(record, dict):
        raise InputError(f"{path}: expected a JSON object, got {type(record).__name__}; rerun the {stage} stage")
    if shape is not None and (problem := shape_problem(record, shape)):
        raise InputError(f"{path}: {problem}; rerun the {stage} stage")
    return record
