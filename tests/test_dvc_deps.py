"""dvc.yaml declares, for every stage, each ccl/ and scripts/ module its script imports (directly
or not), so editing a module reruns exactly the stages that run its code."""
from __future__ import annotations

import ast

import pytest

from scripts.dvc_deps import (PACKAGES, PIPELINES, ROOT, ccl_closure, covered, imported_modules,  # noqa: F401
                              is_resource, resources_read, stages)

# The import closure and the resource scan live in scripts/dvc_deps.py, which scripts/sync_deps.py
# uses to rewrite the declarations these tests check (PIPELINES, ROOT and ccl_closure are also
# imported from here by tests/test_dvc_params.py).


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
