"""File-system faults end a stage with one line naming the path and the remedy, and leave no
partial output behind (a read-only folder and a full disk, simulated at the system call,
since this suite runs as root, whom permissions do not stop)."""
from __future__ import annotations

import errno
import importlib
import pathlib
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def stage(name: str):
    return importlib.import_module(f"scripts.{name}")


def failing_mkstemp(code: int, text: str):
    def fake(*args, dir=None, **kwargs):
        raise OSError(code, text, str(dir))
    return fake


FAULTS = [(errno.ENOSPC, "No space left on device", "free disk space"),
          (errno.EROFS, "Read-only file system", "choose a writable output folder")]


def run(name: str, argv: list[str], capsys) -> tuple[int, list[str]]:
    from ccl.artifacts.boundary import run_stage
    module = stage(name)
    code = run_stage(name, module.main, argv)
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("code, text, remedy", FAULTS)
def test_build_datasets_reports_a_write_fault_in_one_line(tmp_path, monkeypatch, capsys, code, text, remedy):
    out = tmp_path / "data"
    monkeypatch.setattr(tempfile, "mkstemp", failing_mkstemp(code, text))
    rc, err = run("build_datasets", ["--profile", "smoke", "--out", str(out)], capsys)
    assert rc == 2 and len(err) == 1, err
    assert err[0].startswith(f"build_datasets: {text}: {out}") and remedy in err[0]
    assert not [p for p in out.rglob("*") if p.is_file()]  # nothing that looks like an output


@pytest.mark.parametrize("code, text, remedy", FAULTS)
def test_evaluate_reports_a_write_fault_in_one_line(smoke_data, tmp_path, monkeypatch, capsys, code, text, remedy):
    out = tmp_path / "runs"
    monkeypatch.setattr(tempfile, "mkstemp", failing_mkstemp(code, text))
    rc, err = run("evaluate", ["--profile", "smoke", "--name", "oracle", "--data", str(smoke_data.parent),
                               "--out", str(out)], capsys)
    assert rc == 2 and err[-1].startswith(f"evaluate: {text}: {out / 'oracle'}") and remedy in err[-1]
    assert not any("Traceback" in line for line in err)
    assert not (out / "oracle" / "episodes.jsonl.gz").exists()


def test_train_reports_a_read_only_runs_folder_in_one_line(tmp_path, monkeypatch, capsys):
    runs, data = tmp_path / "runs", tmp_path / "v1"
    (data / "variants").mkdir(parents=True)  # a good training file: the fault is the folder, not the rows
    (data / "variants" / "C.jsonl").write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    real_mkdir = pathlib.Path.mkdir

    def mkdir(self, *args, **kwargs):
        if str(self).startswith(str(runs)):
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)
    rc, err = run("train", ["C_s0", "--profile", "smoke", "--data", str(data), "--runs", str(runs),
                            "--archive", str(tmp_path / "archive"),
                            "--stability-log", str(tmp_path / "logs" / "stability.jsonl")], capsys)
    assert rc == 2 and err[-1] == (f"train: Read-only file system: {runs / 'C_s0'}; the file system is read-only: "
                                   f"choose a writable output folder or remount it")
    assert not runs.exists()


def test_every_stage_script_runs_inside_the_boundary():
    import yaml
    modules = {st.get("do", st)["cmd"].split()[2] for st in yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"].values()}
    for module in sorted(modules):
        name = module.removeprefix("scripts.")
        script = ROOT / "scripts" / f"{name}.py"
        assert f'sys.exit(run_stage("{name}", main))' in script.read_text(), script


def full_disk_on_write(monkeypatch) -> None:
    """A disk that fills up under the write itself: ``write`` raises ENOSPC naming no file, as the system
    call does (the fault the tests above simulate at mkstemp carries the folder's name)."""
    import os
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> bool:
            self.f.close()
            return False

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: Full(real_fdopen(fd, *a, **k)))


def test_build_datasets_names_the_file_a_full_disk_stopped(tmp_path, monkeypatch, capsys):
    out = tmp_path / "data"
    full_disk_on_write(monkeypatch)
    rc, err = run("build_datasets", ["--profile", "smoke", "--out", str(out)], capsys)
    assert rc == 2 and len(err) == 1, err
    assert err[0].startswith(f"build_datasets: No space left on device: {out / 'tasks'}/") and "free disk" in err[0]
    assert "unknown path" not in err[0] and not [p for p in out.rglob("*") if p.is_file()]


def test_evaluate_names_the_file_a_full_disk_stopped(smoke_data, tmp_path, monkeypatch, capsys):
    out = tmp_path / "runs"
    full_disk_on_write(monkeypatch)
    rc, err = run("evaluate", ["--profile", "smoke", "--name", "oracle", "--data", str(smoke_data.parent),
                               "--out", str(out)], capsys)
    assert rc == 2 and err[-1].startswith(f"evaluate: No space left on device: {out / 'oracle'}/"), err
    assert "unknown path" not in err[-1] and not (out / "oracle" / "episodes.jsonl.gz").exists()


def test_build_sft_names_the_file_a_full_disk_stopped(smoke_distilled, tmp_path, monkeypatch, capsys):
    out = tmp_path / "variants"
    full_disk_on_write(monkeypatch)
    rc, err = run("build_sft", ["--profile", "smoke", "--data", str(smoke_distilled), "--out", str(out)], capsys)
    assert rc == 2 and err[-1].startswith(f"build_sft: No space left on device: {out}/"), err
    assert "unknown path" not in err[-1]
