"""LoRA adapters between PEFT and mlx-lm (ccl/models/adapter_convert.py): the same numbers, the same function."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from tiny_models import save_tiny

from ccl.models.adapter_convert import mlx_to_peft, peft_to_mlx
from ccl.models.weights import model_dir
from scripts.model_store import model_store


@pytest.fixture(scope="module")
def tiny_with_peft(tmp_path_factory):
    """A tiny random Qwen2 and a PEFT LoRA adapter on its last two blocks, B made non-zero."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM
    root = tmp_path_factory.mktemp("conv")
    folder = save_tiny(root / "tiny-qwen2", "qwen2", model_dir(model_store(), "smollm2-135m-instruct"))
    model = AutoModelForCausalLM.from_pretrained(folder)
    torch.manual_seed(1)
    peft = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"],
                                            layers_to_transform=[1, 2], task_type="CAUSAL_LM"))
    with torch.no_grad():
        for n, p in peft.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.5)
    peft.peft_config["default"].base_model_name_or_path = folder.name
    peft.save_pretrained(root / "peft")
    return folder, root / "peft"


def test_peft_to_mlx_and_back_keeps_every_number(tiny_with_peft, tmp_path):
    from safetensors.numpy import load_file
    folder, peft = tiny_with_peft
    mlx = peft_to_mlx(peft, tmp_path / "mlx")
    cfg = json.loads((mlx / "adapter_config.json").read_text())
    assert cfg["num_layers"] == 2 and cfg["lora_parameters"]["scale"] == 2.0
    assert cfg["lora_parameters"]["keys"] == ["mlp.down_proj", "self_attn.q_proj", "self_attn.v_proj"]
    back = mlx_to_peft(mlx, tmp_path / "peft-again", n_layers=3)
    a, b = load_file(peft / "adapter_model.safetensors"), load_file(back / "adapter_model.safetensors")
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    again = json.loads((back / "adapter_config.json").read_text())
    assert (again["r"], again["lora_alpha"], sorted(again["target_modules"]), again["layers_to_transform"]) == \
           (4, 8, ["down_proj", "q_proj", "v_proj"], [1, 2])


def test_both_backends_give_the_same_greedy_action_with_the_converted_adapter(tiny_with_peft, tmp_path):
    import mlx.core as mx

    from ccl.policy.base import GenConfig
    from ccl.policy.mlx_backend import MLXBackend
    from ccl.policy.torch_backend import TorchBackend
    folder, peft = tiny_with_peft
    mlx_adapter = peft_to_mlx(peft, tmp_path / "mlx")
    tb = TorchBackend(folder, adapter=peft, device="cpu")
    mb = MLXBackend(folder, adapter=mlx_adapter)
    base = MLXBackend(folder)
    prompt = tb.render([{"role": "user", "content": "Which tool reads files?"}])
    ids = tb.tok(prompt, add_special_tokens=False).input_ids
    with torch.inference_mode():
        t = tb.model(input_ids=torch.tensor([ids])).logits[0, -1].numpy()
    m = np.array(mb.model(mx.array([ids]))[0, -1].astype(mx.float32))
    b = np.array(base.model(mx.array([ids]))[0, -1].astype(mx.float32))
    scale = np.abs(t).max()
    assert np.abs(m - t).max() <= 1e-4 * scale  # the same function ...
    assert np.abs(b - t).max() > 100 * np.abs(m - t).max()  # ... and the adapter is what makes it
    gen = GenConfig(max_new_tokens=6)
    assert tb.generate([{}], [prompt], gen, [0])[0].text == mb.generate([{}], [prompt], gen, [0])[0].text


def test_each_backend_takes_the_other_trainers_adapter_folder(tiny_with_peft, tmp_path):
    """--backend mlx --adapter <a torch run> and the reverse: converted on load, same greedy text."""
    from ccl.policy.base import GenConfig
    from ccl.policy.mlx_backend import MLXBackend
    from ccl.policy.torch_backend import TorchBackend
    folder, peft = tiny_with_peft
    run = tmp_path / "runs" / "C_s0"
    peft_to_mlx(peft, run / "adapter")  # an MLX run's folder
    gen = GenConfig(max_new_tokens=6)
    tb_from_mlx = TorchBackend(folder, adapter=run, device="cpu")
    mb_from_peft = MLXBackend(folder, adapter=peft)
    prompt = tb_from_mlx.render([{"role": "user", "content": "Name a colour."}])
    assert tb_from_mlx.generate([{}], [prompt], gen, [0])[0].text == mb_from_peft.generate([{}], [prompt], gen, [0])[0].text
