"""paper-sim: the paper profiles' code paths end to end on CPU, with tiny random models of the paper
architectures standing in for the hub models through the documented override (CCL_MODEL_PATH_<NAME>),
the sizes cut to two tasks per split and two training steps.

- ``paper`` (Apple silicon): Qwen2 student trained and evaluated on MLX, Qwen3.5 teacher as 4-bit MLX
  weights (here through mlx's CPU build);
- ``paper-cuda``: the same student on torch, the Qwen3.5 teacher in its own (vision-language shaped)
  checkpoint on torch: the hybrid-cache decoder.

Every stage runs as its script, in a repository-shaped root, as dvc would run it: distill (both
passes), accept_teacher, build_sft, train, evaluate, judge, analyze, report. Slow (minutes): MLX on
Linux CPU uses a slow BLAS, and the stages start a fresh interpreter each.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from tiny_models import mlx_quantised, save_tiny

from ccl.models.registry import local_path_variable
from ccl.models.weights import model_dir
from scripts.model_store import model_store

ROOT = Path(__file__).resolve().parents[1]

# the profile's sizes for every section: two tasks per split, two training steps
TINY_SIZES = {
    "build_datasets": {"train_pool": 96, "val_pool": 24, "eval_id": 24, "eval_ood": 32, "eval_unseen": 8,
                       "eval_renamed": 16, "eval_catalog": 12},
    "distill": {"n": 4, "batch_size": 4, "chunk": 4, "max_new_tokens": 24, "pass2_max": 2},
    "build_sft": {"budget": 4, "c_full": 8},
    "train": {"steps": 2, "warmup": 1, "batch_size": 2, "grad_accum": 1, "checkpoint_every": 1,
              "max_length": 1024, "val_episodes": 2},
    "evaluate": {"max_tasks_per_split": 2, "batch_size": 4, "max_new_tokens": 24},
    "analyze": {"n_resamples": 200, "n_flips": 200},
}


def sim_params(profile: str) -> dict:
    """params.yaml with ``profile`` active and its sizes cut (its models section untouched)."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["profile"] = profile
    for section, sizes in TINY_SIZES.items():
        params[section].setdefault("profiles", {})[profile] = sizes
    return params


def models_of(profile: str) -> tuple[str, str, str]:
    """The profile's student, teacher and teacher backend (params.yaml's models section)."""
    from ccl.config import ModelsConfig, stage_config
    models, _ = stage_config(sim_params(profile), "models", ModelsConfig)
    return models.student, models.teacher, models.teacher_backend


def stand_ins(profile: str, folder: Path) -> dict[str, str]:
    """The override variables pointing the profile's hub models at tiny random ones."""
    student_name, teacher_name, teacher_backend = models_of(profile)
    tok = model_dir(model_store(), "smollm2-135m-instruct")  # a ChatML tokenizer, as the Qwen models use
    student = save_tiny(folder / "student", "qwen2", tok)
    teacher = save_tiny(folder / "teacher", "qwen3_5", tok)
    if teacher_backend == "mlx":  # the write-up's teacher is a 4-bit MLX conversion
        teacher = mlx_quantised(teacher, folder / "teacher-mlx4")
    return {local_path_variable(student_name): str(student), local_path_variable(teacher_name): str(teacher)}


def stage(env: dict, *args: str) -> None:
    r = subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"{args[0]} failed:\n{r.stdout[-2000:]}{r.stderr[-4000:]}"


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["paper", "paper-cuda"])
def test_paper_profile_runs_end_to_end_on_tiny_stand_ins(profile, tmp_path):
    root = tmp_path / "study"
    data = root / "data" / "v1"
    data.mkdir(parents=True)
    (root / "params.yaml").write_text(yaml.safe_dump(sim_params(profile), sort_keys=False))
    (root / "dvc.yaml").symlink_to(ROOT / "dvc.yaml")
    env = {**os.environ, **stand_ins(profile, tmp_path / "models"), "HF_HUB_OFFLINE": "1"}
    p = ["--params", str(root / "params.yaml")]
    stage(env, "scripts.build_datasets", *p, "--out", str(data))
    for script in ("scripts.distill", "scripts.distill_pass2", "scripts.accept_teacher"):
        stage(env, script, *p, "--data", str(data), "--out", str(data / "teacher"))
    stage(env, "scripts.build_sft", *p, "--data", str(data), "--out", str(data / "variants"))
    runs, results = root / "runs", root / "results" / "runs"
    stage(env, "scripts.train", "C_s0", *p, "--data", str(data), "--runs", str(runs),
          "--archive", str(root / "archive"), "--stability-log", str(root / "logs" / "stability.jsonl"))
    for name, extra in (("A_base", []), ("teacher", []), ("oracle", []), ("C_s0", ["--adapter", str(runs / "C_s0")])):
        stage(env, "scripts.evaluate", *p, "--name", name, *extra, "--data", str(data), "--out", str(results))
        stage(env, "scripts.judge", "--name", name, "--data", str(data), "--runs", str(results))
    stage(env, "scripts.analyze", *p, "--runs", str(results), "--out", str(root / "results" / "summary.json"))
    stage(env, "scripts.build_report", "--root", str(root))

    # the records name the stand-ins' registry models and the profile's backends
    student_backend, teacher_backend = {"paper": ("mlx", "mlx"), "paper-cuda": ("torch", "torch")}[profile]
    for n in (1, 2):
        teacher = json.loads((data / "teacher" / f"pass{n}.json").read_text())["teacher"]
        assert (teacher["model"], teacher["backend"]) == (models_of(profile)[1], teacher_backend)
    assert json.loads((data / "teacher" / "pass2.json").read_text())["episodes"] >= 1  # pass 2 resampled
    train = json.loads((runs / "C_s0" / "summary.json").read_text())
    assert (train["steps"], train["backend"], train["stability"]) == (2, student_backend, "passed")
    for name, backend in (("A_base", student_backend), ("teacher", teacher_backend), ("C_s0", student_backend)):
        gen = json.loads((results / name / "generation.json").read_text())
        assert (gen["profile"], gen["backend"], gen["efficiency"]["episodes"]) == (profile, backend, 14)  # 2 x 7 splits
    summary = json.loads((root / "results" / "summary.json").read_text())
    assert "C_s0" in json.dumps(summary)
    assert "C_s0" in (root / "results" / "report.md").read_text()
