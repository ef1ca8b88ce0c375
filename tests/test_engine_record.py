"""One efficiency record for every token-level engine (issue 54): the torch engine and OpenVINO's write
the same fields (ccl.records.EngineRecord), the torch engine's values are those its published runs were
written with, and OpenVINO's prefill/decode split is computed from what each pipeline step ran (here a
stub pipeline with hand-built step times; the real pipeline: tests/test_openvino_backend.py)."""
from __future__ import annotations

import itertools
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from ccl import records as R
from ccl.artifacts.jsonio import read_json
from ccl.policy import openvino_backend as ovb
from ccl.policy.base import FlopModel, GenConfig, engine_record
from ccl.policy.torch_continuous import ContinuousDecoder, Counters
from tests.test_records import assert_rows_fit, fields

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------- the torch engine
class _Model(torch.nn.Module):
    """Shapes only: the FLOP estimate reads the config and the 2-D weights' sizes."""

    def __init__(self):
        super().__init__()
        self.config = SimpleNamespace(hidden_size=8, vocab_size=100, num_attention_heads=2, num_hidden_layers=3)
        self.embed_tokens = torch.nn.Embedding(100, 8)  # left out of the body
        self.proj = torch.nn.Linear(8, 24, bias=True)  # 192 weights in the body; the bias is 1-D
        self.lm_head = torch.nn.Linear(8, 100, bias=False)  # left out: counted per logit row


COUNTERS = Counters(prefill_s=2.345, decode_s=1.5, prefill_rows=3, prefill_useful=700, prefill_executed=760,
                    decode_useful=290, decode_executed=320, attn_useful=90_000, attn_executed=99_000, relayouts=4)


def torch_summary(c: Counters) -> dict:
    dec = SimpleNamespace(c=c, b=SimpleNamespace(model=_Model()), head_dim=4, layers=3)
    return ContinuousDecoder.summary(dec)


def published_formula(c: Counters) -> dict:
    """ContinuousDecoder.summary as the committed torch runs were written with it (before issue 54)."""
    body, head, attn = 192, 8 * 100, 4 * 2 * 4 * 3

    def gflop(tokens: int, logit_rows: int, pairs: int) -> float:
        return round((2 * body * tokens + 2 * head * logit_rows + attn * pairs) / 1e9, 1)

    return {"prefill_tok_per_s": round(c.prefill_useful / c.prefill_s, 1) if c.prefill_s else None,
            "decode_tok_per_s": round(c.decode_useful / c.decode_s, 1) if c.decode_s else None,
            "prefill_s": round(c.prefill_s, 2), "decode_s": round(c.decode_s, 2),
            "prefill_padding": round(1 - c.prefill_useful / c.prefill_executed, 4) if c.prefill_executed else 0.0,
            "decode_slot_use": round(c.decode_useful / c.decode_executed, 4) if c.decode_executed else None,
            "gflop_executed": gflop(c.prefill_executed + c.decode_executed, c.prefill_rows + c.decode_executed,
                                    c.attn_executed),
            "gflop_useful": gflop(c.prefill_useful + c.decode_useful, c.prefill_rows + c.decode_useful,
                                  c.attn_useful),
            "relayouts": c.relayouts}


@pytest.mark.parametrize("c", [COUNTERS, Counters(), Counters(prefill_s=0.1, prefill_rows=1, prefill_useful=7,
                                                              prefill_executed=7, attn_useful=28, attn_executed=28)],
                         ids=["busy", "idle", "prefill-only"])
def test_the_torch_record_keeps_the_values_its_published_runs_were_written_with(c):
    got = torch_summary(c)
    assert got == published_formula(c)
    assert [type(v) for v in got.values()] == [type(v) for v in published_formula(c).values()]
    assert list(got) == list(published_formula(c))  # the same keys in the same order: the same bytes


def test_the_flop_estimate_reads_the_body_head_and_attention():
    assert FlopModel.of(_Model(), head_dim=4) == FlopModel(body=192, head=800, attn=96)


# ---------------------------------------------------------------- OpenVINO, through a stub pipeline
class _Handle:
    def __init__(self, path: list[int], script: list[int]):
        self.path, self.script, self.out = path, script, []

    def get_status(self):
        return _Status.FINISHED if len(self.out) == len(self.script) else _Status.RUNNING

    def can_read(self) -> bool:
        return bool(self.out)

    def read_all(self):
        return [SimpleNamespace(generated_ids=list(self.out))]

    def cancel(self) -> None:
        pass


class _Status:
    RUNNING, FINISHED = "running", "finished"


class _Pipeline:
    """Each step schedules every unfinished request: a prompt emits its first token, a decoding request its
    next one (what OpenVINO's pipeline does when its token budget holds every prompt)."""

    def __init__(self, scripts: dict[int, list[int]]):
        self.scripts, self.handles, self.scheduled = scripts, [], 0

    def add_request(self, rid: int, path: list[int], config) -> _Handle:
        self.handles.append(_Handle(path, self.scripts[len(self.handles)]))
        return self.handles[-1]

    def step(self) -> None:
        live = [h for h in self.handles if h.get_status() == _Status.RUNNING]
        for h in live:
            h.out.append(h.script[len(h.out)])
        self.scheduled = len(live)

    def get_metrics(self):
        return SimpleNamespace(scheduled_requests=self.scheduled)


class _Tok:
    """One token per character."""

    def __call__(self, text: str, add_special_tokens: bool = False):
        return SimpleNamespace(input_ids=[ord(ch) for ch in text])

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        return "".join(map(chr, ids))


FLOPS = FlopModel(body=10**8, head=10**7, attn=10**6)


