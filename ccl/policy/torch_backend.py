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

Hybrid models (Qwen3.5: gated linear-attention layers beside attention layers) keep, per
linear layer, a fixed-size convolution and recurrent state instead of keys and values. Those
states cannot be left-padded: a padding position between a stored state and its increment
still decays the recurrent state and shifts the convolution window. So each row's increment
is prefilled on its own (no padding) and the rows then decode together, one token per step,
where no padding arises. Such models get no token-level continuous decoder (its shared
buffers assume keys and values in every layer); rollouts run them in lock-step by turn.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import torch

from ..devices import cpu_threads, pick_device
from ..episode import chat
from ..vocabulary import DEFAULT_PRECISION
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


def _state_layer_class():
    from transformers.cache_utils import LinearAttentionLayer

    class StateLayer(LinearAttentionLayer):
        """A linear-attention layer's cache started from given per-row states; transformers' own
        layer cannot drop finished rows (no ``batch_select_indices``)."""

        def __init__(self, conv: torch.Tensor | None = None, rec: torch.Tensor | None = None):
            super().__init__()
            if conv is not None:  # the first update of a fresh layer stores the states as given
                self.update_conv_state(conv)
                self.update_recurrent_state(rec)

        def batch_select_indices(self, indices: torch.Tensor) -> None:
            self.conv_states[0] = self.conv_states[0][indices]
            self.recurrent_states[0] = self.recurrent_states[0][indices]

    return StateLayer


def linear_layers(config) -> list[bool]:
    """Per decoder layer: does it keep a linear-attention state (not keys and values)?"""
    cfg = config.get_text_config()
    kinds = getattr(cfg, "layer_types", None) or []
    return [i < len(kinds) and kinds[i] == "linear_attention" for i in range(cfg.num_hidden_layers)]


def bfloat16_body(model: torch.nn.Module) -> torch.nn.Module:
    """Every weight in bfloat16 but the output projection's: kept float32 (untied from the embeddings,
    which go to bfloat16) with its input converted back, so that greedy decoding compares float32
    logits rather than bfloat16 ones, whose 8-bit mantissa would make near-equal logits equal."""
    head = model.get_output_embeddings()
    weight = head.weight.detach().clone().float()
    model.to(torch.bfloat16)
    head.weight = torch.nn.Parameter(weight, requires_grad=False)
    head.register_forward_pre_hook(lambda module, args: (args[0].float(), *args[1:]))
    return model


