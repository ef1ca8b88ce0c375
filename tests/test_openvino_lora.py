"""The OpenVINO sampler with the LoRA applied at run time (issue 56, ccl.policy.openvino_lora): the names
GenAI matches, the weights it receives, and its transcripts against torch's on the same live model,
before and after the weights change."""
from __future__ import annotations

import dataclasses

import pytest
import torch

from ccl.config import load_params, stage_config
from ccl.models.openvino_export import LORA_PREFIX, ir_name, lora_tensors
from ccl.models.registry import ModelError
from ccl.train.recipe import TrainRecipe

STUDENT = "smollm2-135m-instruct"


def test_ir_names_bracket_every_index_and_nothing_else():
    assert ir_name("model.layers.10.self_attn.q_proj") == "model.layers[10].self_attn.q_proj"
    assert ir_name("model.layers.1") == "model.layers[1]"
    assert ir_name("model.layers.2.mlp.experts.0.up_proj") == "model.layers[2].mlp.experts[0].up_proj"
    assert ir_name("model.embed_tokens") == "model.embed_tokens"
    assert ir_name("model.layers.3.proj2") == "model.layers[3].proj2"  # a digit inside a name stays


@pytest.fixture(scope="module")
def learner():
    """The cpu recipe's LoRA on the embedded student, B drawn away from zero (a fresh LoRA is a no-op)."""
    from ccl.models.weights import model_dir
    from ccl.train.torch_trainer import load_for_training
    from scripts.layout import PARAMS
    from scripts.model_store import model_store

    recipe = stage_config(load_params(PARAMS), "train", TrainRecipe, "cpu")[0]
    folder = model_dir(model_store(), STUDENT)
    tm = load_for_training(folder, dataclasses.replace(recipe, dropout=0.0), 0, "cpu")
    draw(tm.model, seed=1)
    return tm, folder


def draw(model, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)


def test_lora_tensors_fold_the_scaling_into_b_under_genai_names(learner):
    tm, _ = learner
    module = tm.model.get_submodule("base_model.model.model.layers.10.self_attn.q_proj")
    out = lora_tensors(tm.model)
    a, b = out[f"{LORA_PREFIX}model.layers[10].self_attn.q_proj.lora_A.weight"], \
        out[f"{LORA_PREFIX}model.layers[10].self_attn.q_proj.lora_B.weight"]
    assert torch.equal(a, module.lora_A["default"].weight.detach())
    assert torch.equal(b, module.lora_B["default"].weight.detach() * module.scaling["default"])
    assert module.scaling["default"] != 1.0  # else the fold would go unchecked
    modules = sum(1 for _, m in tm.model.named_modules() if hasattr(m, "lora_A") and "default" in m.lora_A)
    assert len(out) == 2 * modules and all(t.dtype == torch.float32 for t in out.values())


def test_a_lora_module_the_ir_does_not_name_stops_the_export(learner):
    tm, _ = learner
    with pytest.raises(ModelError, match=r"no MatMul named after model\.layers\[10\]\.self_attn\.q_proj\.weight"):
        lora_tensors(tm.model, targets={"model.layers[11].self_attn.q_proj"})


def test_the_openvino_sampler_follows_the_live_weights_as_torch_does(learner):
    """Greedy transcripts through OpenVINO (base graph, LoRA at run time) and through torch (the same live
    peft model) are the same token for token; after the weights change and forget_prefixes, the same again
    under the new weights, and different from before (the new weights reached the sampler, and no prefix
    cached under the old ones was served); forget_prefixes with unchanged weights loads nothing."""
    from ccl.policy.base import GenConfig
    from ccl.policy.openvino_lora import OpenVINOLoraBackend
    from ccl.policy.torch_backend import TorchBackend
    from scripts.model_store import model_store

    tm, folder = learner
    ov = OpenVINOLoraBackend.around(tm.model, tm.tok, folder, model_store().spec(STUDENT), max_seqs=4)
    pt = TorchBackend.around(tm.model, tm.tok)
    prompt = pt.render([{"role": "user", "content": "Name three tools for woodwork, then a river in Spain."}])
    gen = GenConfig(max_new_tokens=24)

    def both() -> tuple[str, str]:
        return (ov.generate([{}], [prompt], gen, [0])[0].text, pt.generate([{}], [prompt], gen, [0])[0].text)

    first = both()
    assert first[0] == first[1] and len(ov.loads) == 1
    ov.forget_prefixes()
    assert len(ov.loads) == 1  # the same weights: no new pipeline
    draw(tm.model, seed=2)
    ov.forget_prefixes()
    pt.forget_prefixes()
    second = both()
    assert len(ov.loads) == 2 and second[0] == second[1] and second[0] != first[0]


