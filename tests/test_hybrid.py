"""The torch backend's lock-step decoder on tiny random models of the paper's architectures: Qwen2
(keys and values in every layer) and Qwen3.5 (linear-attention states beside attention layers),
against ``model.generate`` on the whole conversation, over turns that reuse the stored cache."""
import json

import pytest
import torch
from tiny_models import ARCHS, save_tiny

from ccl.models.weights import model_dir
from ccl.policy.base import GenConfig, ModelPolicy
from ccl.policy.torch_backend import TorchBackend
from scripts.model_store import model_store

# replies of the tiny models to these re-tokenise to the tokens generated (checked below), so the
# reference's re-tokenised conversation holds the same tokens as the backend's cache
QUESTIONS = ("Which tool reads files?", "Name a colour.", "Say hello in French, please, and then some more words.")


@pytest.fixture(scope="module", params=ARCHS)
def tiny(request, tmp_path_factory) -> TorchBackend:
    folder = save_tiny(tmp_path_factory.mktemp(request.param), request.param,
                       model_dir(model_store(), "smollm2-135m-instruct"))
    return TorchBackend(folder, device="cpu", threads=2)


def reference(b: TorchBackend, prompt: str, n: int) -> str:
    ids = b.tok(prompt, return_tensors="pt", add_special_tokens=False)
    with torch.inference_mode():
        out = b.model.generate(**ids.to(b.device), max_new_tokens=n, do_sample=False, pad_token_id=b.pad_id,
                               eos_token_id=sorted(b.eos_ids))
    return b.tok.decode(out[0, ids.input_ids.shape[1]:], skip_special_tokens=True)


def test_lockstep_decoder_equals_generate_across_turns(tiny):
    check_turns_equal_generate(tiny)


def test_rows_that_end_early_leave_the_batch_and_the_rest_still_equal_generate(tiny):
    """An end token that one conversation's reply reaches on its third step: rows now finish on
    different steps, so finished rows leave the batch (their keys, values and linear states dropped)."""
    early = stop_token(tiny, QUESTIONS[1])
    tiny.eos_ids.add(early)
    try:
        lengths = check_turns_equal_generate(tiny, premise=False)
    finally:
        tiny.eos_ids.discard(early)
    assert any(len(set(turn)) > 1 for turn in lengths), lengths  # some turn had rows end at different steps


def stop_token(b, question: str) -> int:
    """The third token the model replies to ``question`` (greedy): made an end token, it ends that reply early."""
    prompt = b.render([{"role": "system", "content": "Be brief."}, {"role": "user", "content": question}])
    ids = b.tok(prompt, return_tensors="pt", add_special_tokens=False)
    with torch.inference_mode():
        out = b.model.generate(**ids.to(b.device), max_new_tokens=3, do_sample=False, pad_token_id=b.pad_id)
    return int(out[0, -1])


def check_turns_equal_generate(b: TorchBackend, n: int = 8, premise: bool = True) -> list[list[int]]:
    """Three conversations, three turns each, decoded together with the shared head and each turn's
    cache reused: every reply equals ``model.generate`` on the whole re-tokenised conversation.
    Returns each turn's reply lengths."""
    assert b.hybrid == b.model.config.model_type.startswith("qwen3_5")
    convs = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": q}] for q in QUESTIONS]
    first = b.render(convs[0])
    head = first[:first.index("<|im_end|>\n") + len("<|im_end|>\n")]  # the system message: shared by all
    states = [{"prefix": head} for _ in convs]
    lengths = []
    for turn in range(3):
        prompts = [b.render(c) for c in convs]
        got = b.generate(states, prompts, GenConfig(max_new_tokens=n), [0, 1, 2])
        for p, g in zip(prompts, got):
            assert g.text == reference(b, p, n)
            if premise:  # the replies re-tokenise to the tokens generated
                assert len(b.tok(g.text, add_special_tokens=False).input_ids) == g.new_tokens == n
        # the head, then only each turn's new messages, were prefilled
        assert all(g.prompt_tokens < (30 if turn == 0 else 20) for g in got), [g.prompt_tokens for g in got]
        lengths.append([g.new_tokens for g in got])
        for c, g in zip(convs, got):
            c += [{"role": "assistant", "content": g.text}, {"role": "user", "content": "Once more, then stop."}]
    return lengths


