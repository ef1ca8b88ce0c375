"""The openvino backend (issue 39): its export holds the model's exact float32 numbers, and its episodes
agree with the torch engine's on the smoke profile, with the base model and with a trained adapter."""
from __future__ import annotations

import typing

import numpy as np
import pytest
import torch

from ccl.episode.rollout import rollout
from ccl.judge.judging import verdict_row
from ccl.models.gguf_export import export_gguf
from ccl.models.openvino_export import IR, _value_of, export_ir, model_values
from ccl.models.registry import ModelError
from ccl.models.weights import gguf_file, model_dir
from ccl.policy.base import GenConfig, ModelPolicy
from ccl.policy.load import load_backend
from ccl.records import EngineRecord
from ccl.stages.evaluate import plan
from ccl.vocabulary import STUDENT_BASE
from scripts.layout import PARAMS
from scripts.model_store import model_store

MODEL = "smollm2-135m-instruct"


@pytest.fixture(scope="module")
def hf_model():
    from transformers import AutoModelForCausalLM
    return AutoModelForCausalLM.from_pretrained(model_dir(model_store(), MODEL), dtype=torch.float32)


def test_the_float32_gguf_is_the_package_dequantised_bit_for_bit(hf_model, tmp_path):
    import gguf

    source = gguf_file(model_store().spec(MODEL), tmp_path)
    ours = gguf.GGUFReader(str(export_gguf(source, hf_model, tmp_path / "f32.gguf")))
    theirs = {t.name: t for t in gguf.GGUFReader(str(source)).tensors}
    assert len(ours.tensors) == len(theirs) == 272
    for t in ours.tensors:  # names, layout (the permuted query and key projections) and every value
        ref = theirs[t.name]
        assert np.array_equal(np.asarray(t.data), gguf.quants.dequantize(ref.data, ref.tensor_type)), t.name
    half = gguf.GGUFReader(str(export_gguf(source, hf_model, tmp_path / "f16.gguf", half=True)))
    kinds = {t.tensor_type.name for t in half.tensors if len(t.shape) == 2}, {t.tensor_type.name for t in half.tensors
                                                                              if len(t.shape) == 1}
    assert kinds == ({"F16"}, {"F32"})


def test_the_ir_holds_every_weight_in_float32_exactly(hf_model, tmp_path):
    import openvino as ov

    out = export_ir(gguf_file(model_store().spec(MODEL), tmp_path), hf_model, tmp_path / "ir")
    ir = ov.Core().read_model(str(out / IR))
    constants = [op for op in ir.get_ordered_ops() if op.get_type_name() == "Constant"]
    assert not [op for op in constants if op.get_element_type().get_type_name() in ("f16", "bf16")]
    values = model_values(hf_model)
    named = {op.get_friendly_name(): op.get_data() for op in constants}
    for key in ("model.embed_tokens.weight", "model.layers[3].self_attn.q_proj.weight",
                "model.layers[29].mlp.down_proj.weight"):
        assert np.array_equal(named[key], values[key.replace("[", ".").replace("]", "")]), key
    inv = values["rotary_emb.inv_freq"]
    assert any(d.size == inv.size and np.array_equal(d.reshape(-1), inv) for d in named.values())
    norms = [k for k in values if k.endswith("norm.weight")]
    assert len(norms) == 61 and all(any(d.size == 576 and np.array_equal(d.reshape(-1), values[k])
                                        for d in named.values()) for k in norms)