class TorchBackend:
    name = "torch"

    def __init__(self, model_dir: str | Path, adapter: str | Path | None = None,
                 device: str | None = None, threads: int | None = None, dtype: torch.dtype | None = None,
                 precision: str = DEFAULT_PRECISION):
        """``precision`` (on CPU): float32, or bfloat16 (:func:`bfloat16_body`, the adapter merged first in
        float32); accelerators compute in bfloat16 either way."""
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.device = pick_device(device)
        if self.device == "cpu":  # accelerators: torch's own host threads stay as they are
            torch.set_num_threads(cpu_threads(threads))
        # float32 on CPU unless bfloat16 is asked for (after the adapter); bf16 on accelerators
        dtype = dtype or (torch.float32 if self.device == "cpu" else torch.bfloat16)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype)
        if adapter is not None:
            from .adapters import attach_adapter
            model = attach_adapter(model, model_dir, adapter)
        if precision == "bfloat16" and self.device == "cpu":
            model = bfloat16_body(model)
        self._setup(model.to(self.device), AutoTokenizer.from_pretrained(model_dir))

    @classmethod
    def around(cls, model, tok) -> "TorchBackend":
        """A backend over a model already in memory (GRPO samples from the policy it is training); the
        caller keeps it in eval mode while sampling and calls :meth:`forget_prefixes` after each update."""
        backend = cls.__new__(cls)
        backend.device = str(next(model.parameters()).device)
        backend._setup(model, tok)
        return backend

    def forget_prefixes(self) -> None:
        """Drop the shared heads' cached keys and values (stale once the weights change)."""
        self._prefixes.clear()

    def _setup(self, model, tok) -> None:
        self.tok = tok
        self.model = model.eval()
        eos = self.model.generation_config.eos_token_id
        eos = eos if isinstance(eos, list) else [eos]
        self.eos_ids = {i for i in eos + [self.tok.eos_token_id] if i is not None}
        self.pad_id = self.tok.pad_token_id if self.tok.pad_token_id is not None else min(self.eos_ids)
        cfg = self.model.config.get_text_config()  # the KV cache's shape, for the batch caches of both schedules
        self.kv_heads = cfg.num_key_value_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        self.dtype = next(self.model.parameters()).dtype
        self.linear = linear_layers(self.model.config)
        self.hybrid = any(self.linear)
        self._prefixes: dict[str, tuple[list, int]] = {}  # shared prompt head -> (state per layer, length)
        self._layer_cls = _prealloc_layer_class()
        self._state_cls = _state_layer_class() if self.hybrid else None

    def render(self, messages: list[dict]) -> str:
        return chat.prompt(self.tok, messages)

    def continuous(self, gen: GenConfig, slots: int):
        """A token-level continuous batch over this model (:mod:`.torch_continuous`); None for a
        hybrid model, whose linear-attention states the shared key/value buffers cannot hold."""
        if self.hybrid:
            return None
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
            everything = torch.arange(ids.shape[1], device=self.device)
            self._prefixes[prefix] = (self._row_state(cache, 0, everything), ids.shape[1])
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
        H, D, dtype = self.kv_heads, self.head_dim, self.dtype
        cache = DynamicCache(config=self.model.config)
        layers = []
        for li in range(len(self.linear)):
            if self.linear[li]:
                layers.append(self._state_layer(states, li))
                continue
            K = torch.zeros(len(states), H, capacity, D, dtype=dtype, device=self.device)
            V = torch.zeros_like(K)
            for i, st in enumerate(states):
                if st.get("len"):
                    K[i, :, S - st["len"]:S] = st["kv"][li][0]
                    V[i, :, S - st["len"]:S] = st["kv"][li][1]
            layers.append(self._layer_cls(K, V, S))
        cache.layers = layers
        return cache, lens

    def _state_layer(self, states: list[BackendState], li: int):
        """Linear layer ``li``'s cache for a batch: every row's stored states, or none (a fresh batch).
        A batch mixing both cannot exist: a state is never padded (module docstring)."""
        stored = [bool(st.get("len")) for st in states]
        if not any(stored):
            return self._state_cls()
        if not all(stored):
            raise ValueError("a hybrid model's batch mixes rows with and without stored states")
        return self._state_cls(torch.stack([st["kv"][li][0] for st in states]),
                               torch.stack([st["kv"][li][1] for st in states]))

    def _row_state(self, cache, row: int, keep: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """One row's cache, per layer: keys and values at the positions ``keep`` (padding removed), or
        a linear layer's convolution and recurrent states."""
        # indexing by ``keep`` already copies; the linear states are views the layer updates in place
        return [(layer.conv_states[0][row].clone(), layer.recurrent_states[0][row].clone()) if lin
                else (layer.keys[row][:, keep], layer.values[row][:, keep])
                for layer, lin in zip(cache.layers, self.linear)]

    def _store(self, st: BackendState, cache, row: int, mask_row: torch.Tensor) -> None:
        keep = mask_row.nonzero().squeeze(1)
        st["kv"] = self._row_state(cache, row, keep)
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
        if self.hybrid:
            return self._prefill_rows(states, incs, room)
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

    def _prefill_rows(self, states: list[BackendState], incs: list[list[int]], room: int):
        """:meth:`_prefill` for a hybrid model: each row's increment on its own stored state (no padding,
        which would corrupt a linear layer's state), then one batch cache of every row, left-padded
        keys and values beside stacked linear states, for decoding. Same returns as :meth:`_prefill`."""
        lens, logits = [], []
        for st, inc in zip(states, incs):
            L, n = st.get("len", 0), len(inc)
            cache, _ = self._batch_cache([st], L + n)
            ids = torch.tensor([inc], device=self.device)
            pos = torch.arange(L, L + n, device=self.device)[None]
            logits.append(self.model(input_ids=ids, position_ids=pos, cache=cache, use_cache=True,
                                     logits_to_keep=1).logits[0, -1])
            st["kv"], st["len"] = self._row_state(cache, 0, torch.arange(L + n, device=self.device)), L + n
            lens.append(L)
        width = max(st["len"] for st in states)
        cache, _ = self._batch_cache(states, width + room)
        mask = torch.zeros(len(states), width, dtype=torch.long, device=self.device)
        for i, st in enumerate(states):
            mask[i, width - st["len"]:] = 1
        return torch.stack(logits), cache, mask, lens

    @torch.inference_mode()
    def generate(self, states: list[BackendState], prompts: list[str], gen: GenConfig,
                 seeds: list[int], stop: Callable[[], bool] | None = None) -> list[GenOut]:
        """One turn for every row. ``stop``: asked once per decoding step; True ends every row there,
        as the token cap would (the server's time bound and abandoned requests)."""
        dev = self.device
        incs = self._increments(states, prompts)
        B = len(states)
        logits, cache, mask, lens = self._prefill(states, incs, gen.max_new_tokens)
        next_pos = torch.tensor([L + len(inc) for L, inc in zip(lens, incs)], device=dev)
        gens = [torch.Generator(device=dev).manual_seed(s) for s in seeds]  # sampling stays on the device
        rows = list(range(B))  # batch row -> original index
        out_ids: list[list[int]] = [[] for _ in range(B)]
        while rows:
            # the one host sync per step: stopping needs the tokens
            tokens = self._sample(logits, gen, [gens[r] for r in rows]).tolist()
            halt = stop is not None and stop()
            keep = []
            for j, (r, t) in enumerate(zip(rows, tokens)):
                out_ids[r].append(t)
                if t in self.eos_ids or len(out_ids[r]) >= gen.max_new_tokens or halt:
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
