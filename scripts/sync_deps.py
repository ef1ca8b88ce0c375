"""Rewrite each stage's code dependencies in a pipeline from what its script imports and reads.

    python -m scripts.sync_deps                                   # dvc.yaml: rewrite, name the stages changed
    python -m scripts.sync_deps --pipeline study2/dvc.yaml
    python -m scripts.sync_deps --check                           # exit 1 naming each stage that differs

A stage must declare its script, every ``ccl/`` and ``scripts/`` module the script imports, directly or
not (the two packages' ``__init__`` aside), and every resource its code names (templates, the site's
scripts): ``scripts/dvc_deps.py`` computes them, the mechanism ``tests/test_dvc_deps.py`` checks with.
Only those entries of a stage's ``deps:`` list are rewritten; every other entry (data, results, runs,
configs, documents), every comment and every other line of the file stays as it is (a comment above a
dropped entry moves to the entry after it).

Each stage keeps the conventions its list shows: the script first or in its sorted place; resources in
their sorted place or sorted after the modules; the ``scripts/`` helpers with the modules or after the
data entries; a package it needs whole (every module and resource in it) named by its folder
(``ccl/world``) or file by file. A choice a stage's list does not show is its pipeline's majority (the
first study's order where no stage shows it, a package file by file). So on a pipeline in order the
rewrite changes no byte.

Without ``--check`` the file is written through a temporary file and a rename, and refused if it
changed while the stages were computed. ``--file`` reads and writes a copy instead of the pipeline
(its paths still resolve as the pipeline's do); the tests use it.
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

import yaml

from .dvc_deps import PACKAGE_INITS, code_needed, is_resource, stage_script
from .layout import ROOT


class Style(NamedTuple):
    script_first: bool  # the stage's script heads the list (dvc.yaml) or sits in sorted place (study 2)
    resources_apart: bool  # resources sorted after the modules instead of in their sorted place
    helpers_after_data: bool  # scripts/ helpers (cli.py, layout.py...) after the data entries


STYLES = [Style(*flags) for flags in itertools.product((True, False), repeat=3)]
DEFAULT = Style(True, False, False)  # when a pipeline decides nothing: the first study's order
FOLDERS = False  # ... and a package needed whole listed file by file (the newer stages' way)


@dataclass
class Item:
    """One entry of a deps list: its line and any continuation lines, and the comment or blank lines above it."""
    body: list[str]
    path: str
    managed: bool  # a code or resource entry this script rewrites
    lead: list[str] = field(default_factory=list)


@dataclass
class Stage:
    name: str
    script: str | None  # scripts/x.py relative to the stage's folder; None: not a `python -m scripts.x` stage
    folder: Path  # where its paths resolve (the pipeline's folder and wdir)
    start: int  # the deps list's lines: [start, end)
    end: int
    indent: str
    items: list[Item]
    problem: str | None = None  # why the stage cannot be rewritten (it is left as it is)


def entry_path(line: str) -> str:
    """The path a deps line names: ``- path``, ``- path  # comment`` or ``- path:`` (with options)."""
    text = line.strip()[1:].strip()
    if " #" in text:
        text = text[: text.index(" #")].rstrip()
    if text.endswith(":"):
        text = text[:-1]
    elif ": " in text:
        text = text[: text.index(": ")]
    return text.strip("'\"")


def rooted(entry: str, folder: Path) -> str | None:
    """``entry`` relative to the repository root (posix), or None for a template or a path outside it."""
    if "${" in entry:
        return None
    path = Path(os.path.normpath(folder / entry))
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return None


def is_code(entry: str, folder: Path) -> bool:
    """A module, a folder of modules or a resource under ccl/ or scripts/ (not a script's data file)."""
    rel = rooted(entry, folder)
    if rel is None:
        return False
    top = rel.split("/")[0]
    return top == "ccl" or (top == "scripts" and (rel.endswith(".py") or (ROOT / rel).is_dir()))


