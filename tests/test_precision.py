"""Precision as a recipe setting (issue 56): float32 keeps every record as it was; bfloat16 trains with
bfloat16 products and float32 LoRA weights, gradients and optimizer state, and says so in its records."""
from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from ccl.config import ConfigError, stage_config
from ccl.devices import kernel_path
from ccl.train import torch_trainer as T
from ccl.train.recipe import TrainRecipe, recipe_record
from ccl.vocabulary import DEFAULT_PRECISION
from tests.train_fixtures import TINY, run

BF16 = dataclasses.replace(TINY, precision="bfloat16")


def test_a_float32_recipe_records_what_it_recorded_before_precision_was_a_setting():
    record = recipe_record(TINY)
    assert "precision" not in record  # absent reads as float32: published runs keep their bytes
    assert set(record) == {f.name for f in dataclasses.fields(TrainRecipe)} - {"precision"}
    assert recipe_record(BF16)["precision"] == "bfloat16"


def test_precision_is_read_from_params_and_a_wrong_one_is_refused_naming_the_key():
    params = {"profile": "smoke", "train": {"profiles": {"smoke": {"precision": "bfloat16"}}}}
    assert stage_config(params, "train", TrainRecipe)[0].precision == "bfloat16"
    params["train"]["profiles"]["smoke"]["precision"] = "float16"
    with pytest.raises(ConfigError, match=r"train\.precision: expected one of 'float32', 'bfloat16', got 'float16'"):
        stage_config(params, "train", TrainRecipe)
    assert stage_config({"profile": "smoke", "train": {}}, "train", TrainRecipe)[0].precision == DEFAULT_PRECISION


def test_a_validation_baseline_serves_only_runs_of_its_own_precision(tiny_model, data_dir):
    from ccl.train.run import _same_key, baseline_key

    val = data_dir / "sft" / "oracle_val.jsonl"
    f32_key, bf16_key = (baseline_key(r, "tiny", tiny_model, "torch", "cpu", val) for r in (TINY, BF16))
    assert "precision" not in f32_key and bf16_key == {**f32_key, "precision": "bfloat16"}
    assert _same_key(f32_key, f32_key) and _same_key(bf16_key, bf16_key)
    assert not _same_key(bf16_key, f32_key)  # a bfloat16 baseline never passes for a float32 run
    assert not _same_key(f32_key, bf16_key)


def test_kernel_path_from_the_flags():
    assert kernel_path({"avx512f", "amx_bf16", "amx_tile", "avx512_bf16"}) == "amx-bf16"
    assert kernel_path({"avx512f", "avx512_bf16"}) == "avx512-bf16"  # AMD Zen 4
    assert kernel_path({"avx512f", "amx_tile"}) == "none"  # tiles without their bfloat16 instructions
    assert kernel_path({"avx2", "fma"}) == "none"


def test_a_bfloat16_model_keeps_its_lora_in_float32_from_the_same_start(tiny_model):
    f32, bf16 = (T.load_for_training(tiny_model, r, 0, "cpu") for r in (TINY, BF16))
    lora = {n: p for n, p in bf16.model.named_parameters() if p.requires_grad}
    frozen = [p for p in bf16.model.parameters() if not p.requires_grad]
    assert lora and all(p.dtype == torch.float32 for p in lora.values())
    assert frozen and all(p.dtype == torch.bfloat16 for p in frozen)
    start = dict(f32.model.named_parameters())
    assert all(torch.equal(p, start[n]) for n, p in lora.items())  # the same LoRA A draws as float32's
    assert bf16.precision == "bfloat16" and f32.precision == "float32"


