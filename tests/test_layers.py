"""The package's layers, written once: a module may import its own layer and the layers below it,
never one above, and no chain of imports leads back to where it started. Every import counts here,
lazy ones and those under ``if TYPE_CHECKING:`` too (an annotation is still knowledge of a layer).

Also the size rules: no file in ccl/ over 500 lines and no function over 60, except the named
table-like ones."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Lowest first. A layer is a subpackage of ccl/ or, for the base, the dependency-free leaves at the top.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("ccl", "ccl.records", "ccl.vocabulary", "ccl.errors", "ccl.config", "ccl.devices", "ccl.resources")),
    ("stats", ("ccl.stats",)),
    ("artifacts", ("ccl.artifacts",)),
    ("models", ("ccl.models",)),
    ("world", ("ccl.world",)),
    ("episode", ("ccl.episode",)),
    ("policy", ("ccl.policy",)),
    ("judge", ("ccl.judge",)),
    ("replay", ("ccl.replay",)),
    ("data", ("ccl.data",)),
    ("train", ("ccl.train",)),
    ("learn", ("ccl.learn",)),
    ("analysis", ("ccl.analysis",)),
    ("report", ("ccl.report",)),
    ("serve", ("ccl.serve",)),
    ("external", ("ccl.external",)),
    ("stages", ("ccl.stages",)),
)
MAX_FILE_LINES, MAX_FUNCTION_LINES = 500, 60
# Functions allowed past the limit because they are tables or generated text, not logic.
LONG_FUNCTIONS: frozenset[str] = frozenset({
    "ccl.models.adapter_card.card",  # the adapter's Markdown model card: one f-string template, no branches
})


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted((ROOT / "ccl").rglob("*.py"))}


def layer_of(module: str) -> int:
    """The rank of ``module``'s layer: the longest layer prefix that names it."""
    best = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            below = prefix != "ccl" and module.startswith(prefix + ".")  # the base's entries are single modules
            if (module == prefix or below) and (best is None or len(prefix) > best[1]):
                best = (rank, len(prefix))
    if best is None:
        raise AssertionError(f"{module}: in no layer; add its package to LAYERS")
    return best[0]


def imported_names(path: Path, package: str) -> set[str]:
    """Every module name an import statement in ``path`` names (``package``: where a relative import
    starts); ``from pkg import name`` names pkg.name when that is a module of ccl, else pkg."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            subs = {f"{target}.{a.name}" for a in node.names} & set(MODULES)
            found.update(subs or {target})
            if subs and len(subs) < len(node.names):  # names that are not submodules come from the package
                found.add(target)
    return found


def package_of(module: str) -> str:
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def imports(module: str) -> set[str]:
    """The ccl modules ``module`` imports."""
    return {m for m in imported_names(MODULES[module], package_of(module)) if m in MODULES and m != module}


GRAPH = {m: imports(m) for m in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_sits_in_a_layer():
    for m in MODULES:
        layer_of(m)


def test_no_module_imports_a_layer_above_its_own():
    upward = [f"{m} ({LAYERS[layer_of(m)][0]}) imports {t} ({LAYERS[layer_of(t)][0]})"
              for m, targets in GRAPH.items() for t in sorted(targets) if layer_of(t) > layer_of(m)]
    assert not upward, "\n".join(upward)


def test_there_is_no_import_circle():
    assert cycles(GRAPH) == []


def test_every_import_of_the_package_resolves_and_none_reaches_the_scripts():
    """An import of a ccl module that does not exist (a lazy one that no import-time run reaches) or of
    scripts/ (the entry points sit above the library) is an error of its own."""
    unresolved, scripts = [], []
    for m, path in MODULES.items():
        for name in imported_names(path, package_of(m)):
            if name.split(".")[0] == "scripts":
                scripts.append(f"{m} imports {name}")
            elif name.split(".")[0] == "ccl" and name not in MODULES:
                unresolved.append(f"{m} imports {name}")
    assert not unresolved and not scripts, unresolved + scripts


def test_import_names_are_read_as_python_resolves_them(tmp_path):
    f = tmp_path / "mod.py"
    f.write_text("from ..records import Task\nfrom . import oracle, rollout\nfrom ..stats import holm, paired\n"
                 "from .runtime import Episode\nimport numpy\n\ndef later():\n    from ..judge import validate\n")
    names = imported_names(f, "ccl.episode")
    assert {"ccl.records", "ccl.episode.oracle", "ccl.episode.rollout", "ccl.stats", "ccl.stats.paired",
            "ccl.episode.runtime", "ccl.judge.validate", "numpy"} == names
    # holm is a function of ccl.stats, paired a submodule: both edges are kept


def test_the_checks_catch_what_they_are_for():
    # a circle of three and a self-contained pair, by hand
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": set()}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"c"}}) == [["a", "b"]]
    assert layer_of("ccl.world.tasks.base") < layer_of("ccl.episode.runtime") < layer_of("ccl.judge.validate")
    assert layer_of("ccl.records") == 0 and layer_of("ccl.stages.train") == len(LAYERS) - 1
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("ccl.nowhere")


def test_each_subpackage_says_what_it_owns_and_what_it_may_import():
    for m, path in MODULES.items():
        if path.name == "__init__.py" and m.count(".") == 1:
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            assert len(doc) > 40, f"{m}: its __init__ has no docstring saying what the package owns"


def test_no_file_over_500_lines_and_no_function_over_60():
    long_files = {m: n for m, p in MODULES.items()
                  if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_FILE_LINES}
    long_functions = []
    for m, p in MODULES.items():
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES and f"{m}.{node.name}" not in LONG_FUNCTIONS:
                    long_functions.append(f"{m}.{node.name}: {lines} lines")
    assert not long_files, long_files
    assert not long_functions, long_functions
