"""dvc.yaml declares, for every stage, each ccl/ and scripts/ module its script imports (directly
or not), so editing a module reruns exactly the stages that run its code."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


PACKAGES = ("ccl", "scripts")  # the repository's own code; anything else is an installed package


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


def imported_modules(path: Path, package: str | None = None) -> set[str]:
    """Every module an import statement in ``path`` names, at any depth in the file (lazy imports too),
    with ``from pkg import name`` also naming ``pkg.name`` in case it is a submodule. ``package``: the
    package a relative import starts from (default: the file's folder in the repository)."""
    if package is None:
        package = ".".join(path.relative_to(ROOT).parent.parts)
    names: set[str] = set()
    for node in _executed_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            mod = ".".join([*base, node.module] if node.module else base)
            names.add(mod)
            names.update(f"{mod}.{a.name}" for a in node.names)
    return names


def ccl_closure(script: Path) -> set[Path]:
    """ccl/ and scripts/ files reached from ``script`` through imports, parent packages included."""
    seen: set[Path] = set()
    todo = [script]
    while todo:
        for name in imported_modules(todo.pop()):
            parts = name.split(".")
            for i in range(1, len(parts) + 1):  # importing a.b.c runs a/__init__ and a/b/__init__ too
                f = module_file(".".join(parts[:i]))
                if f is not None and f not in seen:
                    seen.add(f)
                    todo.append(f)
    return seen


PIPELINES = ("dvc.yaml", "study2/dvc.yaml")  # study 2's stages run from the root (wdir ..): the same paths


def stages() -> list[tuple[str, str, list[str]]]:
    """(stage, script, deps) for every stage of both pipelines; a foreach stage's template stands for its items."""
    out = []
    for pipeline in PIPELINES:
        out += _stages(pipeline, "" if pipeline == "dvc.yaml" else "study2:")
    return out


def _stages(pipeline: str, prefix: str) -> list[tuple[str, str, list[str]]]:
    out = []
    for name, st in yaml.safe_load((ROOT / pipeline).read_text())["stages"].items():
        name = prefix + name
        body = st.get("do", st)
        words = body["cmd"].split()
        assert words[:2] == ["python", "-m"] and words[2].startswith("scripts."), body["cmd"]
        script = words[2].replace(".", "/") + ".py"
        out.append((name, script, [d if isinstance(d, str) else next(iter(d)) for d in body["deps"]]))
    return out


def covered(path: Path, deps: list[str]) -> bool:
    rel = path.relative_to(ROOT).as_posix()
    return any(rel == d or rel.startswith(d.rstrip("/") + "/") for d in deps)


@pytest.mark.parametrize("package", PACKAGES)
def test_package_init_runs_no_code(package):
    # Every stage imports ccl/__init__.py and scripts/__init__.py and none lists them: that is safe only
    # while each is a docstring.
    body = ast.parse((ROOT / package / "__init__.py").read_text()).body
    assert len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)


def test_imports_for_annotations_only_are_not_dependencies(tmp_path):
    f = tmp_path / "mod.py"
    f.write_text("from typing import TYPE_CHECKING\nfrom ..records import Task\n"
                 "if TYPE_CHECKING:\n    from .oracle import OracleState\nelse:\n    from .prompt import x\n")
    names = imported_modules(f, "ccl.episode")
    assert "ccl.episode.oracle" not in names and {"ccl.records", "ccl.episode.prompt"} <= names


def test_closure_follows_relative_and_lazy_imports():
    closure = {p.relative_to(ROOT).as_posix() for p in ccl_closure(ROOT / "scripts" / "export_web.py")}
    assert {"ccl/report/site.py", "ccl/report/traces.py", "ccl/artifacts/jsonio.py", "ccl/report/__init__.py"} <= closure
    assert "ccl/train/__init__.py" not in closure  # the site builder never imports training
    tasks = {p.relative_to(ROOT).as_posix() for p in ccl_closure(ROOT / "ccl" / "world" / "tasks" / "__init__.py")}
    assert {"ccl/world/aliases.py", "ccl/world/tasks/select.py"} <= tasks  # `from ..aliases` and `from .select` in a package


STAGES = stages()


@pytest.mark.parametrize("stage, script, deps", STAGES, ids=[s[0] for s in STAGES])
def test_stage_declares_every_module_it_imports(stage, script, deps):
    assert script in deps, f"{stage}: its script {script} is not a dependency"
    missing = sorted(p.relative_to(ROOT).as_posix() for p in ccl_closure(ROOT / script)
                     if p.name != "__init__.py" or p.parent not in (ROOT / "ccl", ROOT / "scripts"))
    missing = [m for m in missing if not covered(ROOT / m, deps)]
    assert not missing, f"dvc.yaml stage {stage} imports but does not declare: {missing}"


def is_resource(path: Path) -> bool:
    """A file under ccl/ that is not code, bytecode or a hidden file (a stray .DS_Store is not one)."""
    rel = path.relative_to(ROOT).parts
    return (rel[0] == "ccl" and path.is_file() and path.suffix not in (".py", ".pyc") and "__pycache__" not in rel
            and not any(part.startswith(".") for part in rel))


def resources() -> dict[str, Path]:
    """The files under ccl/ that code reads rather than imports (templates, the site's scripts), by name."""
    found = [p for p in (ROOT / "ccl").rglob("*") if is_resource(p)]
    names = [p.name for p in found]
    assert len(names) == len(set(names)), "two resources share a name: name-based lookup would be ambiguous"
    return {p.name: p for p in found}