def test_a_grpo_arm_samples_on_openvino_and_says_so(smoke_study, tmp_path):
    """The GRPO stage on the smoke profile with ``grpo.sampler`` openvino: it trains, reloads the LoRA once
    per update (the weights change only then; unchanged weights load nothing), and its records name the
    sampler; the torch sampler's records name none (a published run keeps its bytes)."""
    from ccl.artifacts.jsonio import read_json, read_jsonl
    from ccl.stages import grpo_train
    from scripts.layout import PARAMS
    from scripts.model_store import model_store

    data, c = smoke_study / "data" / "v1", smoke_study / "runs" / "C_s0"
    p = grpo_train.plan(PARAMS, "smoke", "C_grpo_decomposed_s0", data)
    p = dataclasses.replace(p, cfg=dataclasses.replace(p.cfg, sampler="openvino"))
    out = grpo_train.run(p, model_store(), c, tmp_path / "runs", "cpu")
    log = list(read_jsonl(tmp_path / "runs" / p.run / "train_log.jsonl"))
    updates = sum(r["updated"] for r in log)
    assert updates >= 1  # measured on the smoke sizes: step 0 has spread under the decomposed reward
    assert out["sampler"] == "openvino" and out["sampler_loads"] == 1 + updates
    assert read_json(tmp_path / "runs" / p.run / "config.json")["grpo"]["sampler"] == "openvino"
    assert out["adapter_sha256"] != read_json(c / "summary.json")["adapter_sha256"]


class _Tiny(torch.nn.Module):
    """model.layers[0].proj and a norm: the smallest module tree with a transformers-like name."""

    def __init__(self):
        super().__init__()
        self.model = torch.nn.Module()
        self.model.layers = torch.nn.ModuleList([torch.nn.Module()])
        self.model.layers[0].proj = torch.nn.Linear(4, 4, bias=False)
        self.model.norm = torch.nn.LayerNorm(4)

    def forward(self, x):
        return self.model.norm(self.model.layers[0].proj(x))


def _tiny_peft(**lora):
    from peft import LoraConfig, get_peft_model

    return get_peft_model(_Tiny(), LoraConfig(r=2, lora_alpha=4, target_modules=["proj"], **lora))


def test_a_tiny_peft_model_exports_under_bracketed_names_with_its_scaling():
    model = _tiny_peft()
    out = lora_tensors(model, targets={"model.layers[0].proj"})
    assert sorted(out) == [f"{LORA_PREFIX}model.layers[0].proj.lora_A.weight", f"{LORA_PREFIX}model.layers[0].proj.lora_B.weight"]
    layer = model.get_submodule("base_model.model.model.layers.0.proj")
    assert layer.scaling["default"] == 2.0  # alpha 4 over rank 2
    assert torch.equal(out[f"{LORA_PREFIX}model.layers[0].proj.lora_B.weight"], layer.lora_B["default"].weight.detach() * 2)


def test_what_run_time_lora_cannot_carry_is_refused():
    with pytest.raises(ModelError, match="carries no LoRA adapter named 'default'"):
        lora_tensors(_Tiny())
    with pytest.raises(ModelError, match="a DoRA adapter is not a plain low-rank update"):
        lora_tensors(_tiny_peft(use_dora=True))
    model = _tiny_peft()
    model.get_submodule("base_model.model.model.norm").weight.requires_grad_(True)  # a module trained beside the LoRA
    with pytest.raises(ModelError, match=r"trainable weights run-time LoRA would not carry.*model\.norm\.weight.*\(1 in all\)"):
        lora_tensors(model)


def test_name_matmuls_names_the_weight_fed_matmuls_and_the_saved_ir_keeps_them(tmp_path):
    """Two projections fed by named weights get ``<module>/MatMul``; a product of two activations and an
    unnamed constant keep their names; the saved IR gives the same set back."""
    import numpy as np
    import openvino as ov
    from openvino import opset13 as ops

    from ccl.models.openvino_export import IR, lora_targets_of, name_matmuls

    x = ops.parameter([1, 4], np.float32, name="x")
    def weight(name):
        c = ops.constant(np.eye(4, dtype=np.float32))
        c.set_friendly_name(name)
        return c
    q = ops.matmul(x, weight("model.layers[1].self_attn.q_proj.weight"), False, True)
    up = ops.matmul(q, weight("model.layers[10].mlp.up_proj.weight"), False, True)
    scores = ops.matmul(up, q, True, False)  # activations only: (4, 1) x (1, 4)
    other = ops.matmul(scores, weight("rotary_table"), False, False)  # a constant not named as a weight
    graph = ov.Model([other], [x], "tiny")
    named = name_matmuls(graph)
    assert named == {"model.layers[1].self_attn.q_proj", "model.layers[10].mlp.up_proj"}
    names = {op.get_friendly_name() for op in graph.get_ordered_ops() if op.get_type_name() == "MatMul"}
    assert {"model.layers[1].self_attn.q_proj/MatMul", "model.layers[10].mlp.up_proj/MatMul"} <= names
    assert len(names) == 4
    ov.save_model(graph, str(tmp_path / IR))
    assert lora_targets_of(tmp_path) == named