def test_a_constant_matching_no_weight_or_two_is_refused():
    a, b = np.array([0.1, 0.2], np.float32), np.array([0.3, 0.4], np.float32)
    vectors = {"a": a, "b": b, "b2": b.copy()}
    value, kind = _value_of("Constant_1", a.astype(np.float16), vectors, vectors)
    assert kind == "vector" and value is a  # the float32 value, not the rounded one
    assert _value_of("Constant_2", np.float16([2.0]), vectors, vectors)[1] == "scalar"
    with pytest.raises(ModelError, match=r"Constant_3 \(2,\): no weight of the model rounds to it"):
        _value_of("Constant_3", np.float16([0.5, 0.6]), vectors, vectors)
    assert _value_of("Constant_4", b.astype(np.float16), vectors, vectors)[0] is b  # two equal vectors: one value
    vectors["b3"] = b + np.float32(1e-6)  # rounds to the same float16, but another float32 value
    with pytest.raises(ModelError, match="different weights round to it"):
        _value_of("Constant_5", b.astype(np.float16), vectors, vectors)
    with pytest.raises(ModelError, match="scalar 0.0999755859375 is not exact in 16 bits"):
        _value_of("Constant_6", np.float16([0.1]), vectors, vectors)  # an epsilon or 1/sqrt(d) in 16 bits


def _episodes(tasks, backend, gen) -> tuple[dict, dict]:
    """Each task's messages, ruler-1 success and token counts; and the engine's efficiency record."""
    out, policy = {}, ModelPolicy(backend, gen)
    for task, ep, memory, _ in rollout(tasks, policy, 8):
        row = verdict_row(task, {"task_id": task["id"], "record": ep.record()})
        # the token counts too: the same text could come from another token path
        out[task["id"]] = ([m["content"] for m in ep.messages], row["verdict"]["success"], memory.prompt_tokens,
                           memory.new_tokens)
    return out, policy.stats.engine.summary()


# the base model without an adapter is the slow half (CI runs it, .ci/run); the adapter case runs by default
@pytest.mark.parametrize("trained", [pytest.param(False, marks=pytest.mark.slow), True], ids=["base", "trained-adapter"])
def test_smoke_episodes_equal_the_torch_engines(trained, smoke_data, request):
    """The agreement test of record for the adopted backend: every smoke evaluation episode, greedy,
    byte-identical to the torch engine's, with the base model and with the smoke study's trained C_s0
    adapter (merged as peft merges it on both). Both engines write the same efficiency record, and the
    same episodes need the same useful work on both."""
    adapter = request.getfixturevalue("smoke_study") / "runs" / "C_s0" if trained else None
    p = plan(PARAMS, "smoke", STUDENT_BASE, None, smoke_data.parent)
    gen = GenConfig(max_new_tokens=p.cfg.max_new_tokens)
    ref, ref_engine = _episodes(p.tasks, load_backend(model_store(), MODEL, "torch", adapter), gen)
    got, engine = _episodes(p.tasks, load_backend(model_store(), MODEL, "openvino", adapter), gen)
    assert len(got) == len(p.tasks) == 8 and got == ref
    assert set(engine) == set(ref_engine) == set(typing.get_type_hints(EngineRecord))
    assert engine["gflop_useful"] == ref_engine["gflop_useful"] > 0
    assert engine["prefill_s"] > 0 and engine["prefill_tok_per_s"] > 0
    assert engine["decode_s"] > 0 and engine["decode_tok_per_s"] > 0
    assert (engine["prefill_padding"], engine["decode_slot_use"], engine["gflop_executed"], engine["relayouts"]) \
        == (0.0, 1.0, None, None)


def test_sampling_is_seeded():
    b = load_backend(model_store(), MODEL, "openvino")
    prompt = b.render([{"role": "user", "content": "Tell me a word."}])
    gen = GenConfig(max_new_tokens=8, temperature=0.9, top_p=0.95, seed=3)
    a = b.generate([{}], [prompt], gen, [11])[0]
    assert a.new_tokens > 0 and a.text == b.generate([{}], [prompt], gen, [11])[0].text
    others = {b.generate([{}], [prompt], gen, [seed])[0].text for seed in range(12, 20)}
    assert others - {a.text}  # the seed is used: other seeds sample other words


def test_a_stop_before_the_first_step_ends_every_turn_with_what_it_has():
    b = load_backend(model_store(), MODEL, "openvino")
    prompts = [b.render([{"role": "user", "content": q}]) for q in ("Hi.", "Name a colour.")]
    outs = b.generate([{}, {}], prompts, GenConfig(max_new_tokens=64), [0, 0], stop=lambda: True)
    assert len(outs) == 2 and all(o.new_tokens <= 1 for o in outs)
