"""Study 3's pipeline (docs/preregistration-3.md) end to end on the smoke profile: every command of
study3/dvc.yaml, and of the cpu-scale stages upstream of it, in pipeline order, in a scratch root (the same
scripts, flags and relative paths as the real run)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STUDY3 = "study3/dvc.yaml"
# the files of the repository the commands read, copied into the scratch root (everything else is built there)
COPIED = ("scale/params.yaml", "scale/arms", "study3/params.yaml", "study3/arms", "study3/design.yaml",
          "study3/deviations.yaml", "data/study2/tasks", "docs/preregistration-3.md")
UPSTREAM = {"dvc.yaml:build_datasets", "dvc.yaml:bfcl_sample", "study2/dvc.yaml:fresh_pool",
            *(f"scale/dvc.yaml:{n}" for n in ("build_c", "train@C_s0", "arm_tasks", "cplus_data", "dpo_rollout",
                                              "dpo_pairs", "dpo_train", "grpo_train"))}
NO_PROFILE = ("bfcl_score", "report")  # scripts that take no --profile (they read what the stages before wrote)


def pipeline_order() -> list:
    """Study 3's stages and the stages outside it they need (never the first study's teacher), dependencies first."""
    import networkx as nx
    from dvc.repo import Repo

    repo = Repo(str(ROOT))
    graph = repo.index.graph
    mine = [s for s in graph.nodes if s.path_in_repo == STUDY3]
    needed = set(mine).union(*(nx.descendants(graph, s) for s in mine))
    return [s for s in nx.topological_sort(graph.reverse()) if s in needed]


@pytest.mark.slow
def test_study3_pipeline_commands_run_on_smoke_sizes(tmp_path):
    for rel in COPIED:
        src, dst = ROOT / rel, tmp_path / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = lambda cmd: subprocess.run(cmd, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True)  # noqa: E731
    py = sys.executable
    for cmd in (f"{py} -m scripts.build_datasets --profile smoke --out data/v1",
                f"{py} -m scripts.bfcl_sample --params study3/params.yaml --profile smoke --out data/bfcl/sample.json",
                "mkdir -p results/study3 && echo '{\"recorded\": false}' > results/study3/stage_times.json"):
        done = run(cmd)
        assert done.returncode == 0, f"{cmd}\n{done.stderr[-2000:]}"
    # the first study's build_datasets and bfcl_sample, and study 2's fresh_pool, ran above or were copied
    order = pipeline_order()
    # what study 3 needs from outside its pipeline: never a stage of the first study past its tasks and BFCL
    # sample, never one that trains on the teacher's data
    outside = {f"{s.path_in_repo}:{s.name}" for s in order if s.path_in_repo != STUDY3}
    assert outside == UPSTREAM, sorted(outside ^ UPSTREAM)
    stages = [s for s in order if s.path_in_repo in ("scale/dvc.yaml", STUDY3)]
    names = [f"{s.path_in_repo}:{s.name}" for s in stages]
    for st, name in zip(stages, names):
        profile = "" if st.path_in_repo == STUDY3 and st.name in NO_PROFILE else " --profile smoke"
        done = run(st.cmd.replace("python -m", f"{py} -m", 1) + profile)
        assert done.returncode == 0, f"{name}: {st.cmd}\n{done.stdout[-1500:]}\n{done.stderr[-3000:]}"
    check_outputs(tmp_path)


def check_outputs(root: Path) -> None:
    summary = json.loads((root / "results" / "study3" / "summary.json").read_text())
    assert set(summary["configs"]) == {"C", "C_plus", "C_dagger", "C_grpo_sparse", "C_dpo"}
    assert [len(summary["configs"][c]) for c in ("C", "C_plus", "C_dagger", "C_grpo_sparse", "C_dpo")] == [1, 2, 2, 2, 1]
    primary = summary["families"]["primary"]
    assert primary["complete"] and [r["contrast"] for r in primary["rows"]] == ["C_dagger_vs_C_plus", "C_grpo_sparse_vs_C_plus"]
    assert all(r["seeds_a"] == 2 and r["n"] == 8 for r in primary["rows"])  # 4 tasks of each split on smoke
    assert summary["oracle"]["evaluated"] and summary["oracle"]["ruler3"] == []
    assert len(summary["seed_matched"]) == 4
    minutes = summary["minutes"]
    assert all(minutes["runs"][r]["minutes"] > 0 for r in minutes["runs"] if r != "C_s0")
    assert [p["iteration"] for p in minutes["runs"]["C_dagger_s1"]["iterations"]] == [1, 2, 3]
    page = (root / "results" / "study3" / "report.md").read_text()
    assert "## Primary family" in page and "| `C_dagger_vs_C_plus` |" in page
    assert (root / "web" / "study3" / "index.html").is_file()
    bfcl = json.loads((root / "results" / "study3" / "bfcl" / "summary.json").read_text())
    assert set(bfcl["configs"]) == {"A_base", "C_s0", "C_plus_s0", "C_dagger_s0", "C_grpo_sparse_s0", "C_dpo_s0"}
