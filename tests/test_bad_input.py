"""Bad input to the learning, view and report stages (issue 55): each case ends the stage with one line on
stderr naming the file, exit status 2, no traceback, and nothing written or half-written.

Every case runs the stage's script in a subprocess against copies under tmp_path, and fails before any
model loads (the input is read and checked first), so no case needs a model.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ccl.artifacts.inputs import read_rows
from ccl.artifacts.shapes import ChatRow
from ccl.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
CHAT_ROW = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "{}"}]}
GRPO_STEP = {"step": 0, "loss": 0.5, "reward": 0.25, "success": 0.25, "kl": None, "zero_spread_groups": 0.5,
             "flagged": 0.0}


def _stage(script: str, *args: object, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"scripts.{script}", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def _refused(r: subprocess.CompletedProcess, names: Path | str, says: str = "") -> str:
    """The stage's one-line refusal, which names ``names`` (and contains ``says``)."""
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert str(names) in lines[0] and says in lines[0], lines[0]
    return lines[0]


def _tree(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with the SHA-256 of its bytes (what "nothing changed" compares)."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _gz(path: Path, rows: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode(), mtime=0))
    return path


def _flip(data: bytes, at: int = 12) -> bytes:
    """``data`` with one byte of its deflate stream inverted (past gzip's 10-byte header): zlib.error on read."""
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


# ------------------------------------------------------------ the reader itself, each class of fault
MALFORMED = {  # name -> (bytes of a .jsonl.gz file, what the one line says)
    "zero bytes": (b"", "no rows"),
    "no rows": (gzip.compress(b"\n\n", mtime=0), "no rows"),
    "not gzip": (b"{\"messages\": []}\n", "corrupt"),
    "truncated gzip": (gzip.compress(b'{"messages": [{"role": "user", "content": "x"}]}\n' * 50, mtime=0)[:40],
                       "corrupt"),
    "damaged deflate stream": (_flip(gzip.compress(b'{"a": 1}\n' * 500, mtime=0)), "corrupt"),
    "torn line": (gzip.compress(b'{"messages": [{"role": "user", "content": "x"}]}\n{"messages": [', mtime=0),
                  ":2: invalid JSON line"),
    "a list, not a row": (gzip.compress(b"[1, 2]\n", mtime=0), "row 1: the row: Input should be a valid dictionary"),
    "missing field": (gzip.compress(b'{"text": "x"}\n', mtime=0), "row 1: messages: Field required"),
    "wrong type": (gzip.compress(b'{"messages": "hello"}\n', mtime=0), "row 1: messages: Input should be a valid list"),
    "empty conversation": (gzip.compress(b'{"messages": []}\n', mtime=0), "row 1: messages: List should have at least 1"),
    "not UTF-8": (gzip.compress(b'{"messages": "\xff\xfe"}\n', mtime=0), "corrupt"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_the_reader_refuses_each_fault_in_one_line_naming_the_file(tmp_path, case):
    data, says = MALFORMED[case]
    path = tmp_path / "train.jsonl.gz"
    path.write_bytes(data)
    with pytest.raises(InputError) as e:
        read_rows(path, "dagger_rollout", ChatRow, need_rows=True)
    line = str(e.value)
    assert line.startswith(str(path)) and says in line and "\n" not in line and "dagger_rollout" in line, line


def test_the_reader_keeps_good_rows_as_read_extra_fields_and_all(tmp_path):
    rows = [{**CHAT_ROW, "task_id": "t1", "n": 3}, {**CHAT_ROW, "task_id": "t2"}]
    assert read_rows(_gz(tmp_path / "a.jsonl.gz", rows), "build_sft", ChatRow, need_rows=True) == rows
    (tmp_path / "empty.jsonl").write_text("")
    assert read_rows(tmp_path / "empty.jsonl", "build_sft") == []  # empty is refused only where rows are needed


# ------------------------------------------------------------ the stages
@pytest.mark.parametrize("content", [b"", b"\n", b"[1]\n", b'{"messages": "x"}\n'])
def test_dagger_rollout_refuses_an_empty_or_misshapen_base_and_writes_no_iteration(smoke_data, tmp_path, content):
    base = tmp_path / "base.jsonl"
    base.write_bytes(content)
    out = tmp_path / "iter1"
    r = _stage("dagger_rollout", 1, "--profile", "smoke", "--data", smoke_data.parent, "--policy", tmp_path / "C_s0",
               "--base", base, "--out", out, "--timings", tmp_path / "t.json")
    _refused(r, base)
    assert not out.exists() and not (tmp_path / "t.json").exists()


def test_evaluate_refuses_an_empty_split_and_writes_no_generation_record(smoke_data, tmp_path):
    data = tmp_path / "v1"
    shutil.copytree(smoke_data, data / "tasks")
    (data / "tasks" / "eval_id.jsonl").write_text("")
    out = tmp_path / "runs"
    r = _stage("evaluate", "--profile", "smoke", "--name", "oracle", "--data", data, "--out", out)
    _refused(r, data / "tasks" / "eval_id.jsonl", "no rows")
    assert not out.exists()


def test_grpo_train_refuses_an_empty_validation_pool_before_any_model(smoke_data, tmp_path):
    data = tmp_path / "v1"
    shutil.copytree(smoke_data, data / "tasks")
    (data / "tasks" / "val_pool.jsonl").write_text("\n")
    r = _stage("grpo_train", "C_grpo_sparse_s0", "--profile", "smoke", "--init", tmp_path / "C_s0", "--data", data,
               "--runs", tmp_path / "runs")
    _refused(r, data / "tasks" / "val_pool.jsonl", "no rows")
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("rows", [[], [{"prompt": [], "chosen": [], "rejected": []}],
                                  [{"prompt": [{"role": "user", "content": "x"}], "chosen": "yes"}]])
def test_dpo_train_refuses_empty_or_misshapen_pairs_before_the_model_loads(tmp_path, rows):
    pairs = _gz(tmp_path / "pairs.jsonl.gz", rows)
    r = _stage("dpo_train", "C_dpo_s0", "--init", tmp_path / "C_s0", "--pairs", pairs, "--runs", tmp_path / "runs")
    _refused(r, pairs)
    assert not (tmp_path / "runs").exists()


def test_dpo_pairs_refuses_a_corrupted_gzip_in_one_line(tmp_path):
    source = tmp_path / "iter1"
    good = gzip.compress(b'{"task_id": "x"}\n' * 400, mtime=0)
    (source).mkdir()
    (source / "episodes.jsonl.gz").write_bytes(_flip(good))  # zlib.error
    (source / "visits.jsonl.gz").write_bytes(good)
    out = tmp_path / "dpo"
    r = _stage("dpo_pairs", "--source", source, "--out", out)
    _refused(r, source / "episodes.jsonl.gz", "corrupt")
    assert not out.exists()


def _views_tree(tmp_path: Path, log: bytes) -> tuple[Path, Path, Path, Path]:
    """A summary and one GRPO run whose train_log.jsonl holds ``log``, with views already built from a good log."""
    runs = tmp_path / "runs"
    run = runs / "C_grpo_sparse_s0"
    run.mkdir(parents=True)
    (run / "summary.json").write_text(json.dumps({"method": "grpo"}))
    (run / "val_log.jsonl").write_text(json.dumps({"step": 0, "val_success": 0.5, "val_flagged": 0.0}) + "\n")
    (run / "train_log.jsonl").write_text(json.dumps(GRPO_STEP) + "\n")
    summary, metrics, plots = ROOT / "results" / "summary.json", tmp_path / "metrics", tmp_path / "plots"
    args = ("--summary", summary, "--runs", runs, "--metrics", metrics, "--plots", plots)
    assert _stage("dvc_views", *args).returncode == 0
    (run / "train_log.jsonl").write_bytes(log)
    return run / "train_log.jsonl", metrics, plots, args


@pytest.mark.parametrize("log", [b"", b'{"step": 0, "loss": 0.5}\n', b'{"step": 0,\n', b'"a string"\n'])
def test_dvc_views_refuses_a_bad_grpo_log_and_leaves_the_previous_views_whole(tmp_path, log):
    path, metrics, plots, args = _views_tree(tmp_path, log)
    before = (_tree(metrics), _tree(plots))
    assert len(before[0]) > 0 and "grpo_reward/C_grpo_sparse_s0.csv" in before[1]
    _refused(_stage("dvc_views", *args), path)
    assert (_tree(metrics), _tree(plots)) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary folder left


def _study2_root(tmp_path: Path) -> Path:
    """A copy of the artifacts study 2's page reads (the committed ones)."""
    root = tmp_path / "root"
    for rel in ("docs/preregistration-2.md", "results/study2", "data/study2/pool_audit.json",
                "data/study2/dagger", "study2/deviations.yaml", "study2/runs", "ccl/report/templates"):
        src, dst = ROOT / rel, root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(src, dst) if src.is_dir() else shutil.copy2(src, dst)
    return root


@pytest.mark.parametrize("log", [b"", b'{"step": 1, "loss": null}\n', b'{"step": 1, "reward": 0.1'])
def test_report_study2_refuses_a_bad_grpo_log_and_writes_no_page(tmp_path, log):
    root = _study2_root(tmp_path)
    path = root / "study2" / "runs" / "C_grpo_sparse_s0" / "train_log.jsonl"
    path.write_bytes(log)
    out, site = tmp_path / "out", tmp_path / "site"
    r = _stage("report_study2", "--root", root, "--out", out, "--site", site, "--no-readme")
    _refused(r, path)
    assert not out.exists() and not site.exists()


@pytest.mark.parametrize("params", ["study2/params.yaml", "params.yaml"])
def test_a_key_given_twice_in_a_params_file_is_refused_in_one_line(tmp_path, params):
    text = (ROOT / params).read_text()
    path = tmp_path / "params.yaml"
    path.write_text(text + "\nprofile: smoke\n")  # profile is set earlier in both files: the last would win
    r = _stage("power", "--params", path, "--out", tmp_path / "power.json")
    line = _refused(r, path, "key 'profile' given twice")
    assert "lines " in line
    assert not (tmp_path / "power.json").exists()


# ------------------------------------------------------------ whole or not at all
def test_a_folder_built_by_atomic_folder_replaces_the_old_one_only_when_complete(tmp_path):
    from ccl.artifacts.jsonio import atomic_folder
    site = tmp_path / "site"
    site.mkdir()
    (site / "old.txt").write_text("old")
    with pytest.raises(RuntimeError), atomic_folder(site) as tmp:
        (tmp / "new.txt").write_text("new")
        raise RuntimeError("a bad input halfway")
    assert _tree(site) == {"old.txt": hashlib.sha256(b"old").hexdigest()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # the half-built folder is gone
    with atomic_folder(site) as tmp:
        (tmp / "new.txt").write_text("new")
    assert _tree(site) == {"new.txt": hashlib.sha256(b"new").hexdigest()}  # no old file lingers
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_atomic_folder_puts_back_the_old_folder_of_a_writer_killed_between_its_two_renames(tmp_path):
    from ccl.artifacts.jsonio import atomic_folder
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    old = tmp_path / f".site.{dead.stdout.strip()}.old"  # what the killed writer had moved aside
    old.mkdir()
    (old / "page.html").write_text("published")
    with pytest.raises(RuntimeError), atomic_folder(tmp_path / "site"):
        raise RuntimeError("this build fails too")
    assert _tree(tmp_path / "site") == {"page.html": hashlib.sha256(b"published").hexdigest()}


def test_atomic_write_files_writes_every_file_or_none(tmp_path):
    from ccl.artifacts.jsonio import atomic_write_files
    a, b = tmp_path / "a.md", tmp_path / "b.html"
    a.write_text("A0")
    b.write_text("B0")
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where a folder must go")
    with pytest.raises(OSError):
        atomic_write_files({a: b"A1", b: b"B1", blocked / "c.txt": b"C1"})
    assert (a.read_text(), b.read_text()) == ("A0", "B0")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "b.html", "blocked"]  # no temporary left
    atomic_write_files({a: b"A1", b: b"B1"})
    assert (a.read_text(), b.read_text()) == ("A1", "B1")


@pytest.mark.parametrize("content", [b"", b"\x1f\x8b\x08\x00truncated", b'{"messages": [{"role": "user"}]}\n',
                                     b'{"messages": [{"role": "user", "content": "x"}]}\n{"mess'])
def test_train_refuses_a_malformed_aggregate_before_the_model_and_writes_no_run(tmp_path, content):
    aggregate = tmp_path / "train.jsonl.gz"
    aggregate.write_bytes(content if content.startswith(b"\x1f\x8b") else gzip.compress(content, mtime=0))
    runs = tmp_path / "runs"
    r = _stage("train", "C_dagger_s0", "--train-file", aggregate, "--runs", runs, "--archive", tmp_path / "archive",
               "--stability-log", tmp_path / "stability.jsonl")
    _refused(r, aggregate)
    assert not runs.exists() and not (tmp_path / "archive").exists()


def test_a_key_repeated_inside_a_one_line_mapping_is_refused(tmp_path):
    from ccl.config import ConfigError, read_yaml
    path = tmp_path / "params.yaml"
    path.write_text("evaluate:\n  max_tasks_per_split: {eval_id: 96, eval_id: 12}\n")
    with pytest.raises(ConfigError, match=r"params.yaml: .*key 'eval_id' given twice \(lines 2 and 2\)"):
        read_yaml(path)


def test_a_full_disk_while_writing_the_reports_names_the_file_and_leaves_the_old_ones(tmp_path, monkeypatch):
    import errno
    import os

    from ccl.artifacts.jsonio import atomic_write_files
    a, b = tmp_path / "report.md", tmp_path / "report.html"
    a.write_text("old md")
    b.write_text("old html")
    real_fsync, calls = os.fsync, []

    def full_on_second(fd: int) -> None:  # the second file's fsync finds the disk full
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full_on_second)
    with pytest.raises(OSError) as e:
        atomic_write_files({a: b"new md", b: b"new html"})
    assert e.value.errno == errno.ENOSPC and e.value.filename == str(b)
    assert (a.read_text(), b.read_text()) == ("old md", "old html")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.md"]
