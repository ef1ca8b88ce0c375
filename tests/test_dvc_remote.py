"""The README's remote workflow, end to end on a local-directory remote: a DVC project holding the
smoke study's data and trained run is pushed, cloned afresh, pulled, and verifies clean."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def sh(cwd: Path, *cmd: str) -> str:
    dvc_bin = str(Path(sys.executable).parent)  # the venv's dvc, as the README's commands use
    env = {**os.environ, **GIT_ENV, "PATH": dvc_bin + os.pathsep + os.environ["PATH"]}
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
    return r.stdout


def project(study: Path, repo: Path) -> None:
    """A DVC project whose stages bring in the study's dataset build and training run, declared as the
    repository's dvc.yaml declares them (small files in git, the rest in the DVC cache)."""
    repo.mkdir()
    data = study / "data" / "v1"
    stages = {
        "build_datasets": {"cmd": f"mkdir -p data/v1 && cp -rL {data}/tasks {data}/sft {data}/leakage_audit.json "
                                  f"{data}/manifest.json data/v1/",
                           "outs": ["data/v1/tasks", "data/v1/sft", {"data/v1/leakage_audit.json": {"cache": False}},
                                    {"data/v1/manifest.json": {"cache": False}}]},
        "train": {"cmd": f"mkdir -p runs && cp -rL {study}/runs/C_s0 runs/C_s0",
                  "outs": ["runs/C_s0/adapter", {"runs/C_s0/manifest.json": {"cache": False}},
                           {"runs/C_s0/summary.json": {"cache": False}}, {"runs/C_s0/config.json": {"cache": False}},
                           {"runs/C_s0/train_log.jsonl": {"cache": False}}]},
    }
    (repo / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}, sort_keys=False))
    sh(repo, "git", "init", "-q")
    sh(repo, "dvc", "init", "-q")
    sh(repo, "dvc", "repro", "-q")


def test_a_study_round_trips_through_a_local_dvc_remote(smoke_study, tmp_path):
    repo, remote, clone = tmp_path / "repo", tmp_path / "remote", tmp_path / "clone"
    project(smoke_study, repo)
    listed = {p.name for p in (repo / "runs" / "C_s0").iterdir() if not p.name.startswith(".")}  # DVC's .gitignore
    assert listed == {"adapter", "manifest.json", "summary.json", "config.json", "train_log.jsonl"}
    # the README's commands
    sh(repo, "dvc", "remote", "add", "-d", "store", str(remote))
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "study")
    sh(repo, "dvc", "push", "-q")
    sh(tmp_path, "git", "clone", "-q", str(repo), str(clone))
    assert not (clone / "runs" / "C_s0" / "adapter").exists()  # adapters and task files are not in git
    missing = subprocess.run([sys.executable, "-m", "scripts.verify", "--root", str(clone)], cwd=ROOT,
                             capture_output=True, text=True)
    assert missing.returncode == 1 and "`dvc pull` fetches it" in missing.stdout
    sh(clone, "dvc", "pull", "-q")
    assert "up to date" in sh(clone, "dvc", "status")
    out = sh(ROOT, sys.executable, "-m", "scripts.verify", "--root", str(clone))
    assert out.strip() == f"verify: all files match their manifests under {clone}"
    for a in sorted(p for p in (repo / "runs").rglob("*") if p.is_file()):
        assert (clone / a.relative_to(repo)).read_bytes() == a.read_bytes()
    shutil.rmtree(remote)
