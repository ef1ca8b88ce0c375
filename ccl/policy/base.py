"""The policy interface every backend implements, and generation settings.

A backend turns chat prompts (already rendered with the tokenizer's own chat template)
into assistant text. :class:`ModelPolicy` adapts a backend to the runtime: it renders
each episode's messages, keeps per-episode backend state (the KV cache) in its memory of
the episode (:class:`ModelMemory`, which the driving loop holds and hands back) so the next
turn only prefills the new observation, and counts tokens (per episode in that memory, in
total in ``stats``) and time.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, TypedDict

from ..episode.prompt_head import head_end
from ..episode.runtime import Episode
from ..records import EngineRecord


@dataclass(frozen=True)
class GenConfig:
    max_new_tokens: int = 256  # per assistant turn (the write-up's cap)
    temperature: float = 0.0  # 0 = greedy
    top_p: float = 1.0
    seed: int = 0  # sampling seed; each episode and turn derives its own generator from it


@dataclass
class GenOut:
    text: str  # assistant text without special tokens
    prompt_tokens: int  # tokens prefilled this turn (only the increment when the cache was reused)
    new_tokens: int


class BackendState(TypedDict, total=False):
    """A backend's state for one episode (``ModelMemory.backend``): empty for a fresh episode,
    emptied again when the prompt no longer extends the cached text. Only the backend reads
    the cache entries; the policy only offers ``prefix``."""

    text: str  # the text whose KV cache is held (prompt plus generated text, up to the last token)
    prefix: str  # a fresh episode's shared prompt head, offered by ModelPolicy; the backend pops it
    kv: list  # torch: per layer, the (keys, values) of the held text
    len: int  # torch: positions in ``kv``
    cache: Any  # mlx: the prompt cache (mlx_lm.models.cache)
    ids: list[int]  # openvino: the token path of ``text`` (the pipeline's prefix cache holds its blocks)


def cached_increment(state: BackendState, prompt: str) -> str | None:
    """The part of ``prompt`` after the text whose KV cache ``state`` holds, or None when
    the prompt does not extend it (a fresh episode, or a template that rewrote history)."""
    cached = state.get("text")
    return prompt[len(cached):] if cached and prompt.startswith(cached) else None


class Backend(Protocol):
    name: str

    def render(self, messages: list[dict]) -> str: ...

    def generate(self, states: list[BackendState], prompts: list[str], gen: GenConfig,
                 seeds: list[int], stop: Callable[[], bool] | None = None) -> list[GenOut]: ...


@dataclass
class Stats:
    prompt_tokens: int = 0
    new_tokens: int = 0
    gen_seconds: float = 0.0
    calls: int = 0
    engine: Any = None  # the continuous decoder, when one ran (its ``summary()``: the efficiency record's EngineRecord)


def engine_record(*, prefill_s: float, prefill_tokens: int, prefill_padded: int, decode_s: float,
                  decode_tokens: int, decode_rows: int, gflop_executed: float | None, gflop_useful: float,
                  relayouts: int | None) -> EngineRecord:
    """The efficiency record of a token-level engine, from its counters; every engine's summary() is
    this, so every engine writes the same fields (their meanings, and each engine's nulls:
    ccl.records.EngineRecord).

    prefill_tokens: increment tokens prefilled in ``prefill_s``; prefill_padded: those plus the padding
    executed beside them. decode_tokens: tokens fed to decoding for live sequences in ``decode_s``;
    decode_rows: the rows those steps executed, free slots included."""
    return {"prefill_tok_per_s": round(prefill_tokens / prefill_s, 1) if prefill_s else None,
            "decode_tok_per_s": round(decode_tokens / decode_s, 1) if decode_s else None,
            "prefill_s": round(prefill_s, 2), "decode_s": round(decode_s, 2),
            "prefill_padding": round(1 - prefill_tokens / prefill_padded, 4) if prefill_padded else 0.0,
            "decode_slot_use": round(decode_tokens / decode_rows, 4) if decode_rows else None,
            "gflop_executed": gflop_executed, "gflop_useful": gflop_useful, "relayouts": relayouts}


@dataclass(frozen=True)
class FlopModel:
    """The efficiency record's FLOP estimate, in GFLOP: 2 FLOPs per weight per token (the vocabulary
    projection only for the rows whose logits are computed) plus 4 per query-key pair per head dim."""

    body: int  # weights of the 2-D matrices other than the embedding and the vocabulary projection
    head: int  # hidden size x vocabulary: the vocabulary projection's weights
    attn: int  # 4 x attention heads x head dim x layers: FLOPs per query-key pair

    @classmethod
    def of(cls, model, head_dim: int) -> "FlopModel":
        cfg = model.config
        body = sum(p.numel() for n, p in model.named_parameters()
                   if p.dim() == 2 and "embed_tokens" not in n and "lm_head" not in n)
        attn = 4 * cfg.num_attention_heads * head_dim * cfg.num_hidden_layers
        return cls(body, cfg.hidden_size * cfg.vocab_size, attn)

    def gflop(self, tokens: int, logit_rows: int, pairs: int) -> float:
        return round((2 * self.body * tokens + 2 * self.head * logit_rows + self.attn * pairs) / 1e9, 1)


def episode_seed(gen: GenConfig, ep: Episode) -> int:
    """A per-episode, per-turn sampling seed that does not depend on batch composition."""
    import zlib
    return zlib.crc32(f"{gen.seed}|{ep.task['id']}|{len(ep.turns)}".encode())


@dataclass
class ModelMemory:
    """A model policy's memory of one episode, held by the loop that drives it."""

    backend: BackendState = field(default_factory=dict)  # the KV cache; empty when fresh or released
    new_tokens: int = 0  # tokens generated in this episode
    prompt_tokens: int = 0  # tokens prefilled (only the new part of the prompt when the cache was reused)