def parse_items(lines: list[str], first: int) -> tuple[int, int, str, list[Item]]:
    """The deps list whose items start after line ``first - 1`` (the ``deps:`` key): (start, end,
    indent, items). Comment and blank lines before an item belong to it; those after the last item
    belong to what follows."""
    i, pending, items, indent = first, [], [], None
    while i < len(lines):
        line = lines[i]
        text = line.strip()
        width = len(line) - len(line.lstrip(" "))
        if not text or text.startswith("#"):
            pending.append(line)
        elif indent is None and text.startswith("-"):
            indent = width
            items.append(Item([line], entry_path(line), False, pending))
            pending = []
        elif indent is not None and width == indent and text.startswith("-"):
            items.append(Item([line], entry_path(line), False, pending))
            pending = []
        elif indent is not None and width > indent:  # a continuation of the item above (its options)
            items[-1].body += pending + [line]
            pending = []
        else:
            break
        i += 1
    return first, i - len(pending), " " * (indent if indent is not None else 0), items


def stages_of(text: str, pipeline: str) -> list[Stage]:
    """Every stage of the pipeline text (``pipeline``: its place, relative to the root), with its deps
    list's lines; a foreach stage's list is its ``do``'s."""
    lines = text.splitlines(keepends=True)
    loaded = yaml.safe_load(text)["stages"]
    out = []
    for key, value in _child(yaml.compose(text), "stages").value:
        name, body_node = key.value, value
        body = loaded[name]
        if "do" in body:
            body, body_node = body["do"], _child(value, "do")
        deps_key = next((k for k, _ in body_node.value if k.value == "deps"), None)
        folder = (ROOT / pipeline).parent / body.get("wdir", loaded[name].get("wdir", "."))
        script = stage_script(body["cmd"]) if isinstance(body.get("cmd"), str) else None
        if script is not None:
            script = Path(os.path.relpath(ROOT / script, folder)).as_posix()
        if deps_key is None:
            out.append(Stage(name, script, folder, -1, -1, "", [], "has no deps list; add one (its script will do)"))
            continue
        start, end, indent, items = parse_items(lines, deps_key.start_mark.line + 1)
        for item in items:
            item.managed = is_code(item.path, folder)
        problem = None
        deps_node = _child(body_node, "deps")
        if not isinstance(deps_node, yaml.SequenceNode) or deps_node.flow_style:
            problem = "its deps are not a block list (one `- path` a line)"
        elif len(items) != len(deps_node.value):
            problem = f"read {len(items)} deps lines where YAML reads {len(deps_node.value)} entries"
        elif script is not None and not (folder / script).is_file():
            problem = f"its script {script} does not exist"
        out.append(Stage(name, script, folder, start, end, indent, items, problem))
    return out


def _key_index(node, key: str) -> int:
    return next(i for i, (k, _) in enumerate(node.value) if k.value == key)


def _child(node, key: str):
    return node.value[_key_index(node, key)][1]


def packages() -> dict[str, set[str]]:
    """Every package folder under ccl/ (relative to the root) -> the modules and resources inside it, at any depth."""
    out = {}
    for init in sorted((ROOT / "ccl").rglob("__init__.py")):
        if init.parent != ROOT / "ccl" and "__pycache__" not in init.parts:
            out[init.parent.relative_to(ROOT).as_posix()] = {
                p.relative_to(ROOT).as_posix() for p in init.parent.rglob("*")
                if (p.suffix == ".py" and "__pycache__" not in p.parts) or is_resource(p)}
    return out


def needed(stage: Stage, packages: dict[str, set[str]]) -> tuple[set[str], list[str]]:
    """(the modules and resources the stage must declare, relative to the root; the packages all of
    whose modules and resources are among them)."""
    modules, read = code_needed(rooted(stage.script, stage.folder))
    files = modules | read
    inits = {p.relative_to(ROOT).as_posix() for p in PACKAGE_INITS}
    return files, sorted(d for d, inside in packages.items() if inside <= files | inits)


def declares_folders(stage: Stage, full: list[str]) -> bool | None:
    """Whether the stage names a package it needs whole by its folder (True: ``ccl/world``) or by its
    files (False); None when its list says neither (it needs no package whole) or both."""
    rels = [rooted(i.path, stage.folder) for i in stage.items if i.managed]
    folder = any(r is not None and (ROOT / r).is_dir() for r in rels)
    files = any(r is not None and not (ROOT / r).is_dir() and any(r.startswith(d + "/") for d in full) for r in rels)
    return folder if folder != files else None


