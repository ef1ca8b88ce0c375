"""Token-level continuous batching on the torch backend (rollout engine round 2).

The lock-step engine (:meth:`TorchBackend.generate`) decodes one turn for a whole batch:
the batch waits for its longest reply, and every turn's increments, short tool results
beside 500-token first turns, are prefilled together with left padding. Here a set of
slots decodes one token per step, and a slot whose turn ended is refilled before the
next step: its episode's next increment (or a new episode) is prefilled, then joins.

Layout. Up to ``slots`` sequences decode together (the batch shrinks when at most half are
live after a prefill, at the end of a run, and grows back on demand). Every slot's keys and
values sit right-aligned in shared buffers of shape ``(slots, kv_heads, capacity, head_dim)``
per layer, ending at one write column ``n``:
slot ``i`` holds positions ``[n - lens[i], n)``. A decoding step writes column ``n`` for
every slot and advances ``n``, so the attention mask follows from ``lens`` alone. A free
slot decodes a pad token that attends only to itself (never a fully masked row) and is
never read. When ``n`` reaches the capacity, or a joining sequence is longer than ``n``,
the buffers are laid out again with the shortest width that fits.

Prefill. Waiting sequences are prefilled at every step, in buckets of similar increment
length (padding at most ``max_pad`` of the bucket's tokens, at most ``bucket_tokens``
tokens), through the lock-step path's batch cache; each finished prefill is copied into
a free slot with its first token's logits.

Greedy outputs equal the lock-step engine's up to float reordering (the same increments
are tokenised the same way; only batch composition and padding differ).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import torch

from ..records import EngineRecord
from .base import BackendState, FlopModel, GenConfig, GenOut, engine_record


@dataclass
class _Seq:
    key: Any  # the caller's handle (ModelPolicy: the episode and its memory)
    state: BackendState
    prompt: str
    inc: list[int]  # increment token ids to prefill
    gen: torch.Generator | None  # sampling generator (None: greedy)
    rewind: bool = False  # keep only the prompt's cache when the turn ends (the next prompt continues it)
    out: list[int] = field(default_factory=list)


@dataclass
class Counters:
    """What the engine executed and what was useful, for the efficiency record."""

    prefill_s: float = 0.0
    decode_s: float = 0.0
    prefill_rows: int = 0  # sequences prefilled (one logit row each)
    prefill_useful: int = 0  # increment tokens
    prefill_executed: int = 0  # rows x padded length, summed over prefill forwards
    decode_useful: int = 0  # tokens decoded for live sequences
    decode_executed: int = 0  # slots x steps (free slots included)
    attn_useful: int = 0  # (query, key) pairs a live token needs
    attn_executed: int = 0  # (query, key) pairs computed, padding included
    relayouts: int = 0


def buckets(lengths: list[int], max_pad: float, max_tokens: int) -> list[list[int]]:
    """Indices grouped so each group, padded to its longest member, wastes at most ``max_pad``
    of its executed tokens and executes at most ``max_tokens`` (a single longer one stands alone)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    groups: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        trial = cur + [i]
        top = lengths[i]  # sorted ascending: the newcomer is the longest
        executed = top * len(trial)
        pad = executed - sum(lengths[j] for j in trial)
        if cur and (pad > max_pad * executed or executed > max_tokens):
            groups.append(cur)
            trial = [i]
        cur = trial
    if cur:
        groups.append(cur)
    return groups


