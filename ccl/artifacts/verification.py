"""Recheck the artifacts' manifests (``scripts/verify.py``), anchored in what ``dvc.lock`` records.

Kept apart from :mod:`ccl.artifacts.manifest`, which the stages import to write manifests, so a change here
reruns no stage.
"""
from __future__ import annotations

import stat
from pathlib import Path, PurePosixPath

from .dvc_lock import Recorded, Unlisted, lock_file, recorded_outputs
from .jsonio import file_digest, read_json, sha256_file
from .manifest import MANIFEST, describe

FIELDS = ("sha256", "bytes", "rows", "families", "assistant_turns")  # what describe() records of a file
SPECIAL = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
           (stat.S_ISSOCK, "a socket"))


def verify_tree(root: Path, scan: list[Path] | None = None, stale: list[str] | None = None,
                pipeline: str | None = None) -> list[str]:
    """Problems found under ``root`` (empty when everything matches), one line each. Two anchors:
    ``root/dvc.lock`` (in git; absent for a bare tree), whose recorded outputs under ``scan`` must exist
    with their MD5, so a deleted or edited manifest is named; and every manifest found or recorded,
    whose every field is recomputed for each file it lists. Lock entries of stages ``dvc.yaml`` no
    longer defines (``stale``, found when not given) anchor nothing. ``pipeline``: whose lock anchors
    (default the root's ``dvc.yaml``; see ``dvc_lock``). Every other file under ``scan`` is named
    (UNEXPECTED, UNANCHORED or UNCHECKED: see ``_check_unlisted``), so no file passes unchecked."""
    root = Path(root)
    scan = [Path(d) for d in (scan or [root])]

    def inside(path: Path) -> bool:
        return any(path.resolve().is_relative_to(d.resolve()) for d in scan)

    recorded, unlisted = recorded_outputs(root, stale, pipeline)
    recorded = [r for r in recorded if inside(root / r.path)]
    problems = _check_recorded(root, recorded)
    reported = {line.split()[1] for line in problems}
    manifests = sorted({m for d in scan if d.exists() for m in d.rglob(MANIFEST)}
                       | {root / r.path for r in recorded if Path(r.path).name == MANIFEST and (root / r.path).exists()})
    sweep = _swept(root, scan, pipeline)
    if not manifests and not recorded:  # nothing to check against: name the tree, then each file in it
        return ([f"no {MANIFEST} found under {', '.join(str(d) for d in scan)}"]
                + _check_unlisted(root, scan, sweep, [], set(), set(), []))
    listed: set[Path] = set()
    tracked = {(root / u.path).resolve(): u for u in unlisted}
    for m in manifests:
        problems += [x for x in _check_manifest(root, m, listed, tracked) if x.split()[1] not in reported]
    # a folder kept in git (cache: false) has no listing in the DVC cache; a manifest the lock anchors that
    # lists every file in it checks it all the same
    anchored = {(root / r.path).resolve().parent for r in recorded if Path(r.path).name == MANIFEST}
    problems += [f"UNCHECKED {u.path}/ (dvc.lock records this folder from stage {u.stage}; its file list is not "
                 f"in the DVC cache: dvc pull)" for u in unlisted
                 if inside(root / u.path) and not _covered(root / u.path, anchored, listed)]
    tracked_dirs = [(root / u.path).resolve() for u in unlisted if inside(root / u.path)]
    md5_checked = {(root / r.path).resolve() for r in recorded}
    return problems + _check_unlisted(root, scan, sweep, manifests, listed, md5_checked, tracked_dirs)


def _swept(root: Path, scan: list[Path], pipeline: str | None) -> list[Path]:
    """The scanned folders whose every file must be checked by something. All of them, except the root of a
    project with a lock file (``--root`` on a clone): its sources live beside its outputs and git keeps them,
    so there the lock's records, the manifests' folders and the folders holding those are what is checked."""
    locked_project = lock_file(root, pipeline).is_file()
    return [d for d in scan if d.exists() and not (locked_project and d.resolve() == root.resolve())]


