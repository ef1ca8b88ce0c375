"""dvc.yaml declares, for every stage, each params.yaml section the stage reads, so changing a section
reruns every stage whose output it can change.

Code reads a section through ``ccl.config.stage_config(values, "<section>", ...)`` or
``stage_with_models(params, "<section>", ...)`` (which also reads ``models``). The check collects the
sections named there by a literal in every module the stage's script imports, directly or not
(``ccl/config.py``, which defines the readers, aside). A section named by a variable or read with
``values.get(...)`` is not seen, so what is collected is a lower bound. A module imported only for a
constant or a class still counts as reading what its functions read: ``NOT_READ`` lists those imports,
each with what the stage takes from the module, and a listed import that stops being flagged fails too.
Study 2's stages must name their sections under ``study2/params.yaml`` (a bare name in a pipeline with
``wdir: ..`` would mean the root's params.yaml).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml
from test_dvc_deps import PIPELINES, ROOT, ccl_closure

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


# (stage, section): a section the scan sees in an imported module whose reading function the stage never
# calls; the reason names what the stage takes from that module
NOT_READ = {
    ("err_data", "models"): "imports VAL_POOL from ccl/stages/val_replay.py",
    ("err_compare", "models"): "imports VAL_POOL from ccl/stages/val_replay.py",
    ("err_compare", "err"): "imports graded() from ccl/stages/err_data.py and VAL_POOL from val_replay.py",
    ("bfcl", "evaluate"): "imports who_plays() from ccl/stages/evaluate.py",
    ("bfcl_run", "evaluate"): "imports who_plays() from ccl/stages/evaluate.py",
    ("study2:rebuild_c", "models"): "imports DistillConfig from ccl/data/teacher.py",
    ("accept_teacher_ruler2", "accept_teacher"): "its cmd names --ruler ruler2, which bypasses the section",
}
CONFIG = ROOT / "ccl" / "config.py"  # defines the readers: its own calls take the section as a variable


def seen_reads(script: Path) -> set[str]:
    """Sections named by a literal in the script and every ccl/ and scripts/ module it imports."""
    files = ({script} | ccl_closure(script)) - {CONFIG}
    return set().union(*(sections_read(f.read_text(encoding="utf-8")) for f in files))


def declared_params(body: dict) -> dict[str, set[str]]:
    """params file -> the top-level sections a stage's ``params`` list names there (a bare name: the
    pipeline's default file, ``params.yaml`` relative to the stage's wdir)."""
    names: dict[str, set[str]] = {}
    for entry in body.get("params", []):
        if isinstance(entry, str):
            names.setdefault("params.yaml", set()).add(entry.split(".")[0])
        else:
            for file, keys in entry.items():
                names.setdefault(file, set()).update(k.split(".")[0] for k in keys)
    return names


def param_stages() -> list[tuple[str, Path, str, dict[str, set[str]]]]:
    """(stage, script, the params file its command reads, declared sections by file) for every pipeline: the
    file its ``--params`` names (the learning arms' own files in scale/arms/), else its pipeline's own."""
    out = []
    for pipeline in PIPELINES:
        folder = pipeline.split("/")[0]
        prefix, own = ("", "params.yaml") if pipeline == "dvc.yaml" else (f"{folder}:", f"{folder}/params.yaml")
        for name, st in yaml.safe_load((ROOT / pipeline).read_text())["stages"].items():
            body = st.get("do", st)
            words = body["cmd"].split()
            module = words[2]
            reads = words[words.index("--params") + 1] if "--params" in words else own
            out.append((prefix + name, ROOT / (module.replace(".", "/") + ".py"), reads, declared_params(body)))
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
    assert declared_params(body) == {"params.yaml": {"profile", "dagger"}, "study2/params.yaml": {"models", "distill"}}


@pytest.mark.parametrize("stage, script, own, declared", STAGES, ids=[s[0] for s in STAGES])
def test_stage_declares_every_params_section_it_reads(stage, script, own, declared):
    assert set(declared) <= {own}, f"dvc stage {stage} names params outside the file its command reads, {own}: {sorted(declared)}"
    read = {section for section in seen_reads(script) if (stage, section) not in NOT_READ}
    missing = sorted(read - declared.get(own, set()))
    assert not missing, f"dvc stage {stage} reads params section(s) {missing} but does not declare them"


@pytest.mark.parametrize("stage, section", sorted(NOT_READ))
def test_each_listed_import_is_still_flagged_and_still_undeclared(stage, section):
    script, own, declared = next((sc, o, d) for n, sc, o, d in STAGES if n == stage)
    assert section in seen_reads(script) and section not in declared.get(own, set()), \
        f"NOT_READ lists ({stage}, {section}) but it is no longer needed: remove it"
