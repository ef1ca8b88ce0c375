"""A retrained run against the published one (ccl/models/adapter_check.py, verify.py --compare)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ccl.artifacts.jsonio import write_json, write_jsonl
from ccl.errors import InputError
from ccl.models.adapter_check import TOLERANCE, compare, describe

ROOT = Path(__file__).resolve().parents[1]


def run_folder(path: Path, tensors: dict, losses: list[float], val_loss: float) -> Path:
    from safetensors.numpy import save_file
    (path / "adapter").mkdir(parents=True)
    save_file(tensors, str(path / "adapter" / "adapter_model.safetensors"))
    write_jsonl(path / "train_log.jsonl", [{"step": i, "loss": x} for i, x in enumerate(losses)])
    write_json(path / "summary.json", {"val_loss": val_loss})
    return path


A = {"l.lora_A.weight": np.array([[3.0, 4.0]], dtype=np.float32),  # norm 5
     "l.lora_B.weight": np.array([[1.0], [0.0]], dtype=np.float32)}


def test_identical_adapters_are_bitwise(tmp_path):
    pub = run_folder(tmp_path / "pub", A, [1.0, 0.5], 0.25)
    again = run_folder(tmp_path / "again", A, [1.0, 0.5], 0.25)
    c = compare(pub, again)
    assert c.bitwise and c.within() and describe(c).startswith("BITWISE")


def test_a_retrained_run_is_judged_by_the_stated_tolerance(tmp_path):
    assert (TOLERANCE.weight_rel, TOLERANCE.loss_rel) == (0.02, 0.001)
    pub = run_folder(tmp_path / "pub", A, [1.0, 0.5], 0.25)
    near = {**A, "l.lora_A.weight": np.array([[3.0, 4.05]], dtype=np.float32)}  # 0.05 / 5: 1% of the norm
    close = run_folder(tmp_path / "close", near, [1.0, 0.5002], 0.25005)  # losses 0.04% and 0.02% off
    c = compare(pub, close)
    assert not c.bitwise and c.weight_tensor == "l.lora_A.weight" and c.loss_step == 1
    assert c.weight_rel == pytest.approx(0.01, rel=1e-4) and c.loss_rel == pytest.approx(4e-4)
    assert c.within() and describe(c).startswith("WITHIN TOLERANCE")
    drifted = {**A, "l.lora_A.weight": np.array([[3.0, 4.15]], dtype=np.float32)}  # 3% of the norm
    assert not compare(pub, run_folder(tmp_path / "drifted", drifted, [1.0, 0.5002], 0.25005)).within()
    far = run_folder(tmp_path / "far", near, [1.0, 0.501], 0.25)  # a step loss 0.2% off
    assert not compare(pub, far).within() and describe(compare(pub, far)).startswith("DIFFERS")
    r = subprocess.run([sys.executable, "-m", "scripts.verify", "--compare", str(pub), str(far)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 1 and "DIFFERS" in r.stdout


def test_runs_of_another_recipe_are_refused(tmp_path):
    pub = run_folder(tmp_path / "pub", A, [1.0, 0.5], 0.25)
    other = run_folder(tmp_path / "other", {"x.lora_A.weight": A["l.lora_A.weight"]}, [1.0, 0.5], 0.25)
    with pytest.raises(InputError, match="differ in names or shapes"):
        compare(pub, other)
    with pytest.raises(InputError, match="no adapter/adapter_model.safetensors or adapter/adapters.safetensors"):
        compare(pub, tmp_path)


def test_a_nan_anywhere_is_never_within_tolerance(tmp_path):
    pub = run_folder(tmp_path / "pub", A, [1.0, 0.5, 0.4], 0.25)
    nan_weight = {**A, "l.lora_B.weight": np.array([[1.0], [np.nan]], dtype=np.float32)}  # the later tensor
    assert not compare(pub, run_folder(tmp_path / "w", nan_weight, [1.0, 0.5, 0.4], 0.25)).within()
    assert not compare(pub, run_folder(tmp_path / "l", A, [1.0, float("nan"), 0.4], 0.25)).within()
    with pytest.raises(InputError, match="summary.json: cannot read the validation loss"):
        (tmp_path / "w" / "summary.json").write_text("{}")
        compare(pub, tmp_path / "w")
