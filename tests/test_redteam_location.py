"""The red team's cases live outside the library (issue 57): no module of ``ccl`` imports them, and the
judge package holds no red-team module, so a ruler cannot read the attacks it is measured by."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REDTEAM = ROOT / "experiments" / "ruler_farming" / "redteam"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_library_module_imports_the_red_team() -> None:
    offenders = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "ccl").rglob("*.py"))
                 if any(n.startswith("experiments") or "redteam" in n for n in _imports(p))]
    assert offenders == []


def test_the_judge_package_holds_no_red_team_module() -> None:
    assert not [p.name for p in (ROOT / "ccl" / "judge").rglob("*.py") if "redteam" in p.name]
    assert (REDTEAM / "cases.py").is_file() and (REDTEAM / "holdout.py").is_file()


def test_no_stage_command_reads_the_red_team() -> None:
    for pipeline in (ROOT / "dvc.yaml", ROOT / "study2" / "dvc.yaml"):
        assert "redteam" not in pipeline.read_text(encoding="utf-8"), pipeline