def stub_backend(scripts: dict[int, list[int]]):
    return SimpleNamespace(pipe=_Pipeline(scripts), tok=_Tok(), flops=FLOPS, ids=itertools.count(),
                           ovg=SimpleNamespace(GenerationStatus=_Status), config=lambda gen, seed: None, trace=None)


def stub_decoder(monkeypatch, scripts, step_times: list[float]) -> ovb.OpenVINODecoder:
    monkeypatch.setattr(ovb, "token_tensor", list)  # the stub pipeline takes the token ids as they are
    dec = ovb.OpenVINODecoder(stub_backend(scripts), GenConfig(), slots=2)
    clock = iter(itertools.accumulate([0.0] + [t for s in step_times for t in (s, 0.0)]))
    dec.clock = lambda: next(clock)  # each step starts where the last ended and lasts its hand-built time
    return dec


def run_stub(monkeypatch) -> ovb.OpenVINODecoder:
    """Turn A (5 new tokens after a cached path of 10, 4 generated) starts alone; turn B (20 tokens, nothing
    cached, 2 generated) joins after A's first token. Steps, by hand: 1 A's prompt (0.5 s); 2 B's prompt
    beside A's decoding (0.8 s, a mixed step: prefill); 3 both decode (0.2 s); 4 A decodes (0.1 s)."""
    dec = stub_decoder(monkeypatch, {0: [1, 2, 3, 4], 1: [5, 6]}, [0.5, 0.8, 0.2, 0.1])
    dec.submit("A", {"text": "0123456789", "ids": list(range(10))}, "0123456789abcde", seed=0)
    assert dec.step() == []
    dec.submit("B", {}, "b" * 20, seed=0)
    ended = dec.step() + dec.step() + dec.step()
    assert [(k, o.prompt_tokens, o.new_tokens) for k, o in ended] == [("B", 20, 2), ("A", 5, 4)]
    assert not dec.busy()
    return dec


def test_openvino_prefill_and_decode_come_from_what_each_step_ran(monkeypatch):
    e = run_stub(monkeypatch).summary()
    assert e["prefill_s"] == 1.3 and e["decode_s"] == 0.3  # steps 1-2 ran prompt tokens, steps 3-4 only decoded
    assert e["prefill_tok_per_s"] == round(25 / 1.3, 1) == 19.2  # both increments over the prefill steps' time
    assert e["decode_tok_per_s"] == 10.0  # 3 tokens fed by the decoding-only steps (2 + 1) in 0.3 s
    assert e["prefill_padding"] == 0.0 and e["decode_slot_use"] == 1.0  # a flat batch: no padding, no free rows
    assert e["gflop_executed"] is None and e["relayouts"] is None  # unknown, and not applicable (EngineRecord)
    # useful work as the torch engine counts it: 25 increment tokens and 4 fed ones (A 3, B 1); a logit row per
    # prefill and per fed token; (query, key) pairs A 5*10 + 15 + 3*15 + 6 = 116, B 210 + 20 + 1 = 231
    assert e["gflop_useful"] == FLOPS.gflop(29, 6, 347) == round((2e8 * 29 + 2e7 * 6 + 1e6 * 347) / 1e9, 1) == 6.3


def test_openvino_details_count_the_steps_and_tokens(monkeypatch):
    assert run_stub(monkeypatch).details() == {
        "prefill_tokens": 25, "prefill_padding_tokens": 0, "decode_tokens": 4, "steps": 4, "prefill_steps": 2,
        "mixed_steps": 1, "decode_step_tokens": 3, "prompt_tokens_sent": 35, "new_tokens": 6}


def test_a_turn_stopped_before_its_first_token_counts_no_prefill(monkeypatch):
    dec = stub_decoder(monkeypatch, {0: [1, 2]}, [])
    dec.submit("A", {}, "abc", seed=0)
    dec._start()
    assert [(k, o.new_tokens) for k, o in dec.stop_all()] == [("A", 0)]
    e = dec.summary()
    assert e["prefill_tok_per_s"] is None and e["decode_tok_per_s"] is None and e["decode_slot_use"] is None
    assert e["gflop_useful"] == 0.0


# ---------------------------------------------------------------- one record
def test_every_engine_writes_exactly_the_record_types_fields(monkeypatch):
    declared = fields(R.EngineRecord)
    torch_record, ov_record = torch_summary(COUNTERS), run_stub(monkeypatch).summary()
    assert set(torch_record) == set(ov_record) == declared
    assert list(torch_record) == list(ov_record)
    assert set(engine_record(prefill_s=0, prefill_tokens=0, prefill_padded=0, decode_s=0, decode_tokens=0,
                             decode_rows=0, gflop_executed=None, gflop_useful=0.0, relayouts=None)) == declared


def test_committed_engine_records_stay_readable():
    """Published runs keep their bytes: the torch runs' engine records are exactly today's EngineRecord,
    the openvino runs generated before issue 54 hold the counts OpenVINOCounts declares."""
    by_backend: dict[str, list[dict]] = {"torch": [], "openvino": []}
    for path in sorted((ROOT / "results").glob("**/generation.json")):
        gen = read_json(path)
        engine = (gen.get("efficiency") or {}).get("engine")
        if engine is not None:
            by_backend[gen["backend"]].append(engine)
    assert by_backend["torch"] and by_backend["openvino"]
    assert_rows_fit(by_backend["torch"], R.EngineRecord, "torch runs' engine records")
    assert all(set(e) == fields(R.EngineRecord) for e in by_backend["torch"])
    assert_rows_fit(by_backend["openvino"], R.OpenVINOCounts, "openvino runs' engine records before issue 54")
