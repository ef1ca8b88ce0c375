"""What a pipeline stage runs and reads: the ``ccl/`` and ``scripts/`` modules its script imports
(directly or not) and the resource files (templates, the site's scripts) that code names.

One mechanism for the two users: ``tests/test_dvc_deps.py``, which checks that every stage of
``dvc.yaml`` and ``study2/dvc.yaml`` declares exactly these, and ``scripts/sync_deps.py``, which
rewrites the declarations. No stage imports this module (it is maintenance code, not a stage's), and
it imports only ``scripts/layout.py``.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

import yaml

from .layout import ROOT

PACKAGES = ("ccl", "scripts")  # the repository's own code; anything else is an installed package
PIPELINES = ("dvc.yaml", "study2/dvc.yaml", "scale/dvc.yaml", "study3/dvc.yaml")  # the others' stages run from the root (wdir ..): the same paths
# Imported by every stage and listed by none: safe only while each is a docstring (tests/test_dvc_deps.py).
PACKAGE_INITS = tuple(ROOT / package / "__init__.py" for package in PACKAGES)


def module_file(name: str) -> Path | None:
    """The file of module ``ccl.a.b`` or ``scripts.x`` (a module or a package's __init__), or None
    outside the repository's packages."""
    if name.split(".")[0] not in PACKAGES:
        return None
    base = ROOT.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _type_checking_only(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:``: imports for annotations, never executed, so never a dependency."""
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (getattr(test, "id", None) == "TYPE_CHECKING"
                                         or getattr(test, "attr", None) == "TYPE_CHECKING")


def _executed_nodes(tree: ast.AST):
    """Every node of ``tree`` except those under an ``if TYPE_CHECKING:`` block (its ``else`` runs)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        if _type_checking_only(node):
            todo.extend(node.orelse)
        else:
            todo.extend(ast.iter_child_nodes(node))


def _version(path: Path) -> tuple[int, int]:
    """What the caches below key a file's version by: its modification time and size."""
    stat = path.stat()
    return stat.st_mtime_ns, stat.st_size


def imported_modules(path: Path, package: str | None = None) -> set[str]:
    """Every module an import statement in ``path`` names, at any depth in the file (lazy imports too),
    with ``from pkg import name`` also naming ``pkg.name`` in case it is a submodule. ``package``: the
    package a relative import starts from (default: the file's folder in the repository)."""
    if package is None:
        package = ".".join(path.relative_to(ROOT).parent.parts)
    return set(_imported_modules(path, package, _version(path)))


@lru_cache(maxsize=None)
def _imported_modules(path: Path, package: str, version: tuple[int, int]) -> frozenset[str]:
    """imported_modules, once per version of the file (a stage's closure shares most of its files)."""
    names: set[str] = set()
    for node in _executed_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            mod = ".".join([*base, node.module] if node.module else base)
            names.add(mod)
            names.update(f"{mod}.{a.name}" for a in node.names)
    return frozenset(names)


def ccl_closure(script: Path) -> set[Path]:
    """ccl/ and scripts/ files reached from ``script`` through imports, parent packages included."""
    seen: set[Path] = set()
    files: dict[str, Path | None] = {}  # module -> its file, looked up once per closure
    todo = [script]
    while todo:
        for name in imported_modules(todo.pop()):
            parts = name.split(".")
            for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__ too
                module = ".".join(parts[:i])
                if module not in files:
                    files[module] = module_file(module)
                f = files[module]
                if f is not None and f not in seen:
                    seen.add(f)
                    todo.append(f)
    return seen


def is_resource(path: Path) -> bool:
    """A file under ccl/ that is not code, bytecode or a hidden file (a stray .DS_Store is not one)."""
    rel = path.relative_to(ROOT).parts
    return (rel[0] == "ccl" and path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in rel
            and not any(part.startswith(".") for part in rel))


def resources() -> dict[str, Path]:
    """The files under ccl/ that code reads rather than imports (templates, the site's scripts), by name."""
    found = [p for p in (ROOT / "ccl").rglob("*") if is_resource(p)]
    names = [p.name for p in found]
    if len(names) != len(set(names)):
        raise ValueError("two resources share a name: name-based lookup would be ambiguous")
    return {p.name: p for p in found}


def resources_read(files: set[Path]) -> set[str]:
    """The resources whose file name appears as a string literal in ``files``: a template is opened as
    ``get_template("report.md.j2")``, a site script as ``STATIC / "common.js"`` (through a literal list)."""
    by_name = resources()
    return {by_name[s].relative_to(ROOT).as_posix() for f in files for s in _strings(f, _version(f)) if s in by_name}


@lru_cache(maxsize=None)
def _strings(path: Path, version: tuple[int, int]) -> frozenset[str]:
    """The string literals of ``path``, once per version of the file."""
    return frozenset(node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                     if isinstance(node, ast.Constant) and isinstance(node.value, str))


def covered(path: Path, deps: list[str]) -> bool:
    """Whether ``path`` is one of ``deps`` or inside a folder among them (paths relative to the root)."""
    rel = path.relative_to(ROOT).as_posix()
    return any(rel == d or rel.startswith(d.rstrip("/") + "/") for d in deps)


def stage_script(cmd: str) -> str | None:
    """``scripts/x.py`` for a command ``python -m scripts.x ...``; None for any other command."""
    words = cmd.split()
    if words[:2] != ["python", "-m"] or len(words) < 3 or not words[2].startswith("scripts."):
        return None
    return words[2].replace(".", "/") + ".py"


def code_needed(script: str) -> tuple[set[str], set[str]]:
    """(modules, resources) a stage whose script is ``script`` (relative to the root) must declare:
    the script and every ccl/ and scripts/ module it imports, directly or not (the two package
    ``__init__``s aside), and the resources that code names; paths relative to the root."""
    path = ROOT / script
    closure = ccl_closure(path)
    modules = {p.relative_to(ROOT).as_posix() for p in closure if p not in PACKAGE_INITS} | {script}
    return modules, resources_read(closure | {path})


def stages(pipelines: tuple[str, ...] = PIPELINES) -> list[tuple[str, str, list[str]]]:
    """(stage, script, deps) for every stage of the pipelines (study 2's named ``study2:<stage>``); a
    foreach stage's template (its ``do``) stands for its items."""
    out = []
    for pipeline in pipelines:
        prefix = "" if pipeline == "dvc.yaml" else pipeline.split("/")[0] + ":"
        for name, st in yaml.safe_load((ROOT / pipeline).read_text())["stages"].items():
            body = st.get("do", st)
            script = stage_script(body["cmd"])
            if script is None:
                raise ValueError(f"{pipeline}: stage {name} does not run `python -m scripts.<stage>`: {body['cmd']}")
            out.append((prefix + name, script, [d if isinstance(d, str) else next(iter(d)) for d in body["deps"]]))
    return out