def resources_read(files: set[Path]) -> set[str]:
    """The resources whose file name appears as a string literal in ``files``: a template is opened as
    ``get_template("report.md.j2")``, a site script as ``STATIC / "common.js"`` (through a literal list)."""
    by_name = resources()
    read = set()
    for f in files:
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in by_name:
                read.add(by_name[node.value].relative_to(ROOT).as_posix())
    return read


@pytest.mark.parametrize("stage, script, deps", STAGES, ids=[s[0] for s in STAGES])
def test_stage_declares_exactly_the_resources_it_reads(stage, script, deps):
    """Templates and static files are dependencies too, named one by one: a study-2 template edit must
    not rerun study 1's report, nor the reverse."""
    read = resources_read(ccl_closure(ROOT / script) | {ROOT / script})
    declared = set()
    for d in deps:
        path = ROOT / d
        if d.startswith("ccl/") and path.exists():
            files = [path] if path.is_file() else list(path.rglob("*"))
            declared |= {p.relative_to(ROOT).as_posix() for p in files if is_resource(p)}
    assert declared == read, (f"{stage}: resources read but not declared {sorted(read - declared)}, "
                              f"declared but not read {sorted(declared - read)}")


@pytest.mark.parametrize("stage, script, deps", STAGES, ids=[s[0] for s in STAGES])
def test_stage_declares_no_module_it_does_not_import(stage, script, deps):
    """The other half of exactness: a declared module (or every module of a declared folder) is run by
    the stage, so editing code it never imports does not rerun it."""
    closure = {p.relative_to(ROOT).as_posix() for p in ccl_closure(ROOT / script)} | {script}
    extra = []
    for d in deps:
        if not d.startswith(("ccl/", "scripts/")):
            continue
        path = ROOT / d
        files = [path] if path.is_file() else sorted(path.rglob("*.py"))
        extra += [f.relative_to(ROOT).as_posix() for f in files  # resources: the test above
                  if not is_resource(f) and f.relative_to(ROOT).as_posix() not in closure]
    assert not extra, f"dvc.yaml stage {stage} declares modules it never imports: {extra}"


JUDGING = {"ccl/judge/validate.py", "ccl/judge/answers.py", "ccl/judge/task_facts.py", "ccl/judge/matching.py", "ccl/judge/judging.py",
           "ccl/data/acceptance.py"}


@pytest.mark.parametrize("stage", ["distill", "train", "evaluate", "evaluate_run"])
def test_generation_and_training_never_depend_on_the_validator(stage):
    """A validator change re-judges stored transcripts; it must not regenerate or retrain."""
    script, deps = next((s, d) for name, s, d in STAGES if name == stage)
    closure = {p.relative_to(ROOT).as_posix() for p in ccl_closure(ROOT / script)}
    assert not closure & JUDGING, f"{stage} imports {sorted(closure & JUDGING)}"
    assert not set(deps) & JUDGING


@pytest.mark.parametrize("stage", ["judge", "judge_run", "accept_teacher", "distill_pass2"])
def test_judging_stages_depend_on_the_validator(stage):
    _, deps = next((s, d) for name, s, d in STAGES if name == stage)
    validator = ("ccl/judge/validate.py", "ccl/judge/answers.py", "ccl/judge/task_facts.py", "ccl/judge/matching.py")
    assert all(covered(ROOT / f, deps) for f in validator)


def test_data_means_the_data_root_in_every_stage_script():
    """--data is data/v1 everywhere (tasks, sft, teacher and variants are folders inside it): it is
    declared once, in scripts/cli.py, and every stage script that reads it takes it from there."""
    from scripts.cli import stage_parser
    from scripts.layout import DATA
    from scripts.layout import ROOT as LAYOUT_ROOT

    assert DATA == LAYOUT_ROOT / "data" / "v1"
    assert stage_parser(None).parse_args([]).data == DATA
    assert not hasattr(stage_parser(None, data=False).parse_args([]), "data")
    readers = 0
    for _, script, _ in STAGES:
        text = (ROOT / script).read_text()
        assert '"--data"' not in text, f"{script} declares --data itself"
        if "args.data" in text:
            readers += 1
            assert "stage_parser(__doc__" in text and "data=False" not in text, script
    assert readers >= 6  # build_sft, distill, distill_pass2, accept_teacher, train, evaluate, judge


def test_training_depends_on_no_episode_code_and_no_report():
    """Retraining every adapter costs hours on the paper profile: a change to the validator, the runtime
    and its tools, the prompt's catalogue rendering, the policies or the report must not trigger it."""
    closure = {p.relative_to(ROOT).as_posix() for p in ccl_closure(ROOT / "scripts" / "train.py")}
    forbidden = {"ccl/judge/validate.py", "ccl/episode/runtime.py", "ccl/world/tools.py", "ccl/world/toolkit.py", "ccl/world/state.py",
                 "ccl/world/catalogue.py", "ccl/episode/prompt.py", "ccl/episode/oracle.py", "ccl/episode/rollout.py"}
    assert not closure & forbidden, sorted(closure & forbidden)
    assert not any(p.startswith(("ccl/report/", "ccl/policy/", "ccl/world/tasks/")) for p in closure), sorted(closure)
