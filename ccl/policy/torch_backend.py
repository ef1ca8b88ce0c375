"""torch backend: a lock-step batched decoder that keeps each episode's KV cache across turns.

Why not ``model.generate``: it re-prefills the whole conversation every turn and keeps
finished rows in the batch until the longest one ends. Here, per turn:

1. each sequence's increment (the new observation and the assistant header) is
   tokenised; its cached keys and values (stored per episode, padding removed) are
   left-padded into one batch cache, so only the increment is prefilled;
2. one forward pass prefills all increments (explicit attention mask and position ids
   make padding between the cache block and the increment harmless);
3. decoding advances every live row one token per step; a row that emits an end token
   or reaches ``max_new_tokens`` leaves the batch at once (its cache rows are dropped),
   and its unpadded keys and values are stored for its next turn.

The increment is tokenised on its own, so a token boundary may differ from tokenising
the whole conversation at once (as in every prefix-caching server); when the rendered
prompt does not extend the cached text (a template that rewrites history), the episode
falls back to a full prefill.
"""
from __future__ import annotations

import os
from pathlib import Path

import torch

from .. import chat
from ..devices import pick_device
from .base import BackendState, GenConfig, GenOut, cached_increment


def _prealloc_layer_class():
    from transformers.cache_utils import DynamicLayer

    class PreallocLayer(DynamicLayer):
        """A KV cache layer writing into preallocated buffers: ``DynamicLayer`` concatenates
        the whole cache at every decoding step, which costs a full copy per token."""

        def __init__(self, K: torch.Tensor, V: torch.Tensor, filled: int, start: int = 0):
            super().__init__()
            # the cache is columns [start, n) of the buffers: a caller whose rows all begin at
            # or after ``start`` skips the padding before it
            self.buf_k, self.buf_v, self.n, self.start = K, V, filled, start
            self.device, self.is_initialized = K.device, True
            self._views()

        def _views(self) -> None:
            self.keys, self.values = self.buf_k[:, :, self.start:self.n], self.buf_v[:, :, self.start:self.n]

        def update(self, key_states, value_states, *args, **kwargs):
            t = key_states.shape[-2]
            self.buf_k[:, :, self.n:self.n + t] = key_states
            self.buf_v[:, :, self.n:self.n + t] = value_states
            self.n += t
            self._views()
            return self.keys, self.values

        def get_seq_length(self) -> int:
            return self.n - self.start

        def batch_select_indices(self, indices: torch.Tensor) -> None:
            self.buf_k, self.buf_v = self.buf_k[indices], self.buf_v[indices]
            self._views()

    return PreallocLayer