def entries(stage: Stage, files: set[str], full: list[str], folders: bool) -> set[str]:
    """The code entries the stage must declare, as its deps list writes paths: each package it needs
    whole as its top-most folder if ``folders``, every other file by itself."""
    whole = [d for d in full if not any(d.startswith(o + "/") for o in full)] if folders else []
    files = {f for f in files if not any(f.startswith(d + "/") for d in whole)} | set(whole)
    return {Path(os.path.relpath(ROOT / rel, stage.folder)).as_posix() for rel in files}


def kind(entry: str, stage: Stage) -> str:
    rel = rooted(entry, stage.folder) or entry
    if entry == stage.script:
        return "script"
    if rel.split("/")[0] == "scripts":
        return "helper"
    return "resource" if PurePosixPath(rel).suffix not in ("", ".py") else "module"


def order(entries: set[str], stage: Stage, style: Style) -> tuple[list[str], list[str]]:
    """(the entries that go where the code starts, those that go after the data entries), in order."""
    kinds = {e: kind(e, stage) for e in entries}
    apart = {"resource"} if style.resources_apart else set()
    tail = sorted(e for e in entries if kinds[e] == "helper") if style.helpers_after_data else []
    head = sorted(e for e in entries if e not in tail and kinds[e] not in apart
                  and not (kinds[e] == "script" and style.script_first))
    if style.script_first and stage.script in entries:
        head.insert(0, stage.script)
    return head + sorted(e for e in entries if kinds[e] in apart), tail


def layout(items: list[Item], entries: set[str], stage: Stage, style: Style) -> list[Item | str]:
    """``items`` (the data entries and the code entries that stay) with the code entries ``entries``
    in ``style``'s order: the first block where the first code entry of it stood (else first), the
    helpers' block, if apart, where the first of them stood after a data entry (else last). A str is a
    new entry."""
    head, tail = order(entries, stage, style)
    by_path = {item.path: item for item in items if item.managed}
    tail_set = set(tail)
    head_at = next((i for i, item in enumerate(items) if item.managed and item.path not in tail_set), 0)
    tail_at = next((i for i, item in enumerate(items) if item.managed and item.path in tail_set), len(items))
    if not any(not item.managed for item in items[head_at:tail_at]):
        tail_at = len(items)  # helpers "after the data" come after at least one data entry
    out: list[Item | str] = []
    for i in range(len(items) + 1):
        if i == head_at:
            out += [by_path.get(e, e) for e in head]
        if i == tail_at:
            out += [by_path.get(e, e) for e in tail]
        if i < len(items) and not items[i].managed:
            out.append(items[i])
    return out


def paths(slots: list[Item | str]) -> list[str]:
    return [s.path if isinstance(s, Item) else s for s in slots]


def surviving(stage: Stage, keep: set[str]) -> tuple[list[Item], list[str]]:
    """The items that stay (data entries, and code entries in ``keep``; a repeated one once), with the
    comment lines above a dropped entry moved to the next item that stays (or, last, to the end)."""
    out, carried, seen = [], [], set()
    for item in stage.items:
        if item.managed and (item.path not in keep or item.path in seen):
            carried += [line for line in item.lead if line.strip()]
            continue
        seen.add(item.path)
        out.append(Item(item.body, item.path, item.managed, carried + item.lead))
        carried = []
    return out, carried


def fitting(stage: Stage, keep: set[str]) -> list[Style]:
    """The styles in which the entries that stay are already in order."""
    items, _ = surviving(stage, keep)
    existing = [i.path for i in items]
    present = {i.path for i in items if i.managed}
    return [s for s in STYLES if paths(layout(items, present, stage, s)) == existing]


def majority(votes: list[bool | None], default: bool) -> bool:
    """The value most of the deciding votes (not None) give; ``default`` on a tie."""
    return max((True, False), key=lambda v: (votes.count(v), v == default))


def pipeline_default(fits: list[list[Style]]) -> Style:
    """Each flag as most stages that decide it have it (a stage decides a flag when every style its
    order fits agrees on it); the first study's order where none decides."""
    return Style(*(majority([fit[0][k] if fit and len({s[k] for s in fit}) == 1 else None for fit in fits], default)
                   for k, default in enumerate(DEFAULT)))


