"""verify on a bare tree (no dvc.lock): files that no manifest checks are named, and special files are
refused by type, never opened (ccl/artifacts/verification.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccl.artifacts.manifest import write_manifest
from ccl.artifacts.verification import verify_tree

ROOT = Path(__file__).resolve().parents[1]
FIFO = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def _files(folder: Path, names: list[str]) -> list[Path]:
    paths = []
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{{\"name\": \"{name}\"}}\n")
        paths.append(path)
    return paths


def _data_tree(tmp_path: Path) -> Path:
    """v1/ with a top manifest over its tasks and a sub-manifest over export/, as build_datasets and export_sft."""
    v1 = tmp_path / "tree" / "v1"
    write_manifest(v1, _files(v1, ["leakage_audit.json", "tasks/eval_id.jsonl"]))
    write_manifest(v1 / "export", _files(v1 / "export", ["train.jsonl"]))
    return tmp_path / "tree"


def _runs_tree(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    for run in ("C_s0", "C_s1"):
        write_manifest(runs / run, _files(runs / run, ["summary.json", "adapter/adapter_model.safetensors"]))
    return runs


def _verify(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scripts.verify", "--root", str(root)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_deleting_the_top_manifest_leaves_the_task_files_named_as_unanchored(tmp_path):
    tree = _data_tree(tmp_path)
    assert verify_tree(tree) == []
    (tree / "v1" / "manifest.json").unlink()
    (tree / "v1" / "tasks" / "eval_id.jsonl").write_text("{\"edited\": true}\n")
    why = "(no manifest lists it and dvc.lock records none, though folders beside it have manifests: was its " \
          "manifest deleted?)"
    assert verify_tree(tree) == [f"UNANCHORED v1/leakage_audit.json {why}", f"UNANCHORED v1/tasks/eval_id.jsonl {why}"]
    out = _verify(tree)
    assert out.returncode == 1 and "UNANCHORED v1/tasks/eval_id.jsonl" in out.stdout
    assert "has no dvc.lock: each manifest is checked against the files it lists" in out.stderr


def test_deleting_a_runs_manifest_leaves_its_adapter_named_as_unanchored(tmp_path):
    runs = _runs_tree(tmp_path)
    assert verify_tree(runs) == []
    (runs / "C_s1" / "manifest.json").unlink()
    (runs / "C_s1" / "adapter" / "adapter_model.safetensors").write_text("{\"edited\": true}\n")
    assert [p.split(" (")[0] for p in verify_tree(runs)] == [
        "UNANCHORED C_s1/adapter/adapter_model.safetensors", "UNANCHORED C_s1/summary.json"]
    assert _verify(runs).returncode == 1


@FIFO
def test_a_fifo_named_manifest_is_refused_by_type_without_blocking(tmp_path):
    runs = _runs_tree(tmp_path)
    (runs / "C_s1" / "manifest.json").unlink()
    os.mkfifo(runs / "C_s1" / "manifest.json")  # opening it for reading would wait for a writer forever
    out = _verify(runs)  # first the CLI, whose timeout=60 fails the test instead of hanging the suite
    assert out.returncode == 1 and "REFUSED C_s1/manifest.json (a FIFO" in out.stdout
    problems = verify_tree(runs)
    assert problems[0] == "REFUSED C_s1/manifest.json (a FIFO, not a regular file; not opened)"
    assert [p.split(" (")[0] for p in problems[1:]] == [
        "UNANCHORED C_s1/adapter/adapter_model.safetensors", "UNANCHORED C_s1/summary.json"]


@FIFO
def test_a_fifo_listed_or_lying_in_a_manifests_folder_is_never_opened(tmp_path):
    runs = _runs_tree(tmp_path)
    os.mkfifo(runs / "C_s0" / "extra.jsonl")
    target = runs / "C_s1" / "summary.json"
    target.unlink()
    os.mkfifo(target)
    assert verify_tree(runs) == [
        "REFUSED C_s1/summary.json (listed in C_s1/manifest.json, but a FIFO, not a regular file; not opened)",
        "REFUSED C_s0/extra.jsonl (a FIFO, not a regular file; not opened)"]


def _pipeline_tree(tmp_path: Path) -> Path:
    """A second pipeline's lock (study2/dvc.lock's shape): it records a manifest by MD5 and the folder of
    task files beside it as a directory output kept in git, whose listing no DVC cache holds."""
    from ccl.artifacts.jsonio import file_digest

    root = tmp_path / "repo"
    data = root / "data2"
    write_manifest(data, _files(data, ["tasks/eval_id.jsonl", "tasks/eval_renamed.jsonl"]))
    (root / "sub").mkdir()
    (root / "sub" / "dvc.lock").write_text(
        "schema: '2.0'\nstages:\n  fresh_pool:\n    outs:\n"
        f"    - path: data2/manifest.json\n      md5: {file_digest(data / 'manifest.json', 'md5')}\n"
        "    - path: data2/tasks\n      md5: 0123456789abcdef0123456789abcdef.dir\n")
    return root


def test_a_pipelines_own_lock_anchors_and_its_manifest_checks_a_folder_kept_in_git(tmp_path):
    root = _pipeline_tree(tmp_path)
    assert verify_tree(root, [root / "data2"], pipeline="sub/dvc.yaml") == []
    (root / "data2" / "tasks" / "extra.jsonl").write_text("{}\n")  # now the manifest no longer covers the folder
    assert verify_tree(root, [root / "data2"], pipeline="sub/dvc.yaml") == [
        "UNCHECKED data2/tasks/ (dvc.lock records this folder from stage fresh_pool; its file list is not in the "
        "DVC cache: dvc pull)",
        "UNEXPECTED data2/tasks/extra.jsonl (in no manifest)"]
    # the root's lock (absent here) anchors nothing: the same tree checked against it has no recorded folder
    assert verify_tree(root, [root / "data2"]) == ["UNEXPECTED data2/tasks/extra.jsonl (in no manifest)"]


# issue 55: a lone run, or a tree with no manifest at all, has no sibling manifest folders to mark its files
# UNANCHORED; every file nothing checks is named UNCHECKED all the same, and a clean tree without dvc.lock is
# called consistent, never "all files match"
UNCHECKED = "(no manifest lists it and no dvc.lock records it: nothing checks its bytes)"


def _lone_run(tmp_path: Path) -> Path:
    """A bare tree (no dvc.lock) holding one run: runs/C_s0/ with its summary, adapter and manifest."""
    run = tmp_path / "tree" / "runs" / "C_s0"
    write_manifest(run, _files(run, ["summary.json", "adapter/adapter_model.safetensors"]))
    return tmp_path / "tree"


def test_a_lone_run_whose_manifest_was_deleted_names_its_edited_adapter(tmp_path):
    tree = _lone_run(tmp_path)
    (tree / "runs" / "C_s0" / "manifest.json").unlink()
    adapter = tree / "runs" / "C_s0" / "adapter" / "adapter_model.safetensors"
    flipped = bytearray(adapter.read_bytes())
    flipped[0] ^= 0x01
    adapter.write_bytes(bytes(flipped))
    assert verify_tree(tree) == [f"no manifest.json found under {tree}",
                                 f"UNCHECKED runs/C_s0/adapter/adapter_model.safetensors {UNCHECKED}",
                                 f"UNCHECKED runs/C_s0/summary.json {UNCHECKED}"]
    out = _verify(tree)
    assert out.returncode == 1 and "all files match" not in out.stdout
    assert f"UNCHECKED runs/C_s0/adapter/adapter_model.safetensors {UNCHECKED}\n" in out.stdout


def test_a_lone_run_beside_an_unrelated_manifest_is_still_named(tmp_path):
    tree = _lone_run(tmp_path)
    v1 = tree / "data" / "v1"  # its manifest folder's parent is data/, so runs/ is no collection of manifest folders
    write_manifest(v1, _files(v1, ["tasks.jsonl"]))
    (tree / "runs" / "C_s0" / "manifest.json").unlink()
    assert verify_tree(tree) == [f"UNCHECKED runs/C_s0/adapter/adapter_model.safetensors {UNCHECKED}",
                                 f"UNCHECKED runs/C_s0/summary.json {UNCHECKED}"]
    assert _verify(tree).returncode == 1


def test_a_tree_with_no_manifest_at_all_names_every_file_and_an_empty_one_fails_too(tmp_path):
    tree = tmp_path / "tree"
    _files(tree, ["a.json", "sub/b.jsonl", ".hidden", ".git/config"])  # dotfiles and hidden folders: no artifacts
    assert verify_tree(tree) == [f"no manifest.json found under {tree}", f"UNCHECKED a.json {UNCHECKED}",
                                 f"UNCHECKED sub/b.jsonl {UNCHECKED}"]
    out = _verify(tree)
    assert out.returncode == 1 and "UNCHECKED sub/b.jsonl" in out.stdout and "all files match" not in out.stdout
    empty = tmp_path / "empty"
    empty.mkdir()
    assert verify_tree(empty) == [f"no manifest.json found under {empty}"]
    assert _verify(empty).returncode == 1


def test_an_intact_lone_run_passes_as_consistent_only_since_no_lock_anchors_its_manifest(tmp_path):
    tree = _lone_run(tmp_path)
    assert verify_tree(tree) == []
    out = _verify(tree)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout == (f"verify: consistent only: every file under {tree} matches its manifest, but no dvc.lock "
                          f"anchors the manifests (a file edited together with its manifest would pass)\n")
    (tree / "runs" / "C_s0" / "notes.txt").write_text("x\n")  # beside the run's files, in no manifest
    assert verify_tree(tree) == ["UNEXPECTED runs/C_s0/notes.txt (in no manifest)"]
