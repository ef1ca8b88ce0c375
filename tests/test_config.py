"""params.yaml refuses typos before any work: one line naming the file, the key and what is valid."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from ccl.analysis.runs import AnalyzeConfig
from ccl.config import ConfigError, load_params, stage_config
from ccl.episode.evaluate_config import EvaluateConfig
from ccl.external.bfcl_config import CATEGORIES, BfclConfig
from ccl.train.recipe import StabilityRule, TrainRecipe

ROOT = Path(__file__).resolve().parents[1]
PARAMS = (ROOT / "params.yaml").read_text()


def broken(tmp_path: Path, old: str, new: str) -> Path:
    assert old in PARAMS, old
    path = tmp_path / "params.yaml"
    path.write_text(PARAMS.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old, new, expected", [
    ("\nevaluate:\n", "\nevalute:\n", "unknown section(s) ['evalute']; valid sections: profile, runs, replay_runs, models"),
    ("      lr_min: 1.0e-4\n", "      lr_mn: 1.0e-4\n", "train: unknown key(s) ['lr_mn']"),
    ("      lr: 1.0e-3  #", "      lr: 1.0e-3x  #", "train.lr: expected a number, got '1.0e-3x'"),
    ("      lr: 1.0e-3  #", "      lr: 1e-3  #", "(YAML reads 1e-3 as text: write 1.0e-3)"),
    ("      max_tasks_per_split: {eval_id: 96,", "      max_tasks_per_split: {eval_id: 96.5,",
     "evaluate.max_tasks_per_split: expected an integer or a mapping of text to an integer or null, got {'eval_id': 96.5"),
    ("replay_runs: [B_s0,", "replay_runs: [Dseq_s0, B_s0,", "replay_runs ['Dseq_s0'] are not in runs"),
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
    r = subprocess.run([sys.executable, "-m", "scripts.evaluate", "--name", "oracle", "--params", str(path)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [f"evaluate: {path}: unknown section(s) ['evalute']; valid sections: "
                                             "profile, runs, replay_runs, models, build_datasets, distill, accept_teacher, build_sft, "
                                             "train, "
                                             "evaluate, analyze, power, serve_eval, learned_runs, dagger_iterations, "
                                             "dagger, val_replay_runs, err, dpo, grpo, bfcl, bfcl_runs, fresh_pool, study1_c, scaled_c"]


def test_the_committed_params_are_valid_for_every_profile():
    params = load_params(ROOT / "params.yaml")
    for profile in ("paper", "cpu", "smoke"):
        assert stage_config(params, "evaluate", EvaluateConfig, profile)[0].splits
        assert stage_config(params, "train", TrainRecipe, profile)[0].lr > 0
        assert stage_config(params, "bfcl", BfclConfig, profile)[0].categories == CATEGORIES
    assert stage_config(params, "bfcl", BfclConfig, "paper")[0].per_category is None  # every question


def test_bfcl_runs_must_be_trained_runs_of_the_params(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("runs: [C_s0]\nlearned_runs: [C_err_s0]\nbfcl_runs: [C_s0, C_err_s0]\n")
    assert load_params(path)["bfcl_runs"] == ["C_s0", "C_err_s0"]
    path.write_text("runs: [C_s0]\nbfcl_runs: [B_s0]\n")
    with pytest.raises(ConfigError, match=r"bfcl_runs \['B_s0'\] are neither in runs nor in learned_runs"):
        load_params(path)
    path.write_text("runs: [C_s0]\nbfcl_runs: C_s0\n")
    with pytest.raises(ConfigError, match="bfcl_runs: expected a list of run names, got 'C_s0'"):
        load_params(path)


def resolve(stage: str, cls: type, section: object):
    return stage_config({"profile": "cpu", stage: section}, stage, cls, where="P.yaml")[0]


@pytest.mark.parametrize("stage, cls, section, expected", [
    ("train", TrainRecipe, {"rank": "5"}, "P.yaml: train.rank: expected an integer, got '5'"),
    ("train", TrainRecipe, {"rank": True}, "P.yaml: train.rank: expected an integer, got True"),
    ("train", TrainRecipe, {"rank": 5.0}, "P.yaml: train.rank: expected an integer, got 5.0"),
    ("train", TrainRecipe, {"lr": True}, "P.yaml: train.lr: expected a number, got True"),
    ("train", TrainRecipe, {"lr": "abc"}, "P.yaml: train.lr: expected a number, got 'abc'"),
    ("train", TrainRecipe, {"gradient_checkpointing": 1},
     "P.yaml: train.gradient_checkpointing: expected true or false, got 1"),
    ("train", TrainRecipe, {"zz": 1, "lr": "x", "aa": 2}, "P.yaml: train: unknown key(s) ['aa', 'zz']; valid keys: "
     "['adapt_fraction', 'batch_size', "),
    ("train", TrainRecipe, {1: 2}, "P.yaml: train: unknown key(s) [1]; valid keys: ['adapt_fraction', "),
    ("train", TrainRecipe, {"stability": {"emma": 0.5}}, "P.yaml: train.stability: unknown key(s) ['emma']; "
     "valid keys: ['ema', 'grad_patience', 'grad_ratio', 'loss_margin', 'loss_ratio']"),
    ("train", TrainRecipe, {"stability": {"ema": "1e-2"}},
     "P.yaml: train.stability.ema: expected a number, got '1e-2' (YAML reads 1e-3 as text: write 1.0e-3)"),
    ("train", TrainRecipe, {"stability": {"grad_patience": 2.0}},
     "P.yaml: train.stability.grad_patience: expected an integer, got 2.0"),
    ("train", TrainRecipe, {"stability": 3}, "P.yaml: train.stability: expected a mapping of keys, got 3"),
    ("train", TrainRecipe, [1], "P.yaml: train: expected a mapping of keys, got [1]"),
    ("train", TrainRecipe, {"profiles": [1]}, "P.yaml: train.profiles: expected a mapping of keys, got [1]"),
    ("train", TrainRecipe, {"profiles": {"cpu": 3}}, "P.yaml: train.profiles.cpu: expected a mapping of keys, got 3"),
    ("evaluate", EvaluateConfig, {"splits": ["eval_id", 3]},
     "P.yaml: evaluate.splits: expected a list of text, got ['eval_id', 3]"),
    ("evaluate", EvaluateConfig, {"splits": {"eval_id"}}, "P.yaml: evaluate.splits: expected a list of text, got"),
    ("analyze", AnalyzeConfig, {"alpha": 2.0}, "P.yaml: analyze: alpha must be in (0, 1), got 2.0"),  # __post_init__
])
def test_wrong_values_are_refused_in_one_line(stage, cls, section, expected):
    with pytest.raises(ConfigError) as e:
        resolve(stage, cls, section)
    assert str(e.value).startswith(expected) and "\n" not in str(e.value)


def test_values_keep_their_python_types():
    # an int for a float field stays the int: dataclasses.asdict(recipe) goes into run fingerprints
    recipe = resolve("train", TrainRecipe, {"lr": 1, "clip": 0.5, "stability": {"ema": 1, "grad_patience": 2}})
    assert type(recipe) is TrainRecipe and type(recipe.stability) is StabilityRule
    assert recipe == TrainRecipe(lr=1, clip=0.5, stability=StabilityRule(ema=1, grad_patience=2))
    assert [type(v) for v in (recipe.lr, recipe.clip, recipe.rank, recipe.stability.ema)] == [int, float, int, int]
    assert dataclasses.asdict(recipe)["lr"] == 1 and type(dataclasses.asdict(recipe)["lr"]) is int
    # a YAML list becomes the tuple the field declares, so configs stay hashable
    cfg = resolve("evaluate", EvaluateConfig, {"splits": ["eval_id"], "max_tasks_per_split": None})
    assert cfg == EvaluateConfig(splits=("eval_id",), max_tasks_per_split=None) and hash(cfg)
    assert resolve("train", TrainRecipe, None) == TrainRecipe()


def test_a_file_that_is_not_utf8_is_one_line(tmp_path):
    path = tmp_path / "params.yaml"
    path.write_bytes(b"profile: \xff\n")
    with pytest.raises(ConfigError, match=r"params.yaml: not UTF-8 text \(invalid start byte at byte 9\)$"):
        load_params(path)