def test_hybrid_models_decode_in_lockstep_by_turn(tiny):
    """A hybrid model's linear states cannot live in the continuous decoder's key/value buffers:
    the policy offers no continuous decoder, so rollouts run it lock-step by turn."""
    dec = ModelPolicy(tiny, GenConfig(max_new_tokens=4)).decoder(4)
    assert (dec is None) == tiny.hybrid


def test_a_hybrid_batch_cannot_mix_stored_and_fresh_rows(tiny):
    if not tiny.hybrid:
        pytest.skip("only a hybrid model keeps linear states")
    prompt = tiny.render([{"role": "user", "content": "Hi"}])
    stored = {}
    tiny.generate([stored], [prompt], GenConfig(max_new_tokens=2), [0])
    with pytest.raises(ValueError, match="mixes rows with and without stored states"):
        tiny._batch_cache([stored, {}], 64)


def test_mlx_quantised_weights_on_torch_are_refused_with_the_fix(tmp_path):
    from ccl.models.registry import ModelError
    from ccl.policy.load import check_torch_loadable
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": "qwen3_5", "quantization": {"group_size": 64, "bits": 4},
         "quantization_config": {"group_size": 64, "bits": 4}}))
    with pytest.raises(ModelError, match=r"qwen3.5-4b-mlx-4bit: .* MLX-quantised weights .*'bits': 4.*profile=paper-cuda"):
        check_torch_loadable("qwen3.5-4b-mlx-4bit", tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "qwen2", "quantization_config": {
        "quant_method": "awq", "bits": 4}}))  # a transformers quantisation: transformers decides
    check_torch_loadable("x", tmp_path)


# ------------------------------------------------------------------ the MLX backend on the same models
@pytest.fixture(scope="module", params=ARCHS)
def tiny_mlx(request, tmp_path_factory):
    from ccl.policy.mlx_backend import MLXBackend
    folder = save_tiny(tmp_path_factory.mktemp(f"mlx-{request.param}"), request.param,
                       model_dir(model_store(), "smollm2-135m-instruct"))
    return MLXBackend(folder)


@pytest.mark.parametrize("early", [False, True], ids=["full-length", "early-end"])
def test_mlx_turns_equal_a_fresh_prefill_of_each_conversation(tiny_mlx, early):
    """Greedy turns of three episodes decode together (mlx-lm's BatchGenerator, each episode's cache
    handed in and back, fresh episodes from the shared head's cache), and each episode also alone over
    its own turns (the one-at-a-time path): every reply equals decoding that conversation from an empty
    cache. ``early``: an end token one reply reaches on its third step, so rows leave the batch at
    different steps."""
    b, n = tiny_mlx, 8
    stop = None
    if early:
        p0 = b.render([{"role": "system", "content": "Be brief."}, {"role": "user", "content": QUESTIONS[1]}])
        out = b.generate([{}], [p0], GenConfig(max_new_tokens=3), [0])[0]
        stop = b.tok(out.text, add_special_tokens=False).input_ids[-1]  # its third token
        b.eos_ids.add(stop)
    try:
        convs = [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": q}] for q in QUESTIONS]
        first = b.render(convs[0])
        head = first[:first.index("<|im_end|>\n") + len("<|im_end|>\n")]
        batched = [{"prefix": head} for _ in convs]
        single = [{"prefix": head} for _ in convs]
        lengths = []
        for turn in range(3):
            prompts = [b.render(c) for c in convs]
            got = b.generate(batched, prompts, GenConfig(max_new_tokens=n), [0, 1, 2])
            one = [b.generate([st], [p], GenConfig(max_new_tokens=n), [0])[0] for st, p in zip(single, prompts)]
            alone = [b.generate([{}], [p], GenConfig(max_new_tokens=n), [0])[0] for p in prompts]
            assert [g.text for g in got] == [a.text for a in alone] == [o.text for o in one]
            if turn:  # only the new messages were prefilled
                assert all(g.prompt_tokens < 20 < a.prompt_tokens for g, a in zip(got, alone))
                assert [o.prompt_tokens for o in one] == [g.prompt_tokens for g in got]
            lengths.append([g.new_tokens for g in got])
            for c, g in zip(convs, got):
                c += [{"role": "assistant", "content": g.text}, {"role": "user", "content": "Once more, then stop."}]
        assert any(len(set(x)) > 1 for x in lengths) == early, lengths
    finally:
        b.eos_ids.discard(stop)
