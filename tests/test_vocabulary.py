"""The study's vocabulary is defined once (ccl/vocabulary.py) and everything else derives from it."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from ccl import vocabulary as V
from ccl.config import ConfigError, load_params

ROOT = Path(__file__).resolve().parents[1]


def test_the_run_matrix_is_the_write_ups():
    # four arms x three seeds, then the four ablations with seed 0: 16 runs
    assert [r.name for r in V.WRITEUP_RUNS] == [
        "B_s0", "B_s1", "B_s2", "C_s0", "C_s1", "C_s2", "Dmix_s0", "Dmix_s1", "Dmix_s2",
        "Dseq_s0", "Dseq_s1", "Dseq_s2", "C_matched_s0", "C_25_s0", "C_50_s0", "C_full_s0"]
    # a profile may also train C_matched with the arms' other seeds (primary contrast B vs C_matched)
    assert list(V.RUNS) == [r.name for r in V.WRITEUP_RUNS] + ["C_matched_s1", "C_matched_s2"]
    assert V.run("Dseq_s2") == V.Run("Dseq", 2) and V.run("Dseq_s2").name == "Dseq_s2"
    assert set(V.MAIN_VARIANTS) | set(V.ABLATIONS) == set(V.VARIANTS)
    with pytest.raises(ValueError, match=r"unknown run 'E_s0'; valid runs: B_s0, B_s1"):
        V.run("E_s0")


def test_run_names_parse_back_to_variant_and_seed():
    assert all(V.parse_run_name(name) == (r.variant, r.seed) for name, r in V.RUNS.items())
    assert V.parse_run_name("A_base") == ("A_base", None) and V.parse_run_name("C_s") == ("C_s", None)


def test_comparisons_are_the_write_ups_21_in_order():
    assert len(V.COMPARISONS) == 21 and len(set(V.COMPARISONS)) == 21
    assert V.COMPARISONS[0] == ("A_fewshot", "A_base") and V.COMPARISONS[-1] == ("C_matched", "B")
    assert {c for pair in V.COMPARISONS for c in pair} == set(V.CONFIG_ORDER) - set(V.LEARNED)
    # the learning arms are compared in a family of their own, each against C and the base student
    assert {a for a, _ in V.LEARNED_COMPARISONS} == set(V.LEARNED) and not set(V.LEARNED_COMPARISONS) & set(V.COMPARISONS)


def test_learned_runs_are_named_by_arm_and_seed():
    assert V.training_run("C_dagger_s0") == V.Run("C_dagger", 0)
    assert V.training_run("C_dagger_i1_s0") == V.Run("C_dagger_i1", 0)
    assert V.training_run("B_s1") == V.RUNS["B_s1"]
    for bad in ("C_dagger", "C_dagger_i0_s0", "D_err_s0", "C_err_sx"):
        with pytest.raises(ValueError, match="unknown"):
            V.training_run(bad)


def test_params_runs_and_dvc_baselines_come_from_the_vocabulary():
    params = load_params(ROOT / "params.yaml")
    assert set(params["runs"]) <= set(V.RUNS)
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    assert stages["evaluate"]["foreach"] == list(V.BASELINES)
    assert stages["train"]["foreach"] == stages["evaluate_run"]["foreach"] == stages["judge_run"]["foreach"] == "${runs}"


def test_an_unknown_run_in_params_is_refused_naming_the_valid_runs(tmp_path):
    p = tmp_path / "params.yaml"
    p.write_text("profile: smoke\nruns: [B_s0, E_s0]\n")
    with pytest.raises(ConfigError, match=r"params.yaml: runs: unknown run\(s\) \['E_s0'\]; valid runs: B_s0"):
        load_params(p)
    p.write_text("profile: smoke\nruns: [B_s0, B_s0]\n")
    with pytest.raises(ConfigError, match="listed twice"):
        load_params(p)


NAMES = [*V.VARIANTS, *V.BASELINES[:2]]  # the teacher and the oracle are ordinary words in prose and code
OTHER_MEANINGS = {("ccl/episode/prompt_head.py", "B")}  # the worked example's garden zone "B", not configuration B


def string_constants(path: Path) -> set[str]:
    return {n.value for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.Constant) and isinstance(n.value, str)}


@pytest.mark.parametrize("name", NAMES)
def test_each_arm_and_variant_name_is_written_as_a_literal_in_one_module_only(name):
    """Outside ccl/vocabulary.py no library module or script spells an arm or variant name as a string
    constant (tests, docs, params.yaml's run selection and generated files aside)."""
    found = sorted(rel for folder in ("ccl", "scripts") for p in (ROOT / folder).rglob("*.py")
                   if name in string_constants(p) and ((rel := p.relative_to(ROOT).as_posix()), name) not in OTHER_MEANINGS)
    assert found == ["ccl/vocabulary.py"], found


def test_report_templates_take_arm_and_variant_names_from_the_vocabulary():
    """A template that spelled a name (``P.A_base``) would break the report with an undefined value
    after a rename instead of failing here; prose and lookups use ``V`` (ccl.report.render.NAMES)."""
    import re

    from ccl.report.render import NAMES

    assert set(NAMES.values()) >= {*V.MAIN_VARIANTS, *V.BASELINES}
    distinctive = [n for n in NAMES.values() if len(n) > 1 and n not in ("teacher", "oracle")]  # not plain words
    for path in (ROOT / "ccl" / "report" / "templates").glob("*.j2"):
        text = path.read_text(encoding="utf-8")
        found = sorted({n for n in distinctive if re.search(rf"\b{re.escape(n)}\b", text)})
        spelled = re.findall(r"\b(?:P|W|R)\.(?:teacher|oracle)\b|\bconfiguration [BC]\b|\b[BC] minus [BC]\b", text)
        assert not found and not spelled, (path.name, found, spelled)
