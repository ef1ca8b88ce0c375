"""params.yaml refuses typos before any work: one line naming the file, the key and what is valid."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ccl.config import ConfigError, load_params, stage_config
from ccl.evaluation import EvaluateConfig
from ccl.train.recipe import TrainRecipe

ROOT = Path(__file__).resolve().parents[1]
PARAMS = (ROOT / "params.yaml").read_text()


def broken(tmp_path: Path, old: str, new: str) -> Path:
    assert old in PARAMS, old
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old, new, expected", [
    ("\nevaluate:\n", "\nevalute:\n", "unknown section(s) ['evalute']; valid sections: profile, runs, models"),
    ("      lr_min: 1.0e-4\n", "      lr_mn: 1.0e-4\n", "train: unknown key(s) ['lr_mn']"),
    ("      lr: 1.0e-3  #", "      lr: 1.0e-3x  #", "train.lr: expected a number, got '1.0e-3x'"),
    ("      lr: 1.0e-3  #", "      lr: 1e-3  #", "(YAML reads 1e-3 as text: write 1.0e-3)"),
    ("      max_tasks_per_split: 32\n", "      max_tasks_per_split: 32.5\n",
     "evaluate.max_tasks_per_split: expected an integer or null, got 32.5"),
    ("      splits: [eval_id, eval_ood, eval_unseen, eval_renamed]\n", "      splits: eval_id\n",
     "evaluate.splits: expected a list of text, got 'eval_id'"),
    ("      batch_size: 32\n      max_new_tokens: 128", "      batch_size: [32\n      max_new_tokens: 128",
     "YAML syntax error at line"),
])
def test_a_typo_is_one_line_naming_the_file_and_the_key(tmp_path, old, new, expected):
    path = broken(tmp_path, old, new)
    with pytest.raises(ConfigError) as e:
        params = load_params(path)
        stage_config(params, "train", TrainRecipe, "cpu", where=str(path))
        stage_config(params, "evaluate", EvaluateConfig, "cpu", where=str(path))
    message = str(e.value)
    assert expected in message and str(path) in message and "\n" not in message


def test_a_stage_script_prints_one_line_and_no_traceback(tmp_path):
    path = broken(tmp_path, "\nevaluate:\n", "\nevalute:\n")
    r = subprocess.run([sys.executable, "scripts/evaluate.py", "--name", "oracle", "--params", str(path)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [f"evaluate: {path}: unknown section(s) ['evalute']; valid sections: "
                                             "profile, runs, models, build_datasets, distill, build_sft, train, "
                                             "evaluate, analyze"]


def test_the_committed_params_are_valid_for_every_profile():
    params = load_params(ROOT / "params.yaml")
    for profile in ("paper", "cpu", "smoke"):
        assert stage_config(params, "evaluate", EvaluateConfig, profile)[0].splits
        assert stage_config(params, "train", TrainRecipe, profile)[0].lr > 0