def choose(fit: list[Style], default: Style) -> Style:
    """The style the stage's order fits that differs least from the pipeline's; the pipeline's if none fits."""
    return min(fit, key=lambda s: sum(a != b for a, b in zip(s, default))) if fit else default


@dataclass
class Change:
    stage: str
    added: list[str]
    removed: list[str]


def sync(text: str, pipeline: str) -> tuple[str, list[Change], list[str], list[str]]:
    """(the rewritten text, the stages that change, notes on stages left as they are, errors: stages
    that need a hand)."""
    lines = text.splitlines(keepends=True)
    newline = "\r\n" if "\r\n" in text else "\n"
    stages, notes, errors, found = [], [], [], packages()
    for st in stages_of(text, pipeline):
        if st.script is None:
            notes.append(f"stage {st.name}: its cmd is not `python -m scripts.<stage>`; left as it is")
        elif st.problem:
            errors.append(f"stage {st.name}: {st.problem}; left as it is")
        else:
            stages.append((st, *needed(st, found)))
    votes = [declares_folders(st, full) for st, _, full in stages]
    folders = majority(votes, FOLDERS)
    stages = [(st, entries(st, files, full, folders if vote is None else vote))
              for (st, files, full), vote in zip(stages, votes)]
    fits = [fitting(st, want) for st, want in stages]
    default = pipeline_default(fits)
    changes, replaced = [], {}
    for (st, want), fit in zip(stages, fits):
        items, trailing = surviving(st, want)
        block = []
        for slot in layout(items, want, st, choose(fit, default)):
            block += (slot.lead + slot.body) if isinstance(slot, Item) else [f"{st.indent}- {slot}{newline}"]
        block += trailing
        block = [line if line.endswith("\n") else line + newline for line in block]
        if block and st.end == len(lines) and not lines[-1].endswith("\n"):
            block[-1] = block[-1].rstrip("\r\n")
        if block != lines[st.start:st.end]:
            have = {i.path for i in st.items if i.managed}
            changes.append(Change(st.name, sorted(want - have), sorted(have - want)))
            replaced[st.start] = (st.end, block)
    out, i = [], 0
    while i < len(lines):
        if i in replaced:
            end, block = replaced[i]
            out += block
            i = end
        else:
            out.append(lines[i])
            i += 1
    return "".join(out), changes, notes, errors


def describe(change: Change) -> str:
    parts = ([f"adds {', '.join(change.added)}"] if change.added else []) + \
            ([f"removes {', '.join(change.removed)}"] if change.removed else [])
    return f"stage {change.stage}: " + ("; ".join(parts) if parts else "reorders its code entries")


def write_atomically(path: Path, text: str, expected: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename; refuse if ``path`` no longer
    holds ``expected`` (someone edited it while the stages were computed)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        if path.read_bytes().decode("utf-8") != expected:
            raise RuntimeError(f"{path} changed while its stages were computed; nothing written, run again")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pipeline", default="dvc.yaml", help="the pipeline, relative to the repository root "
                    "(dvc.yaml, study2/dvc.yaml or scale/dvc.yaml; default dvc.yaml)")
    ap.add_argument("--check", action="store_true",
                    help="name the stages whose code entries differ and exit 1; write nothing")
    ap.add_argument("--file", type=Path, help="read (and write) this copy of the pipeline instead; its paths "
                    "resolve as the pipeline's do")
    args = ap.parse_args(argv)
    path = args.file or ROOT / args.pipeline
    text = path.read_bytes().decode("utf-8")  # as it is: its line ends too
    new, changes, notes, errors = sync(text, args.pipeline)
    for line in notes + errors:
        print(f"sync_deps: {args.pipeline}: {line}", file=sys.stderr)
    if args.check:
        for change in changes:
            print(f"sync_deps: {args.pipeline}: {describe(change)}")
        if not changes and not errors:
            print(f"sync_deps: {args.pipeline}: every stage declares exactly the code it runs and reads")
        return 1 if changes or errors else 0
    if changes:
        try:
            write_atomically(path, new, text)
        except RuntimeError as e:
            print(f"sync_deps: {e}", file=sys.stderr)
            return 2
    for change in changes:
        print(f"sync_deps: {args.pipeline}: {describe(change)}")
    print(f"sync_deps: {args.pipeline}: " + (f"rewrote {len(changes)} stage(s)" if changes else "nothing to change"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
