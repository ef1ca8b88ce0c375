"""Canonical JSON, SHA-256 hashing and atomic writes: the one helper for all artifacts.

Every dataset, episode log and manifest goes through these functions so that the
same content always gives the same bytes (sorted keys, no spaces, UTF-8, trailing
newline, gzip mtime 0) and a crash never leaves a half-written file behind.
"""
from __future__ import annotations

import glob
import errno
import gzip
import hashlib
import io
import json
import math
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

_UMASK = os.umask(0)
os.umask(_UMASK)


_NON_FINITE = {math.inf: "Infinity", -math.inf: "-Infinity"}


def finite_only(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by the string Python's json module would have written
    for it ("NaN", "Infinity", "-Infinity"). Model text is parsed leniently (``json.loads`` reads NaN),
    so a sampled action can carry these values into a record; written as strings they stay readable
    by every strict JSON reader (a browser's ``JSON.parse``, jq) and keep their spelling."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return _NON_FINITE.get(obj, "NaN")
    if isinstance(obj, dict):
        return {k: finite_only(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_only(v) for v in obj]
    return obj


def json_text(obj: Any, **options: Any) -> str:
    """The one JSON writer: strict JSON (``allow_nan=False``), non-finite numbers as strings
    (:func:`finite_only`). Options are ``json.dumps``'s; a record without non-finite numbers gives
    exactly the bytes ``json.dumps`` gives (the fallback walk runs only when a NaN is there)."""
    options.pop("allow_nan", None)  # never NaN / Infinity in what the project writes
    try:
        return json.dumps(obj, allow_nan=False, **options)
    except ValueError:
        try:
            ours = _non_finite(obj)
        except RecursionError:  # a circular reference
            ours = False
        if not ours:  # another fault: not ours to hide
            raise
        return json.dumps(finite_only(obj), allow_nan=False, **options)


def _non_finite(obj: Any) -> bool:
    if isinstance(obj, float):
        return not math.isfinite(obj)
    if isinstance(obj, dict):
        return any(_non_finite(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_non_finite(v) for v in obj)
    return False


def dumps(obj: Any) -> str:
    """Canonical JSON: sorted keys, compact separators, non-ASCII kept as is; strict (:func:`json_text`)."""
    return json_text(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    return file_digest(path, "sha256", chunk)


def file_digest(path: str | Path, algorithm: str, chunk: int = 1 << 20) -> str:
    """Hex digest of a file's bytes (``sha256`` for our manifests; ``md5`` is what dvc.lock records)."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def temp_prefix(stem: str) -> str:
    """The prefix of this process's temporary names for ``stem``: ``.{stem}.{pid}.``; the pid lets a
    later run tell a killed writer's leftovers from the work of a writer still running."""
    return f".{stem}.{os.getpid()}."


def orphans(folder: Path, stem: str) -> list[Path]:
    """Temporary files or folders of ``stem`` (see :func:`temp_prefix`) whose writer is gone."""
    found = []
    for p in folder.glob(f".{glob.escape(stem)}.*"):
        pid = p.name[len(stem) + 2:].split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            found.append(p)
    return found


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, fsync, then rename over ``path``."""
    path = Path(path)
    tmp = _temp_file(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _temp_file(path: Path, data: bytes) -> Path:
    """``data`` in a fsynced temporary file beside ``path`` (usual mode), not yet renamed. An OSError
    that names no file (write() and fsync() name none: a full disk) is raised naming ``path``."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in orphans(path.parent, path.name):
            stale.unlink(missing_ok=True)  # left by a writer of this file that was killed
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix(path.name), suffix=".tmp")
    except OSError as e:
        raise _named(e, path) from e
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; an artifact gets the usual mode
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        os.unlink(tmp)
        raise _named(e, path) from e
    except BaseException:
        os.unlink(tmp)
        raise
    return Path(tmp)


def _named(e: OSError, path: Path) -> OSError:
    return e if e.filename is not None else type(e)(e.errno, e.strerror or str(e), str(path))


def atomic_write_files(files: dict[Path, bytes]) -> None:
    """Write several files together: every file goes to a temporary name first, so a full disk, a bad
    input or a crash while writing leaves each old file as it was; only then is each renamed over its
    target. The renames are not one atomic act: a kill between them leaves some files new, none torn."""
    temps: list[tuple[Path, Path]] = []
    try:
        for path, data in files.items():
            temps.append((_temp_file(Path(path), data), Path(path)))
        for tmp, path in temps:
            os.replace(tmp, path)
    finally:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)  # renamed ones are gone already


@contextmanager
def atomic_folder(path: str | Path) -> Iterator[Path]:
    """Build a folder whole under a temporary name beside ``path``, and swap it in only when the block
    ends without an error: a crash while building leaves ``path`` as it was (and no temporary behind).
    The swap is two renames; a kill between them leaves the old folder under ``.{name}.<pid>.old``, which
    the next build of ``path`` puts back before it starts."""
    path = Path(path)
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise NotADirectoryError(errno.ENOTDIR, "an output folder's place holds a file or a link", str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in orphans(path.parent, path.name):
        if stale.name.endswith(".old") and not path.exists():
            os.replace(stale, path)  # killed mid-swap: the previous folder is the one to keep
        else:
            _remove(stale)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=temp_prefix(path.name), suffix=".tmp"))
    try:
        os.chmod(tmp, 0o777 & ~_UMASK)  # mkdtemp makes 0700
        yield tmp
        old = tmp.with_name(tmp.name + ".old")  # unique: a leftover of an earlier process with our pid is no clash
        if path.exists():
            os.replace(path, old)
        try:
            os.replace(tmp, path)
        except BaseException:
            if old.exists():
                os.replace(old, path)  # put the previous folder back
            raise
        _remove(old)
    finally:
        _remove(tmp)  # only still there when the block or the swap failed


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def jsonl_bytes(rows: Iterable[Any], compress: bool = False) -> bytes:
    data = "".join(dumps(r) + "\n" for r in rows).encode("utf-8")
    if not compress:
        return data
    buf = io.BytesIO()
    # mtime=0 and no file name keep gzip output byte-stable.
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
    return buf.getvalue()


def write_jsonl(path: str | Path, rows: Iterable[Any]) -> None:
    atomic_write_bytes(path, jsonl_bytes(rows, compress=str(path).endswith(".gz")))


def write_json(path: str | Path, obj: Any, indent: int | None = 2) -> None:
    """Human-facing JSON (indented, sorted keys); still byte-stable."""
    text = json_text(obj, sort_keys=True, indent=indent, ensure_ascii=False) + "\n"
    atomic_write_bytes(path, text.encode("utf-8"))


def read_jsonl(path: str | Path) -> Iterator[Any]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{lineno}: invalid JSON line ({e.msg})") from None


def read_json(path: str | Path) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)