class TorchBackend:
    name = "torch"

    def __init__(self, model_dir: str | Path, adapter: str | Path | None = None,
                 device: str | None = None, threads: int | None = None):
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = pick_device(device)
        if self.device == "cpu":
            torch.set_num_threads(threads or os.cpu_count() or 1)
        # float32 on CPU (bf16 is emulated and very slow there); bf16 on accelerators
        dtype = torch.float32 if self.device == "cpu" else torch.bfloat16
        self.tok = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype)
        if adapter is not None:
            from .adapters import attach_adapter
            model = attach_adapter(model, model_dir, adapter)
        self.model = model.to(self.device).eval()
        eos = self.model.generation_config.eos_token_id
        eos = eos if isinstance(eos, list) else [eos]
        self.eos_ids = {i for i in eos + [self.tok.eos_token_id] if i is not None}
        self.pad_id = self.tok.pad_token_id if self.tok.pad_token_id is not None else min(self.eos_ids)
        cfg = self.model.config  # the KV cache's shape, for the batch caches of both schedules
        self.kv_heads = cfg.num_key_value_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        self.dtype = next(self.model.parameters()).dtype
        self._prefixes: dict[str, tuple[list, int]] = {}  # shared prompt head -> (KV per layer, length)
        self._layer_cls = _prealloc_layer_class()

    def render(self, messages: list[dict]) -> str:
        return chat.prompt(self.tok, messages)

    def continuous(self, gen: GenConfig, slots: int):
        """A token-level continuous batch over this model (:mod:`.torch_continuous`)."""
        from .torch_continuous import ContinuousDecoder
        return ContinuousDecoder(self, gen, slots)

    # ------------------------------------------------------------------ batching
    def _seed_prefix(self, st: BackendState) -> None:
        """Start a fresh sequence from the shared prompt head's KV (computed once)."""
        prefix = st.pop("prefix")
        if prefix not in self._prefixes:
            ids = torch.tensor([self.tok(prefix, add_special_tokens=False).input_ids], device=self.device)
            with torch.inference_mode():
                cache = self.model(input_ids=ids, use_cache=True, logits_to_keep=1).past_key_values
            self._prefixes[prefix] = ([(layer.keys[0], layer.values[0]) for layer in cache.layers], ids.shape[1])
        st["kv"], st["len"] = self._prefixes[prefix]
        st["text"] = prefix

    def _increments(self, states: list[BackendState], prompts: list[str]) -> list[list[int]]:
        incs = []
        for st, prompt in zip(states, prompts):
            if "prefix" in st:
                self._seed_prefix(st)
            text = cached_increment(st, prompt)
            if text is None:
                st.clear()
                text = prompt
            incs.append(self.tok(text, add_special_tokens=False).input_ids)
            st["text"] = prompt
        return incs

    def _batch_cache(self, states: list[BackendState], capacity: int):
        """A batch cache holding every row's stored KV, left-padded to a common length,
        in buffers with room for ``capacity`` positions (no re-allocation while decoding)."""
        from transformers import DynamicCache

        lens = [st.get("len", 0) for st in states]
        S = max(lens)
        cfg = self.model.config
        H, D, dtype = self.kv_heads, self.head_dim, self.dtype
        cache = DynamicCache(config=cfg)
        layers = []
        for li in range(cfg.num_hidden_layers):
            K = torch.zeros(len(states), H, capacity, D, dtype=dtype, device=self.device)
            V = torch.zeros_like(K)
            for i, st in enumerate(states):
                if st.get("len"):
                    K[i, :, S - st["len"]:S] = st["kv"][li][0]
                    V[i, :, S - st["len"]:S] = st["kv"][li][1]
            layers.append(self._layer_cls(K, V, S))
        cache.layers = layers
        return cache, lens

    @staticmethod
    def _store(st: BackendState, cache, row: int, mask_row: torch.Tensor) -> None:
        keep = mask_row.nonzero().squeeze(1)
        st["kv"] = [(layer.keys[row][:, keep].clone(), layer.values[row][:, keep].clone())
                    for layer in cache.layers]
        st["len"] = int(keep.numel())

    def _sample(self, logits: torch.Tensor, gen: GenConfig, gens: list) -> torch.Tensor:
        if gen.temperature <= 0:
            return logits.argmax(-1)
        probs = torch.softmax(logits.float() / gen.temperature, -1)
        if gen.top_p < 1.0:
            sorted_p, idx = probs.sort(-1, descending=True)
            cut = sorted_p.cumsum(-1) - sorted_p > gen.top_p
            sorted_p[cut] = 0
            probs = torch.zeros_like(probs).scatter(-1, idx, sorted_p)
        return torch.stack([torch.multinomial(p, 1, generator=g)[0] for p, g in zip(probs, gens)])

    def _prefill(self, states: list[BackendState], incs: list[list[int]], room: int):
        """One forward over every row's stored cache plus its increment (both left-padded).
        Returns the last position's logits, the batch cache (``room`` free positions after the
        prompt), the attention mask and each row's stored length."""
        dev = self.device
        T = max(len(x) for x in incs)
        S = max(st.get("len", 0) for st in states)
        cache, lens = self._batch_cache(states, S + T + room)
        B = len(states)
        ids = torch.full((B, T), self.pad_id, dtype=torch.long)
        mask = torch.zeros(B, S + T, dtype=torch.long)
        pos = torch.zeros(B, T, dtype=torch.long)
        for i, (inc, L) in enumerate(zip(incs, lens)):
            n = len(inc)
            ids[i, T - n:] = torch.tensor(inc)
            mask[i, S - L:S] = 1
            mask[i, S + T - n:] = 1
            pos[i, T - n:] = torch.arange(L, L + n)
        mask = mask.to(dev)
        # logits_to_keep=1: the vocabulary projection of every prompt position would dominate
        # prefill time and memory (batch x tokens x vocabulary floats) and is never used
        logits = self.model(input_ids=ids.to(dev), attention_mask=mask, position_ids=pos.to(dev), cache=cache,
                            use_cache=True, logits_to_keep=1).logits[:, -1]
        return logits, cache, mask, lens

    @torch.inference_mode()
    def generate(self, states: list[BackendState], prompts: list[str], gen: GenConfig,
                 seeds: list[int]) -> list[GenOut]:
        dev = self.device
        incs = self._increments(states, prompts)
        B = len(states)
        logits, cache, mask, lens = self._prefill(states, incs, gen.max_new_tokens)
        next_pos = torch.tensor([L + len(inc) for L, inc in zip(lens, incs)], device=dev)
        gens = [torch.Generator(device="cpu").manual_seed(s) for s in seeds]
        rows = list(range(B))  # batch row -> original index
        out_ids: list[list[int]] = [[] for _ in range(B)]
        while rows:
            tokens = self._sample(logits.to("cpu") if gen.temperature > 0 else logits, gen,
                                  [gens[r] for r in rows]).tolist()
            keep = []
            for j, (r, t) in enumerate(zip(rows, tokens)):
                out_ids[r].append(t)
                if t in self.eos_ids or len(out_ids[r]) >= gen.max_new_tokens:
                    # the finished token is not yet in the cache; it is prefilled next turn
                    self._store(states[r], cache, j, mask[j])
                    states[r]["text"] = prompts[r] + self.tok.decode(out_ids[r][:-1])
                else:
                    keep.append(j)
            if not keep:
                break
            if len(keep) < len(rows):
                sel = torch.tensor(keep, device=dev)
                cache.batch_select_indices(sel)
                mask, next_pos = mask[sel], next_pos[sel]
                tokens = [tokens[j] for j in keep]
                rows = [rows[j] for j in keep]
            step = torch.tensor(tokens, device=dev).unsqueeze(1)
            mask = torch.cat([mask, torch.ones(len(rows), 1, dtype=mask.dtype, device=dev)], 1)
            logits = self.model(input_ids=step, attention_mask=mask, position_ids=next_pos.unsqueeze(1),
                                cache=cache, use_cache=True).logits[:, -1]
            next_pos = next_pos + 1
        return [GenOut(self.tok.decode(o, skip_special_tokens=True), len(inc), len(o))
                for o, inc in zip(out_ids, incs)]
