"""The GPU check: the tiny-model paths on a CUDA device (``pytest -m cuda``; skipped without one).
Tiny random models need no weights and no network, so a machine with only the lock's packages and a
GPU runs them: the decoder against ``model.generate`` (float32, exact; bf16, the model's own logits),
a training step with exact resume, the hybrid-cache teacher, and memory accounting."""
from __future__ import annotations

import os

import pytest
import torch
from tiny_models import ARCHS, save_tiny

from ccl.models.weights import model_dir
from ccl.policy.base import GenConfig
from ccl.policy.torch_backend import TorchBackend
from ccl.train.torch_trainer import CUBLAS_CONFIG, CUBLAS_DETERMINISTIC
from scripts.model_store import model_store

os.environ.setdefault(CUBLAS_CONFIG, CUBLAS_DETERMINISTIC)  # as scripts/train.py sets it

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: run on a GPU machine")]


@pytest.fixture(scope="module", params=ARCHS)
def tiny_folder(request, tmp_path_factory):
    return save_tiny(tmp_path_factory.mktemp(request.param), request.param,
                     model_dir(model_store(), "smollm2-135m-instruct"))


def test_decoder_equals_generate_on_cuda_in_float32(tiny_folder):
    from test_hybrid import check_turns_equal_generate
    check_turns_equal_generate(TorchBackend(tiny_folder, device="cuda", dtype=torch.float32))


def test_bf16_decoder_follows_the_models_own_logits(tiny_folder):
    """bf16 (the paper-cuda dtype): each greedy token of the cached, batched decoder is the argmax of
    the model's own full forward over the same tokens, or within bf16 rounding of it."""
    b = TorchBackend(tiny_folder, device="cuda")
    assert b.dtype == torch.bfloat16
    generated: list[list[int]] = []  # the token ids, as generate hands them to the tokenizer to decode
    decode = b.tok.decode
    b.tok.decode = lambda ids, **kw: (generated.append(list(ids)) if kw.get("skip_special_tokens") else None) \
        or decode(ids, **kw)
    prompts = [b.render([{"role": "user", "content": q}]) for q in ("Name a colour.", "Which tool reads files?")]
    outs = b.generate([{}, {}], prompts, GenConfig(max_new_tokens=6), [0, 1])
    for p, o, new in zip(prompts, outs, generated):
        prompt = b.tok(p, add_special_tokens=False).input_ids
        ids = torch.tensor([prompt + new], device=b.device)
        with torch.inference_mode():
            logits = b.model(input_ids=ids).logits[0, len(prompt) - 1:-1].float()
        chosen = logits.gather(1, ids[0, len(prompt):, None]).squeeze(1)
        assert o.new_tokens == len(new) == 6
        # bf16 rounding: on CPU in bf16 the chosen token sat at most 0.6% of max|logit| below the best, while
        # the best two differ by about 3% (median); 2% admits rounding, not a generally worse token
        assert bool((logits.max(1).values - chosen <= 0.02 * logits.abs().max()).all())


@pytest.mark.parametrize("dropout", [0.0, 0.1], ids=["no-dropout", "lora-dropout"])
def test_training_step_resumes_exactly_on_cuda(tmp_path, dropout):
    """A run crashed after step 5 and resumed from its step-3 checkpoint ends on the adapter bytes of a
    straight run, as on CPU. On a GPU that needs both halves of the trainer's CUDA path: deterministic
    kernels (bf16 attention backward otherwise sums in a varying order, so even two straight runs
    differ), and, with LoRA dropout, the device generator's state kept in the checkpoint."""
    import dataclasses

    import test_train

    from ccl.train.run import Run, train_run
    folder = save_tiny(tmp_path / "m", "qwen2", model_dir(model_store(), "smollm2-135m-instruct"))
    data = tmp_path / "data"
    from ccl.artifacts.jsonio import write_jsonl
    write_jsonl(data / "variants" / "C.jsonl", test_train.oracle_rows(["sel_weather", "par_fx"], range(3)))
    write_jsonl(data / "sft" / "oracle_val.jsonl", test_train.oracle_rows(["sel_fx"], range(2)))

    recipe = dataclasses.replace(test_train.TINY, dropout=dropout)

    def go(out, progress=lambda *a: None):
        return train_run(Run("C", 0), recipe, "tiny", folder, "torch", data / "variants" / "C.jsonl",
                         data / "sft" / "oracle_val.jsonl", out / "runs", out / "archive",
                         out / "logs" / "stability.jsonl", "cuda", progress)

    straight = go(tmp_path / "a")

    def crash_at_5(_, done, total):
        if done == 5:
            raise test_train.Crash

    with pytest.raises(test_train.Crash):
        go(tmp_path / "b", crash_at_5)
    checkpoint = torch.load(tmp_path / "b" / "runs" / "C_s0" / "checkpoint.pt", weights_only=True)
    assert checkpoint["step"] == 3 and checkpoint["cuda_rng"].dtype == torch.uint8
    resumed = go(tmp_path / "b")
    assert straight["device"] == "cuda"
    assert straight["adapter_sha256"] == resumed["adapter_sha256"]


def test_peak_memory_counts_the_gpu():
    from ccl.resources import _accelerator_peak_gb, peak_memory_gb
    x = torch.empty(512, 1024, 1024, dtype=torch.uint8, device="cuda")  # 0.5 GiB on the device only
    assert _accelerator_peak_gb() >= 0.5 and peak_memory_gb() >= 0.5
    del x
