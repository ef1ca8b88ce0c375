"""The SFT files in the tool-call chat format (ccl/data/sft_export.py): exact both ways, readable by
`datasets`, and the same supervised tokens under the student's chat template."""
from __future__ import annotations

import json

import pytest

from ccl.artifacts.jsonio import write_jsonl
from ccl.data.sft import sft_row
from ccl.data.sft_export import ExportError, export, from_tool_format, to_tool_format
from ccl.episode import chat
from ccl.episode.oracle import OraclePolicy
from ccl.episode.prompt_head import NEXT_STEP
from ccl.episode.rollout import rollout
from ccl.models.weights import model_dir
from ccl.train.packing import pack_episode
from ccl.world.tasks import generate_task
from scripts.model_store import model_store

OK = '{"ok":true,"result":{"rate":1.1},"tool":"get_fx_rate"}'
ERR = '{"error":{"kind":"timeout"},"ok":false,"tool":"get_weather"}'
STUDY = [
    {"role": "system", "content": "S"},
    {"role": "user", "content": "Rate and weather?"},
    {"role": "assistant", "content": '{"calls": [{"tool": "get_fx_rate", "args": {"base": "EUR"}}, '
                                     '{"tool": "get_weather", "args": {"city": "Oslo"}}]}'},
    {"role": "user", "content": f"Results:\n{OK}\n{ERR}\n{NEXT_STEP}"},
    {"role": "assistant", "content": '{"final": "1.1; weather unknown.", "status": "failed"}'},
]


def test_a_parallel_turn_becomes_tool_calls_and_tool_messages_and_back():
    tool = to_tool_format(STUDY)
    assert tool[2] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_2_0", "type": "function", "function": {"name": "get_fx_rate", "arguments": '{"base": "EUR"}'}},
        {"id": "call_2_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]}
    assert tool[3:5] == [{"role": "tool", "tool_call_id": "call_2_0", "name": "get_fx_rate", "content": OK},
                         {"role": "tool", "tool_call_id": "call_2_1", "name": "get_weather", "content": ERR}]
    assert tool[5] == STUDY[4] and len(tool) == 6
    assert from_tool_format(tool) == STUDY


def test_a_row_that_would_not_convert_back_is_refused_by_name(tmp_path):
    odd = [*STUDY[:2], {"role": "assistant", "content": '{"calls":[{"tool":"get_fx_rate","args":{"base":"EUR"}}]}'}]
    write_jsonl(tmp_path / "variants" / "B.jsonl", [{"task_id": "t:1", "messages": odd}])
    write_jsonl(tmp_path / "val.jsonl", [{"task_id": "v:1", "messages": STUDY}])
    with pytest.raises(ExportError, match=r"B.jsonl:1: task t:1: the tool-call form does not convert back"):
        export(tmp_path / "variants", tmp_path / "val.jsonl", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_turn_not_in_the_studys_json_shape_is_refused_by_name(tmp_path):
    prose = [*STUDY[:2], {"role": "assistant", "content": "I will call get_fx_rate now."}]
    write_jsonl(tmp_path / "variants" / "B.jsonl", [{"task_id": "t:2", "messages": prose}])
    write_jsonl(tmp_path / "val.jsonl", [{"task_id": "v:1", "messages": STUDY}])
    with pytest.raises(ExportError, match=r"B.jsonl:1: task t:2: cannot be written as tool calls \(JSONDecodeError"):
        export(tmp_path / "variants", tmp_path / "val.jsonl", tmp_path / "out")


def test_the_export_loads_with_datasets_and_converts_back_to_the_training_tokens(tmp_path):
    """Through Arrow (`datasets`) and back, each row is the study's training messages again, so the
    student's template and packing supervise exactly the tokens they did (the tool-call form itself
    is not rendered by the study's own trainer)."""
    from datasets import load_dataset
    from transformers import AutoTokenizer
    rows = []
    for template, seed in (("par_fx", 0), ("ch_contact_email", 3), ("rec_weather_timeout", 1), ("sel_fx", 2)):
        task = {**generate_task(template, seed, "train"), "dataset": "x"}
        _, ep, _, _ = next(rollout([task], OraclePolicy(), batch_size=1))
        rows.append(sft_row(task, ep.record(), "oracle"))
    write_jsonl(tmp_path / "variants" / "C.jsonl", rows)
    write_jsonl(tmp_path / "val.jsonl", rows[:1])
    assert export(tmp_path / "variants", tmp_path / "val.jsonl", tmp_path / "out") == {"C": 4}
    assert "| C | 4 |" in (tmp_path / "out" / "README.md").read_text()
    loaded = load_dataset("json", data_files=str(tmp_path / "out" / "C" / "train.jsonl"), split="train")
    assert loaded.num_rows == 4 and any(m["role"] == "tool" for m in loaded[0]["messages"])
    tok = AutoTokenizer.from_pretrained(model_dir(model_store(), "smollm2-135m-instruct"))
    render, end = chat.template(tok), {tok.eos_token_id}
    for row, got in zip(rows, loaded):
        back = from_tool_format(got["messages"])  # through Arrow and back
        assert back == row["messages"]
        packed = pack_episode(lambda t: tok(t, add_special_tokens=False).input_ids, render, back, end, 10**6)
        supervised = tok.decode([t for t, lab in zip(packed.input_ids, packed.labels) if lab])
        assert supervised == "".join(m["content"] + "<|im_end|>" for m in row["messages"] if m["role"] == "assistant")
    calls = [json.loads(c["function"]["arguments"]) for m in loaded[0]["messages"] for c in (m.get("tool_calls") or [])]
    assert calls and all(isinstance(a, dict) for a in calls)