@dataclass
class ModelPolicy:
    backend: Any
    gen: GenConfig = field(default_factory=GenConfig)
    name: str = "model"
    stats: Stats = field(default_factory=Stats)
    continuous: bool = True  # token-level refill where the backend offers it (False: lock-step by turn)
    stop: Callable[[], bool] | None = None  # asked once per decoding step; True ends the turn (the server)

    def memory(self) -> ModelMemory:
        return ModelMemory()

    def act(self, ep: Episode, memory: ModelMemory) -> str:
        return self.act_batch([ep], [memory])[0]

    def _prompt(self, ep: Episode, memory: ModelMemory) -> str:
        """Render the episode; a fresh memory (first turn, or cache released) is offered the shared head."""
        prompt = self.backend.render(ep.messages)
        cut = None if memory.backend else head_end(prompt)
        if cut is not None:
            memory.backend["prefix"] = prompt[:cut]
        return prompt

    def _count(self, memory: ModelMemory, o: GenOut) -> None:
        self.stats.prompt_tokens += o.prompt_tokens
        self.stats.new_tokens += o.new_tokens
        memory.new_tokens += o.new_tokens
        memory.prompt_tokens += o.prompt_tokens

    def act_batch(self, eps: list[Episode], memories: list[ModelMemory]) -> list[str]:
        """One turn for every episode, in lock-step."""
        prompts = [self._prompt(ep, m) for ep, m in zip(eps, memories)]
        t0 = time.perf_counter()
        seeds = [episode_seed(self.gen, ep) for ep in eps]
        states = [m.backend for m in memories]
        outs = (self.backend.generate(states, prompts, self.gen, seeds) if self.stop is None
                else self.backend.generate(states, prompts, self.gen, seeds, stop=self.stop))
        self.stats.gen_seconds += time.perf_counter() - t0
        self.stats.calls += 1
        for m, o in zip(memories, outs):
            self._count(m, o)
        return [o.text for o in outs]

    # ------------------------------------------------------------------ token-level refill
    def decoder(self, slots: int):
        """The backend's continuous batch, or None (then rollouts run in lock-step by turn)."""
        if not self.continuous or not hasattr(self.backend, "continuous"):
            return None
        dec = self.backend.continuous(self.gen, slots)
        self.stats.engine = dec
        return dec

    def submit(self, dec, ep: Episode, memory: ModelMemory, rewind: bool = False) -> None:
        """Queue the episode's next turn on the continuous batch (``rewind``: see ContinuousDecoder.submit)."""
        t0 = time.perf_counter()  # tokenising (and a fresh episode's shared head) counts as generation time
        prompt = self._prompt(ep, memory)
        dec.submit((ep, memory), memory.backend, prompt, episode_seed(self.gen, ep), rewind)
        self.stats.gen_seconds += time.perf_counter() - t0

    def advance(self, dec) -> list[tuple[Episode, ModelMemory, str]]:
        """One decoding step; the turns that ended, as (episode, its memory, assistant text)."""
        t0 = time.perf_counter()
        outs = dec.step()
        self.stats.gen_seconds += time.perf_counter() - t0
        self.stats.calls += 1
        for (_, memory), o in outs:
            self._count(memory, o)
        return [(ep, memory, o.text) for (ep, memory), o in outs]

    def release(self, memory: ModelMemory) -> None:
        """Drop a finished episode's KV cache (its token counts stay)."""
        memory.backend = {}