def _covered(folder: Path, anchored: set[Path], listed: set[Path]) -> bool:
    """Every file of ``folder`` is listed by a manifest whose own bytes the lock records."""
    files = [p.resolve() for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")]
    return (folder.is_dir() and any(folder.resolve().is_relative_to(a) for a in anchored)
            and all(f in listed for f in files))


def special_kind(path: Path) -> str | None:
    """What ``path`` is when it is neither a regular file nor a folder (a FIFO, a device, a socket): such
    files are refused by type and never opened (reading a FIFO blocks until someone writes to it)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    return next((name for test, name in SPECIAL if test(mode)), None)


def _check_unlisted(root: Path, scan: list[Path], sweep: list[Path], manifests: list[Path], listed: set[Path],
                    recorded: set[Path], tracked_dirs: list[Path]) -> list[str]:
    """Files no manifest lists. In a manifest's folder: UNEXPECTED. In a folder that holds manifest folders
    (data/, data/v1/, runs/: an artifact collection) and not recorded by the lock: UNANCHORED (a run whose
    manifest was deleted, the task files of a deleted top manifest). Anywhere else in ``sweep`` and not
    recorded: UNCHECKED, since nothing checks its bytes (a lone run whose manifest was deleted, a tree with
    no manifest at all). Special files there are REFUSED by type."""
    homes = [m.parent for m in manifests if m.is_file()]  # a refused manifest (a folder, a FIFO) anchors nothing
    collections = {h.parent for h in homes if any(h.parent.resolve().is_relative_to(d.resolve()) for d in scan)}
    problems, seen = [], set()
    for folder in sorted(set(homes) | collections | set(sweep)):  # a parent sorts first: paths come out sorted
        for path in sorted(folder.rglob("*")):
            if path in seen or path.name.startswith(".") or path.name == MANIFEST:  # manifests: checked above
                continue
            seen.add(path)
            if path.resolve() in listed:  # checked (or refused) with its manifest
                continue
            where = ("home" if any(path.is_relative_to(h) for h in homes) else
                     "collection" if any(path.is_relative_to(c) for c in collections) else "elsewhere")
            if where == "elsewhere" and _left_to_others(path.relative_to(folder), path.resolve(), tracked_dirs):
                continue
            line = _unlisted_line(path.relative_to(root).as_posix(), path, where, path.resolve() in recorded)
            problems += [line] if line else []
    return problems


def _left_to_others(rel: Path, resolved: Path, tracked_dirs: list[Path]) -> bool:
    """A file outside the manifests' folders that the sweep leaves alone: one in a hidden folder (.git, .dvc
    of a copied tree hold no artifacts, as dotfiles are none), or in a folder the lock records whose file
    list is absent (named by that folder's own UNCHECKED line)."""
    return any(part.startswith(".") for part in rel.parts) or any(resolved.is_relative_to(t) for t in tracked_dirs)


def _unlisted_line(shown: str, path: Path, where: str, recorded: bool) -> str | None:
    """The one line for a file no manifest lists (``where``: in a manifest's folder, "home"; in a folder of
    manifest folders, "collection"; else "elsewhere"), or None when it needs none: a folder, or a file the
    lock records outside a manifest's folder (its MD5 was checked)."""
    if kind := special_kind(path):
        return f"REFUSED {shown} ({kind}, not a regular file; not opened)"
    if not path.is_file():
        return None
    if where == "home":
        return f"UNEXPECTED {shown} (in no manifest)"
    if recorded:
        return None
    if where == "collection":
        return (f"UNANCHORED {shown} (no manifest lists it and dvc.lock records none, though folders beside it "
                f"have manifests: was its manifest deleted?)")
    return f"UNCHECKED {shown} (no manifest lists it and no dvc.lock records it: nothing checks its bytes)"


def _check_recorded(root: Path, recorded: list[Recorded]) -> list[str]:
    problems = []
    for r in recorded:
        path = root / r.path
        if not path.is_file():
            problems.append(f"MISSING {r.path} (dvc.lock records it from stage {r.stage}: `dvc pull` fetches it, "
                            f"`dvc repro {r.stage}` makes it)")
        elif file_digest(path, "md5") != r.md5:
            problems.append(f"MISMATCH {r.path} (its MD5 differs from the one dvc.lock records from stage {r.stage})")
    return problems


def _check_manifest(root: Path, m: Path, listed: set[Path], tracked: dict[Path, Unlisted]) -> list[str]:
    """One manifest's problems; the files it lists are added to ``listed``. ``tracked``: folders DVC
    tracks whose listing is not at hand, so a missing file there is named with ``dvc pull``."""
    shown_m = m.relative_to(root).as_posix()
    if m.is_dir():
        return [f"CORRUPT {shown_m} (a folder, not a manifest file)"]
    if kind := special_kind(m):
        return [f"REFUSED {shown_m} ({kind}, not a regular file; not opened)"]
    try:
        files = read_json(m).get("files")
    except (ValueError, AttributeError) as e:
        return [f"CORRUPT {shown_m} (not a JSON object: {e})"]
    if not isinstance(files, dict):
        return [f"CORRUPT {shown_m} ('files' must map relative paths to entries, got {type(files).__name__})"]
    problems = []
    for rel, entry in files.items():
        parts = PurePosixPath(rel).parts
        if not rel or PurePosixPath(rel).is_absolute() or ".." in parts or "\\" in rel:
            problems.append(f"REFUSED {shown_m} (entry {rel!r} points outside the manifest's folder)")
            continue
        path = m.parent / rel
        if path.exists() and not path.resolve().is_relative_to(m.parent.resolve()):  # through a symlink
            problems.append(f"REFUSED {shown_m} (entry {rel!r} resolves outside the manifest's folder)")
            continue
        shown = path.relative_to(root).as_posix()
        if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
            problems.append(f"CORRUPT {shown_m} (entry {rel!r} has no sha256)")
            continue
        listed.add(path.resolve())
        if kind := special_kind(path):
            problems.append(f"REFUSED {shown} (listed in {shown_m}, but {kind}, not a regular file; not opened)")
            continue
        if not path.is_file():
            owner = next((u for d, u in tracked.items() if path.resolve().is_relative_to(d)), None)
            fetch = f"; DVC tracks {owner.path}/ from stage {owner.stage}: `dvc pull` fetches it" if owner else ""
            problems.append(f"MISSING {shown} (listed in {shown_m}{fetch})")
            continue
        digest = sha256_file(path)
        if digest != entry["sha256"]:  # other bytes: no other field is worth recomputing (or parseable)
            problems.append(f"MISMATCH {shown} (sha256 {digest[:12]}..., manifest says {entry['sha256'][:12]}...)")
            continue
        got = describe(path)
        wrong = [k for k in FIELDS if entry.get(k) != got.get(k)]
        if wrong:
            problems.append(f"MISMATCH {shown} ({', '.join(f'{k} is {got.get(k)!r}, manifest says {entry.get(k)!r}' for k in wrong)})")
    return problems
