"""MLX backend (mlx-lm): Apple silicon, and Linux CPU through ``mlx[cpu]``.

Each episode keeps its own mlx-lm prompt cache across turns, so only the new
observation is prefilled. Sequences are decoded one after another: mlx-lm's batch
generator does not take per-sequence caches, and on CPU batching buys little (the
matmuls are already compute-bound). Rendering and tokenisation use the same
transformers tokenizer as the torch backend, so both see identical token ids.

On Linux, mlx-cpu's bundled BLAS is slow; preloading the system OpenBLAS
(``LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libopenblas.so.0``, Debian package
``libopenblas0-pthread``) makes it about 40x faster.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from .. import chat
from ..models.mlx_config import mlx_config_overrides
from .base import BackendState, GenConfig, GenOut, cached_increment


class MLXBackend:
    name = "mlx"

    def __init__(self, model_dir: str | Path, adapter: str | Path | None = None):
        import mlx_lm
        from transformers import AutoTokenizer

        self.model, wrapper = mlx_lm.load(str(model_dir), adapter_path=str(adapter) if adapter else None,
                                          model_config=mlx_config_overrides(Path(model_dir)))
        self.tok = AutoTokenizer.from_pretrained(model_dir)
        self.eos_ids = set(wrapper.eos_token_ids) | ({self.tok.eos_token_id} - {None})
        self._step = importlib.import_module("mlx_lm.generate").generate_step

    def render(self, messages: list[dict]) -> str:
        return chat.prompt(self.tok, messages)

    def generate(self, states: list[BackendState], prompts: list[str], gen: GenConfig,
                 seeds: list[int]) -> list[GenOut]:
        import mlx.core as mx
        from mlx_lm.models.cache import make_prompt_cache
        from mlx_lm.sample_utils import make_sampler

        outs = []
        for st, prompt, seed in zip(states, prompts, seeds):
            st.pop("prefix", None)  # shared-head reuse is a torch-backend optimisation only
            text = cached_increment(st, prompt)
            if text is None:
                st["cache"] = make_prompt_cache(self.model)
                text = prompt
            ids = self.tok(text, add_special_tokens=False).input_ids
            mx.random.seed(seed)
            sampler = make_sampler(temp=gen.temperature, top_p=gen.top_p if gen.temperature > 0 else 0.0)
            out: list[int] = []
            for token, _ in self._step(mx.array(ids), self.model, max_tokens=gen.max_new_tokens,
                                       sampler=sampler, prompt_cache=st["cache"]):
                out.append(int(token))
                if out[-1] in self.eos_ids:
                    break
            # the last token is not in the cache yet; it is prefilled with the next turn
            st["text"] = prompt + self.tok.decode(out[:-1])
            outs.append(GenOut(self.tok.decode(out, skip_special_tokens=True), len(ids), len(out)))
        return outs
