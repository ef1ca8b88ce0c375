"""OpenVINO backend: the same float32 weights and token ids as the torch backend, run by OpenVINO GenAI's
continuous-batching pipeline on the CPU (issue 39; the measured decision: experiments/engine_bench2).

What stays the torch backend's, so transcripts agree: the tokenizer (transformers'; OpenVINO only
receives token ids), the prompt split (a fresh episode's shared head tokenised alone, each turn's
increment tokenised alone, the previous turn's last generated token prefilled with the next turn's
increment), greedy decoding over float32 logits, and the weights: the converted float32 model with any
adapter merged as peft merges it, exported to an IR that holds the same float32 numbers
(ccl/models/openvino_export.py). Inference and the KV cache are float32 (OpenVINO would otherwise pick
bf16 on CPUs that have it and an f16 or u8 cache).

Each turn is one request holding the episode's whole token path; the pipeline's prefix cache finds the
blocks of the shared head and of earlier turns, so only the increment is computed. A request's turn
ends at an end token or at ``max_new_tokens``; finished turns are read after each pipeline step, so a
new turn or episode joins the running batch at once (token-level refill, as the torch engine does).
"""
from __future__ import annotations

import itertools
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..devices import cpu_threads
from ..episode import chat
from ..models.registry import ModelError, ModelSpec
from .base import BackendState, GenConfig, GenOut, cached_increment

F32 = {"INFERENCE_PRECISION_HINT": "f32", "KV_CACHE_PRECISION": "f32", "KEY_CACHE_PRECISION": "f32",
       "VALUE_CACHE_PRECISION": "f32", "DYNAMIC_QUANTIZATION_GROUP_SIZE": 0}
CACHE_GB = 4  # the pipeline's KV cache (float32 blocks shared by every request, prefix cache included)
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


class OpenVINOBackend:
    name = "openvino"

    def __init__(self, model_dir: str | Path, spec: ModelSpec, adapter: str | Path | None = None,
                 threads: int | None = None, max_seqs: int = 64):
        import openvino_genai as ovg
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from ..models.openvino_export import export_ir
        from ..models.weights import gguf_file

        self.ovg = ovg
        self.tok = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        if adapter is not None:
            from .adapters import attach_adapter
            model = attach_adapter(model, model_dir, adapter)
        self.context = model.config.get_text_config().max_position_embeddings  # the server's overflow check
        eos = model.generation_config.eos_token_id
        eos = eos if isinstance(eos, list) else [eos]
        self.eos_ids = {i for i in eos + [self.tok.eos_token_id] if i is not None}
        with tempfile.TemporaryDirectory(prefix="ccl-openvino-") as tmp:
            work = Path(tmp)
            ir = export_ir(gguf_file(spec, work), model, work / "ir")
            del model
            sc = ovg.SchedulerConfig()
            sc.enable_prefix_caching, sc.dynamic_split_fuse = True, True
            sc.cache_size, sc.max_num_seqs, sc.max_num_batched_tokens = CACHE_GB, max_seqs, BATCHED_TOKENS
            self.pipe = ovg.ContinuousBatchingPipeline(str(ir), sc, "CPU",
                                                       {**F32, "INFERENCE_NUM_THREADS": cpu_threads(threads)})
        self.ids = itertools.count()
        self._heads: dict[str, list[int]] = {}

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

    def config(self, gen: GenConfig, seed: int):
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

    def __init__(self, backend: OpenVINOBackend, gen: GenConfig, slots: int):
        self.b, self.gen, self.slots = backend, gen, slots
        self.running: dict[int, _Turn] = {}
        self.pending: list[tuple[_Turn, int]] = []
        self.counts = {"steps": 0, "prompt_tokens_sent": 0, "increment_tokens": 0, "new_tokens": 0}

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

    def summary(self) -> dict:
        return dict(self.counts)

    def _start(self) -> None:
        while self.pending and len(self.running) < self.slots:
            turn, seed = self.pending.pop(0)
            rid = next(self.b.ids)
            turn.handle = self.b.pipe.add_request(rid, _tensor(turn.path), self.b.config(self.gen, seed))
            self.running[rid] = turn
            self.counts["prompt_tokens_sent"] += len(turn.path)
            self.counts["increment_tokens"] += turn.inc

    def step(self) -> list[tuple[Any, GenOut]]:
        self._start()
        if not self.running:
            return []
        self.b.pipe.step()
        self.counts["steps"] += 1
        done = []
        for rid, turn in list(self.running.items()):
            status = turn.handle.get_status()
            if status == self.b.ovg.GenerationStatus.RUNNING:
                continue
            if status != self.b.ovg.GenerationStatus.FINISHED:
                raise ModelError(f"OpenVINO ended a turn with status {status} (a {turn.inc}-token increment on a "
                                 f"{len(turn.path)}-token path, {len(self.running)} turns running): the pipeline's "
                                 f"{CACHE_GB} GB KV cache may be too small for this batch; lower the batch size")
            out = list(turn.handle.read_all()[0].generated_ids)
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

    def _finish(self, turn: _Turn, out: list[int]) -> GenOut:
        """The turn's text; the state keeps the path of the prompt and every generated token but the last
        (prefilled with the next turn), or of the prompt alone (``rewind``)."""
        st = turn.state
        st["ids"] = turn.path if turn.rewind else turn.path + out[:-1]
        st["text"] = turn.prompt if turn.rewind else turn.prompt + self.b.tok.decode(out[:-1])
        self.counts["new_tokens"] += len(out)
        return GenOut(self.b.tok.decode(out, skip_special_tokens=True), turn.inc, len(out))


def _tensor(ids: list[int]):
    import openvino as ov
    return ov.Tensor(np.asarray([ids], dtype=np.int64))
