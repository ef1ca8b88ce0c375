"""scripts/sync_deps.py rewrites each stage's code entries from what its script imports and reads, and
nothing else: on the committed pipelines it changes no byte, and on a copy with a module line removed
and a stray one added it names both and restores the committed bytes. Every test runs on a temporary
copy (``--file``); the repository's pipelines are never written."""
from __future__ import annotations

import re

import pytest

from scripts.dvc_deps import PIPELINES, ROOT, code_needed
from scripts.sync_deps import main, sync, write_atomically


def edit(text: str, stage: str, old: str, new: str) -> str:
    """``text`` with the first ``old`` after stage ``stage``'s header replaced by ``new``."""
    start = re.search(rf"^  {stage}:(\s|$)", text, re.M).start()
    at = text.index(old, start)
    return text[:at] + new + text[at + len(old):]


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_sync_changes_no_byte_of_a_pipeline_in_order(pipeline, tmp_path, capsys):
    copy = tmp_path / "pipeline.yaml"
    original = (ROOT / pipeline).read_bytes()
    copy.write_bytes(original)
    assert main(["--pipeline", pipeline, "--file", str(copy), "--check"]) == 0
    assert main(["--pipeline", pipeline, "--file", str(copy)]) == 0
    assert copy.read_bytes() == original
    assert "nothing to change" in capsys.readouterr().out


def test_check_names_the_missing_and_the_stray_module_and_sync_restores_the_bytes(tmp_path, capsys):
    original = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    broken = edit(original, "build_sft", "      - ccl/stages/build_sft.py\n", "")
    # the training never imports the report (tests/test_dvc_deps.py): a stray line
    broken = edit(broken, "train", "        - scripts/train.py\n",
                  "        - scripts/train.py\n        - ccl/report/render.py\n")
    copy = tmp_path / "dvc.yaml"
    copy.write_text(broken, encoding="utf-8")

    assert main(["--file", str(copy), "--check"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "sync_deps: dvc.yaml: stage build_sft: adds ccl/stages/build_sft.py" in out
    assert "sync_deps: dvc.yaml: stage train: removes ccl/report/render.py" in out
    assert len(out) == 2 and copy.read_text(encoding="utf-8") == broken  # --check writes nothing

    assert main(["--file", str(copy)]) == 0
    assert copy.read_bytes() == (ROOT / "dvc.yaml").read_bytes()
    assert "rewrote 2 stage(s)" in capsys.readouterr().out
    assert not [p for p in tmp_path.iterdir() if p.name != "dvc.yaml"]  # the temporary file was renamed


def test_study_two_keeps_its_own_order():
    """Study 2 sorts the script among the modules and lists the page's templates after them."""
    original = (ROOT / "study2" / "dvc.yaml").read_text(encoding="utf-8")
    broken = edit(original, "report", "      - scripts/report_study2.py\n", "")
    broken = edit(broken, "report", "      - ccl/report/templates/study2.md.j2\n", "")
    new, changes, notes, errors = sync(broken, "study2/dvc.yaml")
    assert new == original and not notes and not errors
    assert [(c.stage, c.added, c.removed) for c in changes] == [
        ("report", ["ccl/report/templates/study2.md.j2", "scripts/report_study2.py"], [])]


def test_comments_and_data_entries_survive():
    original = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    commented = edit(original, "train", "        - configs/models.yaml\n",
                     "        # the registry names the base model\n        - configs/models.yaml\n")
    broken = edit(commented, "train", "        - scripts/model_store.py\n", "")
    broken = edit(broken, "train", "        - runs/val_baseline.json\n",
                  "        - runs/val_baseline.json\n        - ccl/report/render.py\n")
    new, changes, _, _ = sync(broken, "dvc.yaml")
    assert new == commented
    assert [(c.stage, c.added, c.removed) for c in changes] == [
        ("train", ["scripts/model_store.py"], ["ccl/report/render.py"])]


STAGE = """\
stages:
  repeat_audit:  # {note}
    cmd: python -m scripts.repeat_audit
    deps:
{deps}    outs:
      - results/learn/repeat_audit.json:
          cache: false
"""


def test_a_stage_alone_gets_the_first_study_order_and_a_dropped_entry_hands_on_its_comment():
    deps = ("      - results/runs  # every evaluated run\n"
            "      # a module the stage never imports\n"
            "      - ccl/report/render.py\n"
            "      - data/v1/tasks:\n"
            "          remote: elsewhere\n")
    new, changes, _, _ = sync(STAGE.format(note="one stage", deps=deps), "dvc.yaml")
    modules, _ = code_needed("scripts/repeat_audit.py")  # the script first, then ccl/..., scripts/cli.py...
    code = ["scripts/repeat_audit.py", *sorted(modules - {"scripts/repeat_audit.py"})]
    expected = "".join(f"      - {c}\n" for c in code) + ("      - results/runs  # every evaluated run\n"
                                                          "      # a module the stage never imports\n"
                                                          "      - data/v1/tasks:\n"
                                                          "          remote: elsewhere\n")
    assert new == STAGE.format(note="one stage", deps=expected)
    assert changes[0].removed == ["ccl/report/render.py"] and changes[0].added == sorted(code)
    assert sync(new, "dvc.yaml")[1] == []  # once written, in order


def test_a_deps_list_it_cannot_read_is_left_as_it_is_and_fails():
    text = STAGE.format(note="flow list", deps="").replace("    deps:\n", "    deps: [results/runs]\n")
    new, changes, _, errors = sync(text, "dvc.yaml")
    assert new == text and not changes
    assert errors == ["stage repeat_audit: its deps are not a block list (one `- path` a line); left as it is"]


def test_a_write_is_refused_when_the_file_changed_meanwhile(tmp_path):
    path = tmp_path / "dvc.yaml"
    path.write_text("edited by someone else\n")
    with pytest.raises(RuntimeError, match="changed while its stages were computed"):
        write_atomically(path, "new\n", expected="what was read\n")
    assert path.read_text() == "edited by someone else\n" and [p.name for p in tmp_path.iterdir()] == ["dvc.yaml"]
    write_atomically(path, "new\n", expected="edited by someone else\n")
    assert path.read_text() == "new\n"

