"""OpenVINO backend: the same float32 weights and token ids as the torch backend, run by OpenVINO GenAI's
continuous-batching pipeline on the CPU (issue 39; the measured decision: experiments/engine_bench2).

What stays the torch backend's, so transcripts agree: the tokenizer (transformers'; OpenVINO only
receives token ids), the prompt split (a fresh episode's shared head tokenised alone, each turn's
increment tokenised alone, the previous turn's last generated token prefilled with the next turn's
increment), greedy decoding over float32 logits (computed in bfloat16 with ``precision="bfloat16"``,
where OpenVINO's graph, head included, runs in bfloat16), and the weights: the converted float32 model with any
adapter merged as peft merges it, exported to an IR that holds the same float32 numbers
(ccl/models/openvino_export.py). Inference and the KV cache are float32 (OpenVINO would otherwise pick
bf16 on CPUs that have it and an f16 or u8 cache), unless ``precision`` asks for bfloat16 (issue 56,
``models.student_precision``): then both are bfloat16, as OpenVINO picks on CPUs with bfloat16 units.

Each turn is one request holding the episode's whole token path; the pipeline's prefix cache finds the
blocks of the shared head and of earlier turns, so only the increment is computed. A request's turn
ends at an end token or at ``max_new_tokens``; finished turns are read after each pipeline step, so a
new turn or episode joins the running batch at once (token-level refill, as the torch engine does).

The efficiency record is the torch engine's (ccl.records.EngineRecord, which says how each of its fields is
measured here): every pipeline step is timed, and counted as prefill or as decoding by what it ran.
"""
from __future__ import annotations

import itertools
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..devices import cpu_threads
from ..episode import chat
from ..models.registry import ModelError, ModelSpec
from ..records import EngineRecord
from ..vocabulary import DEFAULT_PRECISION
from .base import BackendState, FlopModel, GenConfig, GenOut, cached_increment, engine_record

F32 = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "KEY_CACHE_PRECISION": "f32",
       "VALUE_CACHE_PRECISION": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0}
# bfloat16 products on the CPU's matrix units (issue 56), with the KV cache in bfloat16 too: the CPU
# plugin's paged attention refuses a float32 cache under bfloat16 inference
INFERENCE = {"float32": F32, "bfloat16": {**F32, "INFERENCE_PRECISION_HINT": "bf16", "KV_CACHE_PRECISION": "bf16",
                                          "KEY_CACHE_PRECISION": "bf16", "VALUE_CACHE_PRECISION": "bf16"}}
CACHE_GB = 4  # the pipeline's KV cache (blocks of the inference precision shared by every request, prefix cache included)
BATCHED_TOKENS = 2048  # tokens per pipeline step (prompt chunks and one token per running request)


@dataclass
class _Turn:
    key: Any
    state: BackendState
    prompt: str
    path: list[int]  # the token ids the request prefills (the episode's whole path)
    inc: int  # this turn's increment (prompt tokens counted as prefilled)
    rewind: bool
    handle: Any = None


@dataclass
class Counts:
    """What the pipeline ran, for the efficiency record (ccl.records.EngineRecord: how each field is measured)."""

    steps: int = 0
    prefill_steps: int = 0  # steps that ran prompt tokens
    mixed_steps: int = 0  # of those, the steps that also decoded turns past their first token
    prefill_s: float = 0.0  # seconds of the steps that ran prompt tokens
    decode_s: float = 0.0  # seconds of the steps that only decoded
    decode_step_tokens: int = 0  # tokens the steps that only decoded fed (one per request they scheduled)
    prompt_tokens_sent: int = 0  # token ids sent with the requests (each turn's whole path)
    turns_prefilled: int = 0  # turns that reached their first token
    increment_tokens: int = 0  # their increments (prompt tokens counted as prefilled)
    decode_tokens: int = 0  # tokens fed to decoding by every step: generated minus one per turn
    new_tokens: int = 0
    attn_useful: int = 0  # (query, key) pairs the turns' tokens need (as the torch engine counts them)