def test_a_bfloat16_step_computes_in_bfloat16_and_follows_float32_closely(tiny_model, data_dir):
    from ccl.artifacts.jsonio import read_jsonl

    rows = list(read_jsonl(data_dir / "variants" / "C.jsonl"))[:4]
    out = {}
    for recipe in (TINY, BF16):
        tm = T.load_for_training(tiny_model, recipe, 0, "cpu")
        packed = [tm.pack(r["messages"], recipe.max_length) for r in rows]
        seen: list[torch.dtype] = []
        hook = tm.model.get_base_model().lm_head.register_forward_hook(lambda m, i, o: seen.append(o.dtype))
        opt = T.make_optimizer(tm, recipe)
        step = T.train_step(tm, opt, packed, recipe, 1e-2)
        hook.remove()
        state = opt.state_dict()["state"]
        assert state and all(s["exp_avg"].dtype == torch.float32 for s in state.values())  # float32 moments
        out[recipe.precision] = (step["loss"], seen)
    assert set(out["float32"][1]) == {torch.float32} and set(out["bfloat16"][1]) == {torch.bfloat16}
    # the same batch, the same start: bfloat16's 8-bit mantissa moves the loss by well under 1%
    assert out["bfloat16"][0] == pytest.approx(out["float32"][0], rel=1e-2)
    assert out["bfloat16"][0] != out["float32"][0]  # and it did compute otherwise


def test_a_bfloat16_run_says_so_in_its_records_and_a_float32_one_as_before(tiny_model, data_dir, tmp_path):
    bf = run(tiny_model, data_dir, tmp_path / "bf16", recipe=BF16)
    f32 = run(tiny_model, data_dir, tmp_path / "f32")
    assert bf["precision"] == "bfloat16" and f32["precision"] == "float32"
    assert bf["machine"]["kernel_path"] in ("amx-bf16", "avx512-bf16", "none", "unknown")
    config = {k: json.loads((tmp_path / k / "runs" / "C_s0" / "config.json").read_text()) for k in ("bf16", "f32")}
    assert config["bf16"]["recipe"]["precision"] == "bfloat16" and "precision" not in config["f32"]["recipe"]
    assert abs(bf["val_loss"] - f32["val_loss"]) < 0.05 * f32["val_loss"]


def test_the_mlx_trainer_refuses_bfloat16_in_one_line(tiny_model):
    pytest.importorskip("mlx_lm")
    from ccl.train import mlx_trainer
    from ccl.train.errors import TrainingError

    with pytest.raises(TrainingError, match="computes in float32 only"):
        mlx_trainer.load_for_training(tiny_model, BF16, 0)


# ---------------------------------------------------------------- generation
def test_a_bfloat16_torch_engine_keeps_a_float32_output_projection(tiny_model):
    from ccl.policy.torch_backend import TorchBackend

    ref, bf = TorchBackend(tiny_model), TorchBackend(tiny_model, precision="bfloat16")
    assert bf.model.get_input_embeddings().weight.dtype == torch.bfloat16  # untied from the head
    assert bf.model.get_output_embeddings().weight.dtype == torch.float32
    assert torch.equal(bf.model.get_output_embeddings().weight, ref.model.get_output_embeddings().weight)
    ids = torch.tensor([[1, 5, 9, 14, 3]])
    with torch.inference_mode():
        got, want = bf.model(input_ids=ids).logits, ref.model(input_ids=ids).logits
    assert got.dtype == torch.float32  # greedy decoding compares float32 logits
    assert not torch.equal(got, want) and torch.allclose(got, want, atol=0.05)


def test_mlx_and_unknown_precisions_are_refused_before_loading():
    from ccl.models.registry import ModelError
    from ccl.policy.load import load_backend
    from scripts.model_store import model_store

    with pytest.raises(ModelError, match="the mlx backend generates in float32 only"):
        load_backend(model_store(), "smollm2-135m-instruct", "mlx", precision="bfloat16")
    with pytest.raises(ModelError, match="unknown precision 'fp8'"):
        load_backend(model_store(), "smollm2-135m-instruct", "torch", precision="fp8")


def test_the_students_precision_comes_from_params_and_the_teacher_stays_float32(smoke_data, tmp_path):
    import yaml

    from ccl.stages.evaluate import plan
    from ccl.vocabulary import STUDENT_BASE, TEACHER
    from scripts.layout import PARAMS

    params = yaml.safe_load(PARAMS.read_text())
    params["models"]["profiles"]["smoke"]["student_precision"] = "bfloat16"
    edited = tmp_path / "params.yaml"
    edited.write_text(yaml.safe_dump(params))
    assert plan(edited, "smoke", STUDENT_BASE, None, smoke_data.parent).precision == "bfloat16"
    assert plan(edited, "smoke", TEACHER, None, smoke_data.parent).precision == "float32"
    assert plan(PARAMS, "smoke", STUDENT_BASE, None, smoke_data.parent).precision == "float32"