class ContinuousDecoder:
    """Sequences are submitted with :meth:`submit`; each :meth:`step` decodes one token for
    every slot and returns the turns that ended, as ``(key, GenOut)``."""

    def __init__(self, backend, gen: GenConfig, slots: int, max_pad: float = 0.15,
                 bucket_tokens: int = 4096, headroom: int = 256):
        if headroom < 1:
            raise ValueError(f"headroom {headroom}: the buffers need room for at least one decoded token")
        self.b, self.gen, self.slots = backend, gen, slots
        self.max_pad, self.bucket_tokens, self.headroom = max_pad, bucket_tokens, headroom
        cfg = backend.model.config
        self.layers = cfg.num_hidden_layers
        self.kv_heads, self.head_dim, self.dtype = backend.kv_heads, backend.head_dim, backend.dtype
        self.dev = backend.device
        self.pending: list[_Seq] = []
        self.seqs: list[_Seq | None] = []  # slot -> sequence
        self.lens = torch.zeros(0, dtype=torch.long)
        self.n = 0
        self.K: list[torch.Tensor] = []
        self.V: list[torch.Tensor] = []
        self.logits: torch.Tensor | None = None  # slot -> next-token logits
        self.c = Counters()

    # ------------------------------------------------------------------ public
    def submit(self, key: Any, state: BackendState, prompt: str, seed: int, rewind: bool = False) -> None:
        """Queue a turn. ``rewind``: when it ends, ``state`` keeps the cache of ``prompt`` alone, not of
        the reply (decision-point replay continues each prompt with the recorded action, not the reply)."""
        inc = self.b._increments([state], [prompt])[0]
        g = torch.Generator(device=self.dev).manual_seed(seed) if self.gen.temperature > 0 else None
        self.pending.append(_Seq(key, state, prompt, inc, g, rewind))

    def busy(self) -> bool:
        return bool(self.pending) or any(s is not None for s in self.seqs)

    def close(self) -> None:
        """Free the KV buffers (the counters stay for :meth:`summary`)."""
        self.K, self.V, self.logits, self.seqs, self.pending = [], [], None, [], []
        self.lens = torch.zeros(0, dtype=torch.long)

    def _sync(self) -> None:
        """Wait for queued device work, so the clock measures it (CPU work is synchronous)."""
        if self.dev == "cuda":
            torch.cuda.synchronize()
        elif self.dev == "mps":
            torch.mps.synchronize()

    @torch.inference_mode()
    def step(self) -> list[tuple[Any, GenOut]]:
        if self.pending:
            self._prefill()
        self._shrink()
        live = [i for i, s in enumerate(self.seqs) if s is not None]
        if not live:
            return []
        tokens = self._sample(live)
        done, go = [], []
        for i, t in zip(live, tokens):
            s = self.seqs[i]
            s.out.append(t)
            if t in self.b.eos_ids or len(s.out) >= self.gen.max_new_tokens:
                done.append((s.key, self._finish(i)))
            else:
                go.append((i, t))
        if go:
            self._decode(go)
        return done

    def summary(self) -> EngineRecord:
        """The efficiency record (ccl.records.EngineRecord): speeds, padding, slot use, and FLOPs executed
        (padding and free slots included) and useful (what the same sequences need one at a time)."""
        c = self.c
        flops = FlopModel.of(self.b.model, self.head_dim)
        return engine_record(prefill_s=c.prefill_s, prefill_tokens=c.prefill_useful, prefill_padded=c.prefill_executed,
                             decode_s=c.decode_s, decode_tokens=c.decode_useful, decode_rows=c.decode_executed,
                             gflop_executed=flops.gflop(c.prefill_executed + c.decode_executed,
                                                        c.prefill_rows + c.decode_executed, c.attn_executed),
                             gflop_useful=flops.gflop(c.prefill_useful + c.decode_useful,
                                                      c.prefill_rows + c.decode_useful, c.attn_useful),
                             relayouts=c.relayouts)

    def details(self) -> dict:
        """The counts behind :meth:`summary`, for benchmarks (the efficiency record's fields are fixed)."""
        c = self.c
        return {"prefill_tokens": c.prefill_useful, "prefill_padding_tokens": c.prefill_executed - c.prefill_useful,
                "decode_tokens": c.decode_useful, "decode_free_rows": c.decode_executed - c.decode_useful,
                "prefill_rows": c.prefill_rows}

    # ------------------------------------------------------------------ decoding
    def _sample(self, live: list[int]) -> list[int]:
        logits = self.logits[live]
        if self.gen.temperature <= 0:
            return logits.argmax(-1).tolist()
        return self.b._sample(logits, self.gen, [self.seqs[i].gen for i in live]).tolist()

    def _decode(self, go: list[tuple[int, int]]) -> None:
        t0 = time.perf_counter()
        if self.n >= self.K[0].shape[2]:
            self._relayout(0)
        B = len(self.seqs)
        ids = torch.full((B, 1), self.b.pad_id, dtype=torch.long)
        pos = torch.zeros(B, 1, dtype=torch.long)
        step_lens = torch.zeros(B, dtype=torch.long)  # valid cached positions each slot attends to
        for i, t in go:
            ids[i, 0], pos[i, 0], step_lens[i] = t, self.lens[i], self.lens[i]
        lo = self.n - int(step_lens.max())  # columns before every live slot's first are skipped
        cols = torch.arange(lo, self.n + 1)
        mask = ((cols >= self.n - step_lens[:, None]) & (cols < self.n)) | (cols == self.n)
        cache = self._cache(lo)
        logits = self.b.model(input_ids=ids.to(self.dev), attention_mask=mask.long().to(self.dev),
                              position_ids=pos.to(self.dev), cache=cache, use_cache=True).logits[:, -1]
        self.n += 1
        for i, _ in go:
            self.lens[i] += 1
        self.logits = logits
        self._sync()
        self.c.decode_s += time.perf_counter() - t0
        self.c.decode_useful += len(go)
        self.c.decode_executed += B
        self.c.attn_useful += int(step_lens[[i for i, _ in go]].sum()) + len(go)
        self.c.attn_executed += B * (self.n - lo)

    def _cache(self, start: int):
        from transformers import DynamicCache

        cache = DynamicCache(config=self.b.model.config)
        cache.layers = [self.b._layer_cls(K, V, self.n, start) for K, V in zip(self.K, self.V)]
        return cache

    def _finish(self, i: int) -> GenOut:
        """Store slot ``i``'s cache in its state for the next turn and free the slot."""
        s, L = self.seqs[i], int(self.lens[i])
        # the finished token is not yet in the cache; it is prefilled with the next turn
        keep = L - (len(s.out) - 1) if s.rewind else L  # rewind: the prompt's positions only
        s.state["kv"] = [(K[i, :, self.n - L:self.n - L + keep].clone(), V[i, :, self.n - L:self.n - L + keep].clone())
                         for K, V in zip(self.K, self.V)]
        s.state["len"] = keep
        s.state["text"] = s.prompt if s.rewind else s.prompt + self.b.tok.decode(s.out[:-1])
        self.seqs[i] = None
        self.lens[i] = 0
        return GenOut(self.b.tok.decode(s.out, skip_special_tokens=True), len(s.inc), len(s.out))

    # ------------------------------------------------------------------ prefill and slots
    def _prefill(self) -> None:
        t0 = time.perf_counter()
        pending, self.pending = self.pending, []
        done = []
        for group in buckets([len(s.inc) for s in pending], self.max_pad, self.bucket_tokens):
            seqs = [pending[j] for j in group]
            logits, rows, lens = self._prefill_group(seqs)
            done += [(s, rows[r], lens[r], logits[r]) for r, s in enumerate(seqs)]
        # one layout for the whole batch of newcomers, wide enough for the longest
        longest = max(L for _, _, L, _ in done)
        if not self.K or longest > self.n or self.n >= self.K[0].shape[2]:
            self._relayout(longest)
        for s, kv, L, logits in done:
            self._place(s, kv, L, logits)
        self._sync()
        self.c.prefill_s += time.perf_counter() - t0

    def _prefill_group(self, seqs: list[_Seq]):
        """One forward over a bucket: each row's stored cache plus its increment. Returns the last
        position's logits and, per layer, every row's keys and values with padding removed."""
        incs = [s.inc for s in seqs]
        logits, cache, mask, lens = self.b._prefill([s.state for s in seqs], incs, 0)
        B, T, width = len(seqs), max(map(len, incs)), mask.shape[1]
        for n, L in zip(map(len, incs), lens):
            self.c.attn_useful += n * L + n * (n + 1) // 2
        self.c.prefill_rows += B
        self.c.prefill_useful += sum(map(len, incs))
        self.c.prefill_executed += B * T
        self.c.attn_executed += B * T * width
        keep = [m.nonzero().squeeze(1) for m in mask]
        rows = [[(layer.keys[r].index_select(1, keep[r]), layer.values[r].index_select(1, keep[r]))
                 for layer in cache.layers] for r in range(B)]
        return logits, rows, [len(k) for k in keep]

    def _place(self, s: _Seq, kv: list[tuple[torch.Tensor, torch.Tensor]], L: int, logits: torch.Tensor) -> None:
        """Copy one prefilled sequence (``L`` positions) into a free slot, right-aligned at ``n``."""
        s.state.pop("kv", None)  # the slot holds it now; the state gets it back when the turn ends
        if None not in self.seqs:
            self._grow()
        i = self.seqs.index(None)
        for li, (k, v) in enumerate(kv):
            self.K[li][i, :, self.n - L:self.n] = k
            self.V[li][i, :, self.n - L:self.n] = v
        self.seqs[i], self.lens[i] = s, L
        if self.logits is None or self.logits.shape[0] != len(self.seqs):
            old = self.logits
            self.logits = torch.zeros(len(self.seqs), logits.shape[-1], dtype=logits.dtype, device=self.dev)
            if old is not None:
                self.logits[: old.shape[0]] = old
        self.logits[i] = logits

    def _grow(self) -> None:
        """Open slots up to ``slots`` (the batch shrinks when most are free)."""
        add = max(1, self.slots - len(self.seqs))
        self.seqs += [None] * add
        self.lens = torch.cat([self.lens, torch.zeros(add, dtype=torch.long)])
        if self.K:
            shape = (add, self.kv_heads, self.K[0].shape[2], self.head_dim)
            self.K = [torch.cat([K, torch.zeros(shape, dtype=self.dtype, device=self.dev)]) for K in self.K]
            self.V = [torch.cat([V, torch.zeros(shape, dtype=self.dtype, device=self.dev)]) for V in self.V]
        if self.logits is not None:
            self.logits = torch.cat([self.logits, torch.zeros(add, self.logits.shape[1], dtype=self.logits.dtype,
                                                              device=self.dev)])

    def _shrink(self) -> None:
        """Drop free slots when at most half are live after the step's prefill (the last episodes
        of a run): a free slot still costs a row of every decoding step."""
        live = [i for i, s in enumerate(self.seqs) if s is not None]
        if len(live) > len(self.seqs) // 2 or not self.K:
            return
        sel = torch.tensor(live, dtype=torch.long)
        self.seqs = [self.seqs[i] for i in live]
        self.lens = self.lens[sel]
        d = sel.to(self.dev)
        self.K = [K.index_select(0, d) for K in self.K]
        self.V = [V.index_select(0, d) for V in self.V]
        self.logits = self.logits.index_select(0, d) if self.logits is not None and live else None

    def _relayout(self, width: int) -> None:
        """New buffers ``width + headroom`` wide, every live slot right-aligned at column ``width``."""
        width = max([width] + [int(x) for x in self.lens])
        cap = width + self.headroom
        B = len(self.seqs)
        shape = (B, self.kv_heads, cap, self.head_dim)
        K = [torch.zeros(shape, dtype=self.dtype, device=self.dev) for _ in range(self.layers)]
        V = [torch.zeros(shape, dtype=self.dtype, device=self.dev) for _ in range(self.layers)]
        for i, s in enumerate(self.seqs):
            L = int(self.lens[i])
            if s is None or not L:
                continue
            for li in range(self.layers):
                K[li][i, :, width - L:width] = self.K[li][i, :, self.n - L:self.n]
                V[li][i, :, width - L:width] = self.V[li][i, :, self.n - L:self.n]
        self.K, self.V, self.n = K, V, width
        self.c.relayouts += 1
