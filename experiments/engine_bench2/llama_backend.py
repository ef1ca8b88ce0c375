"""llama.cpp backend (measured for issue 39, not adopted: experiments/engine_bench2/README.md): the same float32 weights and token ids as the torch backend, run by llama.cpp's
CPU kernels with token-level continuous batching over one shared KV cache (issue 39).

Why: on two cores the torch engine is bound by its eager step (small matrix products, attention over a
padded cache); llama.cpp decodes a mixed batch (new sequences' prompts and one token for every running
sequence) in one pass with no padding, each sequence attending only to its own cells of the cache.

What stays the torch backend's, so transcripts agree (experiments/engine_bench2/README.md measures how
far): the tokenizer (transformers'; llama.cpp only receives token ids), the prompt split (a fresh
episode's shared head tokenised alone, each turn's increment tokenised alone, the previous turn's last
token prefilled with the next turn), greedy argmax over float32 logits, and the weights: the converted
float32 model with the adapter merged as peft merges it, written to a float32 GGUF
(ccl/models/gguf_export.py). The KV cache is float32 too.

Layout. An episode's state holds ``ids`` (the tokens whose keys and values the cache holds for it) and
a :class:`Lease` on a sequence id of the context. A fresh episode's cache starts as a copy of its shared
head's sequence (llama.cpp shares the cells, nothing is copied). When the episode's memory is released
the lease is dropped and its cells are freed at the next step. When sequence ids or cells run out, the
least recently used idle episode is evicted; it keeps ``ids``, so its next turn prefills them again and
the result is unchanged.
"""
from __future__ import annotations

import ctypes
import itertools
import tempfile
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ccl.devices import cpu_threads
from ccl.episode import chat
from ccl.models.registry import ModelSpec
from ccl.policy.base import BackendState, GenConfig, GenOut, cached_increment

SEQ_IDS = 64  # sequence ids of the context: running turns, idle episodes and shared heads together
CELLS = 65536  # KV cells shared by all sequences (float32: about 46 KB per cell for SmolLM2-135M)
BATCH = 2048  # tokens per decoding call: every running sequence's next token, then prompt chunks
UBATCH = 512  # llama.cpp's physical batch
GGML_F32 = 0


class Lease:
    """A sequence id held by one episode's state; dropping the state returns the id (freed at the next
    step, on the thread that decodes). ``sid`` is None once evicted."""

    def __init__(self, pool: "_Pool", sid: int):
        self.pool, self.sid, self.used = pool, sid, next(pool.clock)

    def __del__(self) -> None:
        if self.sid is not None:
            self.pool.dead.append(self.sid)


@dataclass
class _Pool:
    free: list[int]
    clock: Any = field(default_factory=itertools.count)
    leases: dict[int, Any] = field(default_factory=dict)  # sid -> weakref to its Lease
    dead: list[int] = field(default_factory=list)


@dataclass
class _Seq:
    key: Any
    state: BackendState
    prompt: str
    todo: list[int]  # tokens to prefill before the next logits
    rng: np.random.Generator | None
    rewind: bool
    inc: int  # increment length (prompt tokens of this turn)
    out: list[int] = field(default_factory=list)
    logits: np.ndarray | None = None