class OpenVINOBackend:
    name = "openvino"

    def __init__(self, model_dir: str | Path, spec: ModelSpec, adapter: str | Path | None = None,
                 threads: int | None = None, max_seqs: int = 64, precision: str = DEFAULT_PRECISION):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self._start(AutoTokenizer.from_pretrained(model_dir))
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        if adapter is not None:
            from .adapters import attach_adapter
            model = attach_adapter(model, model_dir, adapter)
        with tempfile.TemporaryDirectory(prefix="ccl-openvino-") as tmp:
            ir = self._export(spec, model, Path(tmp))
            del model
            self.pipe = self._pipeline(ir, {**INFERENCE[precision], "INFERENCE_NUM_THREADS": cpu_threads(threads)},
                                       max_seqs)

    def _start(self, tok: Any) -> None:
        import openvino_genai as ovg

        self.ovg, self.tok = ovg, tok
        # a list to keep every finished turn's key, token path, generated ids and their log-probabilities
        # (benchmarks locating a divergence, audits of a sampler); None keeps nothing
        self.trace: list[dict] | None = None
        self.ids = itertools.count()
        self._heads: dict[str, list[int]] = {}

    def _export(self, spec: ModelSpec, model: Any, work: Path, lora_targets: bool = False) -> Path:
        """Read what the backend keeps of the torch model (context, end tokens, FLOP model), then write its
        IR into ``work`` (``lora_targets``: named for run-time LoRA, ccl.models.openvino_export)."""
        from ..models.openvino_export import export_ir
        from ..models.weights import gguf_file

        self.context = model.config.get_text_config().max_position_embeddings  # the server's overflow check
        eos = model.generation_config.eos_token_id
        eos = eos if isinstance(eos, list) else [eos]
        self.eos_ids = {i for i in eos + [self.tok.eos_token_id] if i is not None}
        self.flops = FlopModel.of(model, _head_dim(model.config))
        return export_ir(gguf_file(spec, work), model, work / "ir", lora_targets)

    def _pipeline(self, ir: Path, properties: dict, max_seqs: int) -> Any:
        sc = self.ovg.SchedulerConfig()
        sc.enable_prefix_caching, sc.dynamic_split_fuse = True, True
        sc.cache_size, sc.max_num_seqs, sc.max_num_batched_tokens = CACHE_GB, max_seqs, BATCHED_TOKENS
        return self.ovg.ContinuousBatchingPipeline(str(ir), sc, "CPU", properties)

    def render(self, messages: list[dict]) -> str:
        return chat.prompt(self.tok, messages)

    def continuous(self, gen: GenConfig, slots: int) -> "OpenVINODecoder":
        return OpenVINODecoder(self, gen, slots)

    def generate(self, states: list[BackendState], prompts: list[str], gen: GenConfig,
                 seeds: list[int], stop: Callable[[], bool] | None = None) -> list[GenOut]:
        """One turn for every row (the lock-step interface), as one continuous batch."""
        dec = OpenVINODecoder(self, gen, len(states))
        for i, (st, p, seed) in enumerate(zip(states, prompts, seeds)):
            dec.submit(i, st, p, seed)
        outs: dict[int, GenOut] = {}
        try:
            while dec.busy():
                outs.update(dec.step())
                if stop is not None and dec.busy() and stop():
                    outs.update(dec.stop_all())
        finally:
            dec.close()
        return [outs[i] for i in range(len(states))]

    def head_ids(self, prefix: str) -> list[int]:
        if prefix not in self._heads:
            self._heads[prefix] = self.tok(prefix, add_special_tokens=False).input_ids
        return self._heads[prefix]

    def config(self, gen: GenConfig, seed: int) -> Any:
        g = self.ovg.GenerationConfig()
        g.max_new_tokens, g.num_beams = gen.max_new_tokens, 1
        g.stop_token_ids = set(self.eos_ids)
        g.eos_token_id = min(self.eos_ids)
        g.ignore_eos = False
        if gen.temperature > 0:
            g.do_sample, g.temperature, g.top_p, g.rng_seed = True, gen.temperature, gen.top_p, seed
        else:
            g.do_sample = False
        return g


