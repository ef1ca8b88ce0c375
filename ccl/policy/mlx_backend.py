"""MLX backend (mlx-lm): Apple silicon, and Linux CPU through ``mlx[cpu]``.

Each episode keeps its own mlx-lm prompt cache across turns, so only the new observation is
prefilled, and a fresh episode starts from a copy of the shared prompt head's cache (computed once
per head). Greedy turns of a batch decode together through mlx-lm's ``BatchGenerator`` (continuous
batching that takes each sequence's own cache and hands it back when the sequence ends); sampled
turns decode one after another, each from its own seed, so a sample never depends on which
episodes shared its batch. Rendering and tokenisation use the same transformers tokenizer as the
torch backend, so both see identical token ids.

On Linux, mlx-cpu's bundled BLAS is slow; preloading the system OpenBLAS
(``LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libopenblas.so.0``, Debian package
``libopenblas0-pthread``) makes it about 40x faster.
"""
from __future__ import annotations

import copy
import importlib
import tempfile
from pathlib import Path
from typing import Callable

from ..episode import chat
from ..models.mlx_config import mlx_config_overrides
from .adapters import check_weights, resolve_adapter
from .base import BackendState, GenConfig, GenOut, cached_increment


class MLXBackend:
    name = "mlx"

    def __init__(self, model_dir: str | Path, adapter: str | Path | None = None):
        import mlx_lm
        from transformers import AutoTokenizer

        # a run folder stands for its adapter/ subfolder, as on torch; a PEFT adapter (a torch run) is
        # converted to mlx-lm's format first (ccl/models/adapter_convert.py: the same numbers)
        self._tmp = None
        if adapter is not None:
            adapter = resolve_adapter(adapter)
            check_weights(adapter)
            if (adapter / "adapter_model.safetensors").is_file() and not (adapter / "adapters.safetensors").is_file():
                from ..models.adapter_convert import peft_to_mlx
                self._tmp = tempfile.TemporaryDirectory(prefix="ccl-mlx-adapter-")
                adapter = peft_to_mlx(adapter, Path(self._tmp.name) / "adapter")
        self.model, wrapper = mlx_lm.load(str(model_dir), adapter_path=str(adapter) if adapter else None,
                                          model_config=mlx_config_overrides(Path(model_dir)))
        self.tok = AutoTokenizer.from_pretrained(model_dir)
        self.eos_ids = set(wrapper.eos_token_ids) | ({self.tok.eos_token_id} - {None})
        self._step = importlib.import_module("mlx_lm.generate").generate_step
        self._heads: dict[str, list] = {}  # shared prompt head -> its prompt cache (copied, never extended)

    def render(self, messages: list[dict]) -> str:
        return chat.prompt(self.tok, messages)

    def generate(self, states: list[BackendState], prompts: list[str], gen: GenConfig,
                 seeds: list[int], stop: Callable[[], bool] | None = None) -> list[GenOut]:
        """One turn for every row; ``stop`` (asked once per token) ends them early, as the cap would."""
        incs = [self._increment(st, p) for st, p in zip(states, prompts)]
        if gen.temperature > 0 or len(states) == 1:
            return [self._one(st, p, ids, gen, seed, stop) for st, p, ids, seed in zip(states, prompts, incs, seeds)]
        return self._batch(states, prompts, incs, gen, stop)

    # ------------------------------------------------------------------ caches
    def _increment(self, st: BackendState, prompt: str) -> list[int]:
        """The token ids this turn prefills; a fresh episode gets its cache (from the shared head
        when one is offered)."""
        from mlx_lm.models.cache import make_prompt_cache

        head = st.pop("prefix", None)
        text = cached_increment(st, prompt)
        if text is None:
            if head and prompt.startswith(head):
                st["cache"], text = self._head_cache(head), prompt[len(head):]
            else:
                st["cache"], text = make_prompt_cache(self.model), prompt
        return self.tok(text, add_special_tokens=False).input_ids

    def _head_cache(self, head: str) -> list:
        import mlx.core as mx
        from mlx_lm.models.cache import make_prompt_cache

        if head not in self._heads:
            cache = make_prompt_cache(self.model)
            self.model(mx.array([self.tok(head, add_special_tokens=False).input_ids]), cache=cache)
            mx.eval([c.state for c in cache])
            self._heads[head] = cache
        return copy.deepcopy(self._heads[head])  # an episode extends its own copy

    # ------------------------------------------------------------------ decoding
    def _one(self, st: BackendState, prompt: str, ids: list[int], gen: GenConfig, seed: int,
             stop: Callable[[], bool] | None = None) -> GenOut:
        import mlx.core as mx
        from mlx_lm.sample_utils import make_sampler

        mx.random.seed(seed)
        sampler = make_sampler(temp=gen.temperature, top_p=gen.top_p if gen.temperature > 0 else 0.0)
        out: list[int] = []
        for token, _ in self._step(mx.array(ids), self.model, max_tokens=gen.max_new_tokens,
                                   sampler=sampler, prompt_cache=st["cache"]):
            out.append(int(token))
            if out[-1] in self.eos_ids or (stop is not None and stop()):
                break
        # mlx-lm's generate_step feeds each token to the cache before yielding it, so the cache holds every
        # generated token, the last (end token) included: its text is the prompt and the whole reply
        st["text"] = prompt + self.tok.decode(out)
        return GenOut(self.tok.decode(out, skip_special_tokens=True), len(ids), len(out))

    def _batch(self, states: list[BackendState], prompts: list[str], incs: list[list[int]],
               gen: GenConfig, stop: Callable[[], bool] | None = None) -> list[GenOut]:
        """Greedy turns decoded together; each sequence's cache comes back when it ends, holding
        every token it generated (so its text is the prompt and the whole reply)."""
        from mlx_lm.generate import BatchGenerator

        bg = BatchGenerator(self.model, max_tokens=gen.max_new_tokens, stop_tokens=[[e] for e in self.eos_ids],
                            completion_batch_size=len(states), prefill_batch_size=len(states))
        try:
            uids = bg.insert(incs, caches=[st["cache"] for st in states])
            row = {u: i for i, u in enumerate(uids)}
            out: list[list[int]] = [[] for _ in states]
            left, finished = len(states), set()
            while left:
                if stop is not None and stop():  # an unfinished row keeps its text; its cache is dropped
                    for i in set(range(len(states))) - finished:
                        states[i].clear()
                    break
                for r in bg.next_generated():
                    i = row[r.uid]
                    out[i].append(int(r.token))
                    if r.finish_reason is not None:
                        finished.add(i)
                        states[i]["cache"] = r.prompt_cache
                        states[i]["text"] = prompts[i] + self.tok.decode(out[i])
                        left -= 1
        finally:
            bg.close()
        return [GenOut(self.tok.decode(o, skip_special_tokens=True), len(ids), len(o)) for o, ids in zip(out, incs)]