class LlamaBackend:
    name = "llamacpp"

    def __init__(self, model_dir: str | Path, spec: ModelSpec, adapter: str | Path | None = None,
                 threads: int | None = None):
        import llama_cpp
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from ccl.models.gguf_export import export_gguf
        from ccl.models.weights import gguf_file

        self.ll = llama_cpp
        self.tok = AutoTokenizer.from_pretrained(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
        if adapter is not None:
            from ccl.policy.adapters import attach_adapter
            model = attach_adapter(model, model_dir, adapter)
        eos = model.generation_config.eos_token_id
        eos = eos if isinstance(eos, list) else [eos]
        self.eos_ids = {i for i in eos + [self.tok.eos_token_id] if i is not None}
        self._tmp = tempfile.TemporaryDirectory(prefix="ccl-llama-")
        work = Path(self._tmp.name)
        source = gguf_file(spec, work)  # the package's GGUF (its parts joined in ``work``): the metadata
        path = export_gguf(source, model, work / "model-f32.gguf")
        if source.parent == work:
            source.unlink()
        del model
        self._load(path, cpu_threads(threads))
        Path(path).unlink()  # llama.cpp has read it (no memory map)
        self.pool = _Pool(free=list(range(SEQ_IDS)))
        self.heads: dict[str, tuple[Lease, list[int]]] = {}

    def _load(self, path: Path, threads: int) -> None:
        ll = self.ll
        ll.llama_backend_init()
        ll.llama_log_set(_QUIET, ctypes.c_void_p())
        mp = ll.llama_model_default_params()
        mp.use_mmap = False
        self.model = ll.llama_model_load_from_file(str(path).encode(), mp)
        if not self.model:
            raise RuntimeError(f"llama.cpp could not load {path}")
        cp = ll.llama_context_default_params()
        cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = CELLS, BATCH, UBATCH, SEQ_IDS
        cp.n_threads = cp.n_threads_batch = threads
        cp.type_k = cp.type_v = GGML_F32
        cp.kv_unified, cp.no_perf = True, True
        self.ctx = ll.llama_init_from_model(self.model, cp)
        if not self.ctx:
            raise RuntimeError("llama.cpp could not create a context")
        self.mem = ll.llama_get_memory(self.ctx)
        self.n_vocab = ll.llama_vocab_n_tokens(ll.llama_model_get_vocab(self.model))
        self.batch = ll.llama_batch_init(BATCH, 0, 1)

    def render(self, messages: list[dict]) -> str:
        return chat.prompt(self.tok, messages)

    def continuous(self, gen: GenConfig, slots: int) -> "LlamaDecoder":
        return LlamaDecoder(self, gen, slots)

    def generate(self, states: list[BackendState], prompts: list[str], gen: GenConfig,
                 seeds: list[int], stop: Callable[[], bool] | None = None) -> list[GenOut]:
        """One turn for every row (the lock-step interface), on a continuous batch of their size."""
        dec = LlamaDecoder(self, gen, len(states))
        for i, (st, p, seed) in enumerate(zip(states, prompts, seeds)):
            dec.submit(i, st, p, seed)
        outs: dict[int, GenOut] = {}
        while dec.busy():
            if stop is not None and stop():
                outs.update(dec.stop_all())
                break
            outs.update(dec.step())
        return [outs[i] for i in range(len(states))]

    # ------------------------------------------------------------------ sequences
    def lease(self, st: BackendState) -> tuple[int, list[int]]:
        """The sequence id holding ``st``'s cache, and the tokens to prefill again first: none, or all of
        ``st['ids']`` when the episode was evicted (``st['ids']`` is then emptied until they are back)."""
        lease = st.get("lease")
        if lease is not None and lease.sid is not None:
            lease.used = next(self.pool.clock)
            return lease.sid, []
        st["lease"] = lease = Lease(self.pool, self._free_sid())
        self.pool.leases[lease.sid] = weakref.ref(lease)
        refill, st["ids"] = list(st.get("ids", [])), []
        return lease.sid, refill

    def _free_sid(self) -> int:
        self.collect()
        if not self.pool.free:
            self.evict(1)
        if not self.pool.free:
            raise RuntimeError(f"all {SEQ_IDS} sequence ids are held by running turns")
        return self.pool.free.pop()

    def collect(self) -> None:
        """Free the cells of released episodes."""
        while self.pool.dead:
            sid = self.pool.dead.pop()
            self.ll.llama_memory_seq_rm(self.mem, sid, -1, -1)
            self.pool.leases.pop(sid, None)
            self.pool.free.append(sid)

    def evict(self, n: int, busy: set[int] = frozenset()) -> int:
        """Evict up to ``n`` idle episodes, least recently used first (heads and ``busy`` sids stay)."""
        heads = {lease.sid for lease, _ in self.heads.values()}
        idle = [(lease.used, sid, lease) for sid, ref in self.pool.leases.items()
                if (lease := ref()) is not None and sid not in heads and sid not in busy]
        for _, sid, lease in sorted(idle)[:n]:
            self.ll.llama_memory_seq_rm(self.mem, sid, -1, -1)
            lease.sid = None
            self.pool.leases.pop(sid, None)
            self.pool.free.append(sid)
        return min(n, len(idle))

    def head(self, prefix: str) -> tuple[int, list[int]]:
        """The shared prompt head's sequence (prefilled once, never evicted) and its token ids."""
        if prefix not in self.heads:
            ids = self.tok(prefix, add_special_tokens=False).input_ids
            holder: BackendState = {}
            sid, _ = self.lease(holder)
            for at in range(0, len(ids), BATCH):
                self.decode([(sid, ids[at:at + BATCH], at, False)], {sid})
            self.heads[prefix] = (holder["lease"], ids)
        lease, ids = self.heads[prefix]
        return lease.sid, ids

    def forget(self, st: BackendState, keep: int = 0) -> None:
        """Drop ``st``'s cached tokens from position ``keep`` on."""
        lease = st.get("lease")
        if lease is not None and lease.sid is not None:
            self.ll.llama_memory_seq_rm(self.mem, lease.sid, keep, -1)
        st["ids"] = st.get("ids", [])[:keep]

    def decode(self, work: list[tuple[int, list[int], int, bool]], busy: set[int]) -> list[np.ndarray | None]:
        """One llama_decode over ``(sid, tokens, first position, want logits)`` entries (at most BATCH
        tokens); returns the last token's logits for each entry that wants them. A full cache evicts
        idle episodes and tries again."""
        b, n = self.batch, 0
        rows = []
        if sum(len(toks) for _, toks, _, _ in work) > BATCH:
            raise ValueError(f"more than {BATCH} tokens in one decoding call")
        for sid, toks, pos0, want in work:
            for j, t in enumerate(toks):
                b.token[n], b.pos[n], b.n_seq_id[n] = t, pos0 + j, 1
                b.seq_id[n][0] = sid
                b.logits[n] = want and j == len(toks) - 1
                n += 1
            rows.append(n - 1 if want else None)
        b.n_tokens = n
        while (rc := self.ll.llama_decode(self.ctx, b)) == 1:  # no room in the cache
            if not self.evict(4, busy):
                raise RuntimeError(f"the KV cache ({CELLS} cells) is full with running turns")
        if rc != 0:
            raise RuntimeError(f"llama_decode failed ({rc})")
        return [None if r is None else np.ctypeslib.as_array(self.ll.llama_get_logits_ith(self.ctx, r),
                                                              shape=(self.n_vocab,)).copy() for r in rows]


class LlamaDecoder:
    """Turns are submitted with :meth:`submit`; each :meth:`step` samples one token for every sequence
    that has logits, ends the turns that finished, and runs one decoding call: the next token of every
    running sequence plus as much of the waiting prompts as fits. Same interface as the torch
    engine's ``ContinuousDecoder``."""

    def __init__(self, backend: LlamaBackend, gen: GenConfig, slots: int):
        self.b, self.gen, self.slots = backend, gen, slots
        self.running: list[_Seq] = []
        self.pending: list[_Seq] = []
        self.counts = {"prefill_tokens": 0, "decode_tokens": 0, "calls": 0}

    def submit(self, key: Any, state: BackendState, prompt: str, seed: int, rewind: bool = False) -> None:
        """Queue a turn (``rewind``: see the torch engine's ``ContinuousDecoder.submit``)."""
        b = self.b
        if "prefix" in state:  # a fresh episode: its cache starts as the shared head's (cells shared)
            prefix = state.pop("prefix")
            head, ids = b.head(prefix)
            b.forget(state)
            mine, _ = b.lease(state)
            b.ll.llama_memory_seq_cp(b.mem, head, mine, -1, -1)
            state["ids"], state["text"] = list(ids), prefix
        text = cached_increment(state, prompt)
        if text is None:  # the prompt does not extend the cache: prefill it whole
            b.forget(state)
            text = prompt
        inc = b.tok(text, add_special_tokens=False).input_ids
        state["text"] = prompt
        rng = np.random.default_rng(seed) if self.gen.temperature > 0 else None
        self.pending.append(_Seq(key, state, prompt, list(inc), rng, rewind, len(inc)))

    def busy(self) -> bool:
        return bool(self.pending or self.running)

    def close(self) -> None:
        self.running, self.pending = [], []

    def summary(self) -> dict:
        return dict(self.counts)

    def stop_all(self) -> list[tuple[Any, GenOut]]:
        """End every turn now (the server's stop): what each produced so far."""
        done = [(s.key, self._finish(s)) for s in self.running if s.out]
        self.running, self.pending = [], []
        return done

    def step(self) -> list[tuple[Any, GenOut]]:
        done, go = [], []
        for s in self.running:
            if s.logits is None:
                go.append(s)  # still prefilling
                continue
            t = self._sample(s)
            s.out.append(t)
            s.logits = None
            if t in self.b.eos_ids or len(s.out) >= self.gen.max_new_tokens:
                done.append((s.key, self._finish(s)))
            else:
                s.todo = [t]
                go.append(s)
        self.running = go
        while self.pending and len(self.running) < self.slots:
            self.running.append(self.pending.pop(0))
        if self.running:
            self._decode()
        return done

    def _decode(self) -> None:
        b, room, busy = self.b, BATCH, set()
        work, seqs = [], []
        for s in sorted(self.running, key=lambda s: len(s.todo)):  # running tokens first, then prompt chunks
            if not s.todo or room == 0:
                continue
            sid, refill = b.lease(s.state)  # an evicted episode prefills its cached tokens again first
            s.todo = refill + s.todo
            busy.add(sid)
            chunk = s.todo[:room]
            room -= len(chunk)
            work.append((sid, chunk, len(s.state["ids"]), len(chunk) == len(s.todo)))
            seqs.append((s, chunk))
        logits = b.decode(work, busy)
        self.counts["calls"] += 1
        for (s, chunk), row in zip(seqs, logits):
            s.state["ids"] = s.state["ids"] + chunk
            s.todo = s.todo[len(chunk):]
            self.counts["decode_tokens" if s.out and len(chunk) == 1 else "prefill_tokens"] += len(chunk)
            if row is not None:
                s.logits = row

    def _sample(self, s: _Seq) -> int:
        if s.rng is None:
            return int(np.argmax(s.logits))
        z = s.logits.astype(np.float64) / self.gen.temperature
        p = np.exp(z - z.max())
        p /= p.sum()
        if self.gen.top_p < 1.0:
            order = np.argsort(-p, kind="stable")
            keep = order[: int(np.searchsorted(np.cumsum(p[order]), self.gen.top_p)) + 1]
            q = np.zeros_like(p)
            q[keep] = p[keep]
            p = q / q.sum()
        return int(s.rng.choice(len(p), p=p))

    def _finish(self, s: _Seq) -> GenOut:
        """The turn's text; the state keeps the cache of the prompt and every generated token but the
        last (prefilled with the next turn), or of the prompt alone (``rewind``)."""
        b, st = self.b, s.state
        if s.rewind:
            b.forget(st, len(st["ids"]) - (len(s.out) - 1))
        st["text"] = s.prompt if s.rewind else s.prompt + b.tok.decode(s.out[:-1])
        return GenOut(b.tok.decode(s.out, skip_special_tokens=True), s.inc, len(s.out))


@ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
def _QUIET(level, text, data):  # llama.cpp's log: silent (errors come back as return codes)
    return None
