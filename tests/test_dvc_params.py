"""dvc.yaml declares, for every stage, each params.yaml section the stage reads, so changing a section
reruns every stage whose output it can change.

A stage reads its sections through ``ccl.config.stage_config(values, "<section>", ...)`` or
``stage_with_models(params, "<section>", ...)`` (which also reads ``models``), called from its script or
from the ``ccl.stages`` modules its script imports. Sections named there by a literal are collected from
the source; a section named by a variable is not seen, so this is a lower bound on what a stage reads
(the check is that nothing seen is undeclared)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml
from test_dvc_deps import PIPELINES, ROOT, imported_modules, module_file

READERS = {"stage_config": (), "stage_with_models": ("models",)}  # function -> sections it reads besides its own


def sections_read(source: str) -> set[str]:
    """The sections named by a literal as the second argument of a reader call in ``source``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name in READERS and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
            found |= {node.args[1].value, *READERS[name]}
    return found


def stage_files(script: Path) -> list[Path]:
    """The script and the ccl.stages modules it imports (where a stage's plan reads its configuration)."""
    stage_modules = (module_file(m) for m in imported_modules(script) if m.startswith("ccl.stages."))
    return [script, *sorted({f for f in stage_modules if f is not None and f.name != "__init__.py"})]


def declared_params(body: dict) -> set[str]:
    """The top-level sections a stage's ``params`` list names (``file: [keys]`` entries included)."""
    names: set[str] = set()
    for entry in body.get("params", []):
        if isinstance(entry, str):
            names.add(entry.split(".")[0])
        else:
            names.update(k.split(".")[0] for keys in entry.values() for k in keys)
    return names


def param_stages() -> list[tuple[str, Path, set[str]]]:
    out = []
    for pipeline in PIPELINES:
        prefix = "" if pipeline == "dvc.yaml" else "study2:"
        for name, st in yaml.safe_load((ROOT / pipeline).read_text())["stages"].items():
            body = st.get("do", st)
            module = body["cmd"].split()[2]
            out.append((prefix + name, ROOT / (module.replace(".", "/") + ".py"), declared_params(body)))
    return out


STAGES = param_stages()


def test_the_scan_sees_literal_sections_and_the_models_section_of_stage_with_models():
    src = ('cfg, p = stage_config(values, "dagger", DaggerConfig, profile)\n'
           'x = config.stage_config(values, "distill", DistillConfig)\n'
           'a, m, p = stage_with_models(params, "evaluate", EvaluateConfig)\n'
           'stage_config(values, STAGE, Cfg)\n')  # a variable: not seen
    assert sections_read(src) == {"dagger", "distill", "evaluate", "models"}


def test_declared_params_reads_both_forms():
    body = {"params": ["profile", "dagger.beta", {"study2/params.yaml": ["models", "distill"]}]}
    assert declared_params(body) == {"profile", "dagger", "models", "distill"}


@pytest.mark.parametrize("stage, script, declared", STAGES, ids=[s[0] for s in STAGES])
def test_stage_declares_every_params_section_it_reads(stage, script, declared):
    read = set().union(*(sections_read(f.read_text(encoding="utf-8")) for f in stage_files(script)))
    missing = sorted(read - declared)
    assert not missing, f"dvc stage {stage} reads params section(s) {missing} but does not declare them"