class OpenVINODecoder:
    """Turns are submitted with :meth:`submit`; each :meth:`step` runs one pipeline step and returns the
    turns that ended, as ``(key, GenOut)``. Same interface as the torch engine's ``ContinuousDecoder``."""

    clock = staticmethod(time.perf_counter)  # what times a step (a test sets its own)

    def __init__(self, backend: OpenVINOBackend, gen: GenConfig, slots: int):
        self.b, self.gen, self.slots = backend, gen, slots
        self.running: dict[int, _Turn] = {}
        self.pending: list[tuple[_Turn, int]] = []
        self.c = Counts()

    def submit(self, key: Any, state: BackendState, prompt: str, seed: int, rewind: bool = False) -> None:
        """Queue a turn (``rewind``: when it ends, ``state`` keeps the path of ``prompt`` alone)."""
        b = self.b
        if "prefix" in state:  # a fresh episode starts from the shared head, tokenised alone
            prefix = state.pop("prefix")
            state["ids"], state["text"] = list(b.head_ids(prefix)), prefix
        text = cached_increment(state, prompt)
        if text is None:  # the prompt does not extend the path: the whole prompt, tokenised at once
            state["ids"], text = [], prompt
        inc = b.tok(text, add_special_tokens=False).input_ids
        path = state.get("ids", []) + inc
        state["text"] = prompt
        self.pending.append((_Turn(key, state, prompt, path, len(inc), rewind), seed))

    def busy(self) -> bool:
        return bool(self.pending or self.running)

    def close(self) -> None:
        for turn in self.running.values():
            turn.handle.cancel()  # the pipeline drops the request and frees its blocks
        self.running, self.pending = {}, []

    def summary(self) -> EngineRecord:
        """The efficiency record: the torch engine's fields (ccl.records.EngineRecord), from :class:`Counts`.
        No padding and no free rows are executed (the batch is flat), so the executed counts are the useful
        ones; the executed FLOPs are unknown and the buffer relayouts do not exist (null)."""
        c = self.c
        return engine_record(prefill_s=c.prefill_s, prefill_tokens=c.increment_tokens,
                             prefill_padded=c.increment_tokens, decode_s=c.decode_s,
                             decode_tokens=c.decode_step_tokens, decode_rows=c.decode_step_tokens,
                             gflop_executed=None,
                             gflop_useful=self.b.flops.gflop(c.increment_tokens + c.decode_tokens,
                                                             c.turns_prefilled + c.decode_tokens, c.attn_useful),
                             relayouts=None)

    def details(self) -> dict:
        """The counts behind :meth:`summary`, for benchmarks (the efficiency record's fields are fixed)."""
        c = self.c
        return {"prefill_tokens": c.increment_tokens, "prefill_padding_tokens": 0, "decode_tokens": c.decode_tokens,
                "steps": c.steps, "prefill_steps": c.prefill_steps, "mixed_steps": c.mixed_steps,
                "decode_step_tokens": c.decode_step_tokens, "prompt_tokens_sent": c.prompt_tokens_sent,
                "new_tokens": c.new_tokens}

    def _start(self) -> None:
        while self.pending and len(self.running) < self.slots:
            turn, seed = self.pending.pop(0)
            rid = next(self.b.ids)
            turn.handle = self.b.pipe.add_request(rid, token_tensor(turn.path), self.b.config(self.gen, seed))
            self.running[rid] = turn
            self.c.prompt_tokens_sent += len(turn.path)

    def step(self) -> list[tuple[Any, GenOut]]:
        self._start()
        if not self.running:
            return []
        decoding = sum(turn.handle.can_read() for turn in self.running.values())  # turns past their first token
        t0 = self.clock()
        self.b.pipe.step()
        self._time(self.clock() - t0, decoding, self.b.pipe.get_metrics().scheduled_requests)
        done = []
        for rid, turn in list(self.running.items()):
            status = turn.handle.get_status()
            if status == self.b.ovg.GenerationStatus.RUNNING:
                continue
            if status != self.b.ovg.GenerationStatus.FINISHED:
                raise ModelError(f"OpenVINO ended a turn with status {status} (a {turn.inc}-token increment on a "
                                 f"{len(turn.path)}-token path, {len(self.running)} turns running): the pipeline's "
                                 f"{CACHE_GB} GB KV cache may be too small for this batch; lower the batch size")
            result = turn.handle.read_all()[0]
            out = list(result.generated_ids)
            if self.b.trace is not None:  # for audits: what was sampled, on which path, at what log-probability
                self.b.trace.append({"key": turn.key, "path": list(turn.path), "ids": out,
                                     "logps": list(result.generated_log_probs)})
            del self.running[rid]
            done.append((turn.key, self._finish(turn, out)))
        return done

    def stop_all(self) -> list[tuple[Any, GenOut]]:
        """End every turn now (the server's stop): a running one with what it produced so far, a waiting
        one with nothing."""
        done = []
        for turn in self.running.values():
            so_far = turn.handle.read() if turn.handle.can_read() else {}  # every token so far (never read before)
            turn.handle.cancel()
            done.append((turn.key, self._finish(turn, list(so_far[0].generated_ids) if so_far else [])))
        done += [(turn.key, self._finish(turn, [])) for turn, _ in self.pending]
        self.running, self.pending = {}, []
        return done

    def _time(self, seconds: float, decoding: int, scheduled: int) -> None:
        """Count one step of ``seconds``: prefill when it scheduled more requests than were decoding (a prompt
        chunk ran, perhaps beside decoding), else decoding, one token per scheduled request."""
        c = self.c
        c.steps += 1
        if scheduled > decoding:
            c.prefill_steps += 1
            c.mixed_steps += int(decoding > 0)
            c.prefill_s += seconds
        else:
            c.decode_s += seconds
            c.decode_step_tokens += scheduled

    def _finish(self, turn: _Turn, out: list[int]) -> GenOut:
        """The turn's text; the state keeps the path of the prompt and every generated token but the last
        (prefilled with the next turn), or of the prompt alone (``rewind``)."""
        st = turn.state
        st["ids"] = turn.path if turn.rewind else turn.path + out[:-1]
        st["text"] = turn.prompt if turn.rewind else turn.prompt + self.b.tok.decode(out[:-1])
        c = self.c
        c.new_tokens += len(out)
        if out:  # the prompt was prefilled; every generated token but the last was fed to decoding
            n, cached, fed = turn.inc, len(turn.path) - turn.inc, len(out) - 1
            c.turns_prefilled += 1
            c.increment_tokens += n
            c.decode_tokens += fed
            # as the torch engine counts them: each increment token attends to the cached path and to the
            # increment up to itself; each fed token to the path before it and itself
            c.attn_useful += n * cached + n * (n + 1) // 2 + fed * len(turn.path) + fed * (fed + 1) // 2
        return GenOut(self.b.tok.decode(out, skip_special_tokens=True), turn.inc, len(out))


def _head_dim(cfg) -> int:
    text = cfg.get_text_config()
    return getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads


def token_tensor(ids: list[int]) -> Any:
    import openvino as ov
    return ov.Tensor(np.asarray([ids], dtype=np.int64))
