"""dvc.lock as verify's anchor: entries of stages that left dvc.yaml are named, skipped and prunable."""
from __future__ import annotations

import subprocess
import sys

import pytest

from ccl.artifacts.dvc_lock import defined_stages, prune_stale, recorded_outputs, stale_stages
from ccl.artifacts.jsonio import file_digest
from ccl.artifacts.verification import verify_tree
from ccl.errors import InputError

DVC_YAML = """stages:
  make:
    cmd: echo make
  train:
    foreach: ${runs}
    do:
      cmd: echo ${item}
      outs:
        - runs/${item}.txt
"""

# As DVC writes it. train@b left the matrix when params.yaml went from [a, b] to [a].
LOCK = """schema: '2.0'
stages:
  make:
    cmd: echo make
  train@a:
    cmd: echo a
    outs:
    - path: runs/a.txt
      hash: md5
      md5: {a}
      size: 2
  train@b:
    cmd: echo b
    outs:
    - path: runs/b.txt
      hash: md5
      md5: 0123456789abcdef0123456789abcdef
      size: 2
"""


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "dvc.yaml").write_text(DVC_YAML)
    (tmp_path / "params.yaml").write_text("runs: [a]\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.txt").write_text("a\n")
    (tmp_path / "dvc.lock").write_text(LOCK.format(a=file_digest(tmp_path / "runs" / "a.txt", "md5")))
    return tmp_path


def test_the_stages_dvc_yaml_defines_come_from_dvc_expanding_the_params(tree):
    assert defined_stages(tree) == {"make", "train@a"}
    assert stale_stages(tree) == ["train@b"]
    (tree / "params.yaml").write_text("runs: [a, b]\n")
    assert stale_stages(tree) == []


def test_a_stale_entry_anchors_nothing_so_its_absent_output_is_no_problem(tree):
    recorded, unlisted = recorded_outputs(tree)
    assert [(r.path, r.stage) for r in recorded] == [("runs/a.txt", "train@a")] and unlisted == []
    assert verify_tree(tree, [tree / "runs"]) == []
    (tree / "params.yaml").write_text("runs: [a, b]\n")  # back in the matrix: its output is owed again
    assert any(p.startswith("MISSING runs/b.txt (dvc.lock records it from stage train@b") for p in
               verify_tree(tree, [tree / "runs"]))


def test_pruning_removes_exactly_the_stale_stanza_and_keeps_every_other_byte(tree):
    before = (tree / "dvc.lock").read_text()
    assert prune_stale(tree) == ["train@b"]
    after = (tree / "dvc.lock").read_text()
    assert after == before[:before.index("  train@b:\n")]
    assert prune_stale(tree) == [] and (tree / "dvc.lock").read_text() == after


def test_a_tree_without_a_pipeline_counts_every_lock_entry(tree):
    (tree / "dvc.yaml").unlink()
    assert defined_stages(tree) is None and stale_stages(tree) == []
    assert [r.stage for r in recorded_outputs(tree)[0]] == ["train@a", "train@b"]


def test_an_unreadable_pipeline_or_lock_is_refused_with_its_path(tree):
    (tree / "dvc.lock").write_text("stages: [1, 2]\n")
    with pytest.raises(InputError, match=r"dvc.lock: 'stages' must map stage names to entries, got list"):
        stale_stages(tree)
    (tree / "dvc.yaml").write_text("stages:\n  make:\n    foreach: ${nowhere}\n    do:\n      cmd: x\n")
    with pytest.raises(InputError, match=r"dvc.yaml: DVC cannot read the pipeline"):
        defined_stages(tree)


def test_the_committed_lock_holds_no_stale_entry():
    """Pruned once by `verify --prune-lock`; a run dropped from the matrix later must be pruned too."""
    from scripts.layout import ROOT
    assert stale_stages(ROOT) == []


def test_verify_names_stale_entries_on_stderr_passes_and_prunes_on_request(tree):
    from scripts.layout import ROOT
    verify = [sys.executable, "-m", "scripts.verify", "--root", str(tree)]
    out = subprocess.run(verify, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "note: dvc.lock keeps 1 entries of stages dvc.yaml no longer defines (train@b)" in out.stderr
    out = subprocess.run(verify + ["--prune-lock"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and f"pruned train@b from {tree / 'dvc.lock'}" in out.stderr
    assert "note:" not in out.stderr and "train@b" not in (tree / "dvc.lock").read_text()
