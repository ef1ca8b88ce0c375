"""The lock-maintenance scripts: a code-only lock commit (scripts/lock_commit.py) and the fresh-clone check
(scripts/fresh_clone_check.py), on small DVC projects made here, and the fresh-clone check on the repository
itself (slow: it rebuilds every model-free stage in a clone)."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ccl.artifacts.dvc_lock import overlapping
from scripts import fresh_clone_check, lock_commit
from scripts.fresh_clone_check import Problem, _entry_problems

ROOT = Path(__file__).resolve().parents[1]
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}


def sh(cwd: Path, *cmd: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}"
    return r


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def project(repo: Path) -> Path:
    """Two stages: ``make`` copies data.txt through code.py into out/ (a cached folder) and small.txt (in git);
    ``use`` reads out/ and writes report.txt (in git)."""
    repo.mkdir()
    (repo / "code.py").write_text("import shutil, sys\nshutil.copy('data.txt', sys.argv[1])\n")
    (repo / "data.txt").write_text("rows\n")
    stages = {
        "make": {"cmd": "mkdir -p out && python code.py out/a.txt && cp data.txt small.txt",
                 "deps": ["code.py", "data.txt"], "outs": ["out", {"small.txt": {"cache": False}}]},
        "use": {"cmd": "cat out/a.txt > report.txt", "deps": ["out"], "outs": [{"report.txt": {"cache": False}}]},
    }
    (repo / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}, sort_keys=False))
    sh(repo, "git", "init", "-q")
    sh(repo, "dvc", "init", "-q")
    sh(repo, "dvc", "repro", "-q")
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-qm", "project")
    return repo


def locked(repo: Path, stage: str) -> dict[str, str]:
    body = yaml.safe_load((repo / "dvc.lock").read_text())["stages"][stage]
    return {e["path"]: e["md5"] for e in body["deps"] + body["outs"]}


# ------------------------------------------------------------ overlap of a dependency with absent outputs
def test_overlap_is_the_path_itself_a_folder_above_it_or_a_folder_it_holds():
    absent = {"runs/C_s0/adapter", "data/v1/tasks"}
    assert overlapping("runs", absent) == "runs/C_s0/adapter"  # a folder holding an absent output
    assert overlapping("data/v1/tasks/train_pool.jsonl", absent) == "data/v1/tasks"  # inside one
    assert overlapping("data/v1/tasks", absent) == "data/v1/tasks"
    assert overlapping("data/v1/task", absent) is None and overlapping("runs/C_s1", absent) is None


# ------------------------------------------------------------ code-only lock commit
def test_code_only_commit_updates_the_code_hash_and_keeps_the_outputs(tmp_path):
    repo = project(tmp_path / "p")
    before = locked(repo, "make")
    (repo / "code.py").write_text("# why: a comment\n" + (repo / "code.py").read_text())  # a pure refactor
    assert lock_commit.main(["make", "--root", str(repo)]) == 0
    after = locked(repo, "make")
    assert after["code.py"] == md5(repo / "code.py") != before["code.py"]
    assert {k: v for k, v in after.items() if k != "code.py"} == {k: v for k, v in before.items() if k != "code.py"}
    assert "make" not in sh(repo, "dvc", "status", "make").stdout  # up to date again, nothing rerun


def test_a_changed_output_is_refused_naming_stage_and_file_and_nothing_is_written(tmp_path, capsys):
    repo = project(tmp_path / "p")
    lock = (repo / "dvc.lock").read_bytes()
    (repo / "small.txt").write_text("other rows\n")
    assert lock_commit.main(["make", "use", "--root", str(repo)]) == 1
    err = capsys.readouterr().err
    assert "make: output small.txt differs from dvc.lock" in err and "--record-outputs" in err
    assert (repo / "dvc.lock").read_bytes() == lock
    assert lock_commit.main(["make", "--root", str(repo), "--record-outputs"]) == 0  # after a rerun by hand
    assert locked(repo, "make")["small.txt"] == md5(repo / "small.txt")


def test_an_absent_output_keeps_its_hash_and_so_does_a_dependency_on_it(tmp_path, capsys):
    repo = project(tmp_path / "p")
    before = {s: locked(repo, s) for s in ("make", "use")}
    sh(repo, "rm", "-rf", "out", ".dvc/cache")  # a new machine: the cached folder is gone
    (repo / "code.py").write_text((repo / "code.py").read_text() + "# refactored\n")
    assert lock_commit.main(["make", "use", "--root", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "kept    out (output absent)" in out and "kept    out (absent)" in out
    assert locked(repo, "make")["out"] == before["make"]["out"]
    assert locked(repo, "use") == before["use"]


def test_an_unknown_stage_is_named(tmp_path, capsys):
    repo = project(tmp_path / "p")
    assert lock_commit.main(["mkae", "--root", str(repo)]) == 1
    assert "no stage 'mkae'" in capsys.readouterr().err


# ------------------------------------------------------------ the fresh-clone check's reading of dvc status
def test_status_entries_an_empty_cache_explains_pass_and_the_rest_are_problems():
    absent = {"data/v1/tasks", "runs/C_s0/adapter"}
    assert _entry_problems("train", "changed outs", {"runs/C_s0/adapter": "not in cache"}, absent) == []
    assert _entry_problems("train", "changed deps", {"data/v1/tasks/val_pool.jsonl": "deleted",
                                                     "runs": "modified"}, absent) == []
    assert _entry_problems("build_sft", "changed deps", {"ccl/data/variants.py": "modified"}, absent) == [
        Problem("build_sft", "ccl/data/variants.py", "deps modified")]
    assert _entry_problems("train", "changed deps", {"params.yaml": {"train.lr": "modified"}}, absent) == [
        Problem("train", "params.yaml:train.lr", "params modified")]
    # a git-tracked output changed on disk is no cache absence
    assert _entry_problems("accept_teacher", "changed outs", {"data/v1/teacher/summary.json": "modified"},
                           absent) == [Problem("accept_teacher", "data/v1/teacher/summary.json", "outs modified")]


def test_the_fresh_clone_check_passes_a_clean_project_and_names_a_changed_builder(tmp_path, monkeypatch, capsys):
    repo = project(tmp_path / "p")
    monkeypatch.setattr(fresh_clone_check, "PIPELINES", ("dvc.yaml",))
    assert fresh_clone_check.main(["--source", str(repo), "--stage", "dvc.yaml:make"]) == 0
    assert "no problem" in capsys.readouterr().out
    # one line of the builder changes what it writes, committed without a rerun
    (repo / "code.py").write_text((repo / "code.py").read_text().replace("shutil.copy('data.txt', sys.argv[1])",
                                                                         "open(sys.argv[1], 'w').write('x')"))
    sh(repo, "git", "commit", "-qam", "builder changed")
    assert fresh_clone_check.main(["--source", str(repo), "--stage", "dvc.yaml:make"]) == 1
    out = capsys.readouterr().out
    assert "fresh_clone_check: make: code.py: deps modified" in out
    assert "fresh_clone_check: dvc.yaml:make: out: rebuilt bytes differ from the lock" in out


@pytest.mark.slow
def test_a_changed_variant_builder_fails_naming_build_sft_and_its_files(tmp_path):
    """The repository itself: one line of ccl/data/variants.py changed in a clone (C's draw seeded
    differently) fails the check on build_sft, naming the variant files."""
    source = tmp_path / "source"
    sh(tmp_path, "git", "clone", "-q", str(ROOT), str(source))
    path = source / "ccl" / "data" / "variants.py"
    text = path.read_text()
    assert "rng = random.Random(cfg.seed)" in text
    path.write_text(text.replace("rng = random.Random(cfg.seed)", "rng = random.Random(cfg.seed + 1)"))
    sh(source, "git", "commit", "-qam", "a changed builder")
    stages = ["dvc.yaml:build_datasets", "dvc.yaml:accept_teacher", "dvc.yaml:build_sft"]
    r = subprocess.run([sys.executable, "-m", "scripts.fresh_clone_check", "--source", str(source),
                        *[a for s in stages for a in ("--stage", s)]], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "build_sft: ccl/data/variants.py: deps modified" in r.stdout
    assert "dvc.yaml:build_sft: data/v1/variants/C.jsonl: rebuilt bytes differ from the lock" in r.stdout
    assert "dvc.yaml:build_datasets:" not in r.stdout  # what the change does not touch still matches


@pytest.mark.slow
def test_a_fresh_clone_rebuilds_every_model_free_stage_to_its_locked_bytes():
    """Issue 54's CI check on the committed HEAD: dvc status explained by the empty cache alone, and every
    model-free stage of both pipelines rebuilt byte-identical to its lock."""
    r = subprocess.run([sys.executable, "-m", "scripts.fresh_clone_check"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
