"""Paths are chosen by the scripts (scripts/layout.py) and the command line, never inside the library,
and nothing patches the import path: scripts run as modules (``python -m scripts.<stage>``)."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the repository's top-level entries a library module could build a path from
TOP = ("data", "results", "runs", "logs", "archive", "web", "configs", "models", "params.yaml", "dvc.yaml")
# The report reads one repository-shaped root the script passes (--root); its artifact names, relative
# to that root, are declared in one module and shown on the pages as each number's source.
REPORT_LAYOUT = "ccl/report/artifacts.py"
# folders inside the site being written (web/public/data/...), not the repository's
SITE_INTERNAL = ("data/traces", "data/replay")
# bfcl-eval creates its scratch folders at import under $BFCL_PROJECT_ROOT (default: inside
# site-packages); the one module that imports it sets that variable to a temporary folder first. It
# writes the environment for the package, and locates nothing in the repository.
SETS_BFCL_SCRATCH = "ccl/external/bfcl_lib.py"


def library_files() -> list[Path]:
    return sorted((ROOT / "ccl").rglob("*.py"))


def repository_paths(path: Path) -> list[str]:
    """Where ``path`` locates the repository or names a path in it, as 'line: what'."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        where = f"{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "getcwd", "cwd", "chdir"):
            found.append(f"{where}: reads the environment or the working directory ({node.attr})")
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
            found.append(f"{where}: climbs from a file to its parents")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant) \
                and node.right.value in TOP:
            found.append(f"{where}: joins {node.right.value!r}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "/" in node.value \
                and node.value.split("/")[0] in TOP and not node.value.startswith(SITE_INTERNAL):
            found.append(f"{where}: names {node.value!r}")
    return found


def test_the_library_never_locates_the_repository_or_builds_a_path_in_it():
    problems = {p.relative_to(ROOT).as_posix(): found for p in library_files()
                if p.relative_to(ROOT).as_posix() != REPORT_LAYOUT and (found := repository_paths(p))}
    scratch = problems.pop(SETS_BFCL_SCRATCH, [])
    assert all(f.endswith("(environ)") for f in scratch), scratch
    assert not problems, problems


def test_the_check_catches_what_it_is_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('import os\nfrom pathlib import Path\nROOT = Path(__file__).resolve().parents[2]\n'
                   'CACHE = os.environ.get("X", ROOT / "models")\nP = "data/v1/tasks"\nS = "data/traces/x.js"\n')
    found = repository_paths(bad)
    assert sorted(f.split(":")[0] for f in found) == ["3", "4", "4", "5"], found


def test_no_script_or_library_module_modifies_the_import_path():
    offenders = [p.relative_to(ROOT).as_posix() for folder in ("scripts", "ccl") for p in (ROOT / folder).rglob("*.py")
                 if "sys.path" in p.read_text(encoding="utf-8")]
    assert not offenders