def test_a_float32_evaluation_record_names_no_precision(smoke_data, tmp_path):
    """The oracle's evaluation (float32 by definition, no model) writes generation.json as before: no
    precision key, so a published float32 record keeps its bytes."""
    from ccl.stages import evaluate
    from ccl.vocabulary import ORACLE
    from scripts.layout import PARAMS
    from scripts.model_store import model_store

    p = evaluate.plan(PARAMS, "smoke", ORACLE, None, smoke_data.parent)
    evaluate.run(dataclasses.replace(p, tasks=p.tasks[:2]), model_store(), tmp_path, say=lambda s: None)
    record = json.loads((tmp_path / ORACLE / "generation.json").read_text())
    assert p.precision == "float32" and "precision" not in record and record["backend"] is None


@pytest.mark.parametrize("engine", ["openvino", "torch"])
def test_smoke_evaluation_in_bfloat16_completes_and_says_so(engine, smoke_data, tmp_path):
    """The evaluate stage on the smoke profile's tasks with the student in bfloat16: every episode ends,
    is judged, and generation.json names the precision."""
    from ccl.artifacts.jsonio import read_jsonl
    from ccl.judge.judging import verdict_row
    from ccl.stages import evaluate
    from ccl.vocabulary import STUDENT_BASE
    from scripts.layout import PARAMS
    from scripts.model_store import model_store

    p = evaluate.plan(PARAMS, "smoke", STUDENT_BASE, None, smoke_data.parent)
    p = dataclasses.replace(p, backend=engine, tasks=p.tasks[:3], precision="bfloat16")
    rows = list(read_jsonl(evaluate.run(p, model_store(), tmp_path, say=lambda s: None)))
    assert [r["task_id"] for r in rows] == [t["id"] for t in p.tasks]
    tasks = {t["id"]: t for t in p.tasks}
    assert all(isinstance(verdict_row(tasks[r["task_id"]], r)["verdict"]["success"], bool) for r in rows)
    record = json.loads((tmp_path / STUDENT_BASE / "generation.json").read_text())
    assert record["precision"] == "bfloat16" and record["backend"] == engine


def test_the_smoke_recipe_trains_in_bfloat16_near_its_float32_run(smoke_study, tmp_path):
    """The smoke profile's C_s0 recipe and data, on the embedded student, in bfloat16: the run passes the
    stability rule, says so in its records, and ends within 10% of the smoke study's float32 validation
    loss (the same start, data and order; only the products' precision differs)."""
    from ccl.config import load_params
    from ccl.models.weights import model_dir
    from ccl.train.run import train_run
    from ccl.vocabulary import Run
    from scripts.layout import PARAMS
    from scripts.model_store import model_store

    recipe = dataclasses.replace(stage_config(load_params(PARAMS), "train", TrainRecipe, "smoke")[0], precision="bfloat16")
    data = smoke_study / "data" / "v1"
    summary = train_run(Run("C", 0), recipe, "smollm2-135m-instruct", model_dir(model_store(), "smollm2-135m-instruct"),
                        "torch", data / "variants" / "C.jsonl", data / "sft" / "oracle_val.jsonl", tmp_path / "runs",
                        tmp_path / "archive", tmp_path / "stability.jsonl", "cpu")
    f32 = json.loads((smoke_study / "runs" / "C_s0" / "summary.json").read_text())
    assert summary["stability"] == "passed" and summary["precision"] == "bfloat16" and f32["precision"] == "float32"
    assert summary["steps"] == f32["steps"]
    assert summary["val_loss"] == pytest.approx(f32["val_loss"], rel=0.10)
    assert (tmp_path / "runs" / "C_s0" / "adapter" / T.ADAPTER_FILE).is_file()


def test_the_published_runs_record_the_recipe_the_code_records_today():
    """A rerun of a published float32 run writes the recipe its committed config.json holds: the
    precision setting added nothing to a float32 record (no published byte moves)."""
    from ccl.config import load_params
    from scripts.layout import PARAMS, ROOT

    recipe = stage_config(load_params(PARAMS), "train", TrainRecipe, "cpu")[0]
    for run_name in ("C_s0", "B_s1", "Dmix_s0"):
        config = json.loads((ROOT / "runs" / run_name / "config.json").read_text())
        assert config["recipe"] == recipe_record(recipe), run_name
