"""One episode -> one token sequence with its assistant turns supervised.

The conversation is cut into the pieces the inference backends feed the model: the
shared static head of the system prompt, the rest of the first prompt, and then, per
turn, the assistant's reply and the next observation with the assistant header. Each
piece is tokenised on its own, as the backends do when they extend a cached
conversation, so training sees the token boundaries inference produces. An assistant
piece is supervised up to and including its end-of-turn token; nothing else carries
loss. Under teacher forcing a causal model gives each supervised token the same loss
here as in a separate example holding only the prefix up to that turn, so packing
changes the cost, not the objective (tests/test_train.py checks this token by token).

Every assistant turn is a target unless its message says ``"train": false``: rows built from a
learner's own episodes (DAgger, ``ccl.learn.dagger``) keep the learner's mistakes as history the
model reads but never learns to write. The flag is read here and never reaches the chat template.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..episode.chat import Render
from ..episode.prompt_head import head_end


class PackingError(ValueError):
    """The chat template does not extend conversations append-only, or a turn has no end token."""


@dataclass(frozen=True)
class Packed:
    input_ids: list[int]
    labels: list[bool]  # True where the token is a supervised target
    turns: int  # assistant turns kept (after truncation)
    truncated: int  # assistant turns dropped to respect max_length
    head: int = 0  # leading tokens of the shared prompt head (0: none), tokenised on their own

    @property
    def n_targets(self) -> int:
        return sum(self.labels)


def pieces(render: Render, messages: list[dict]) -> list[tuple[str, bool]]:
    """The conversation text as (piece, is_assistant_reply), append-only."""
    out: list[tuple[str, bool]] = []
    done = ""
    plain = [{"role": m["role"], "content": m["content"]} for m in messages]
    for k, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        prompt = render(plain[:k], tokenize=False, add_generation_prompt=True)
        full = render(plain[: k + 1], tokenize=False)
        if not prompt.startswith(done) or not full.startswith(prompt):
            raise PackingError(f"chat template rewrites earlier text at assistant turn {k}; cannot pack")
        head = prompt[len(done):]
        cut = None if done else head_end(head)
        if cut is not None:  # the backends prefill the shared head on its own
            out.append((head[:cut], False))
            head = head[cut:]
        out.append((head, False))
        out.append((full[len(prompt):], m.get("train", True) is not False))
        done = full
    return out


def pack_episode(tokenize: Callable[[str], list[int]], render: Render, messages: list[dict],
                 end_ids: set[int], max_length: int) -> Packed:
    """Token ids and target mask; whole trailing turns are dropped to fit ``max_length``."""
    ids: list[int] = []
    labels: list[bool] = []
    kept = head = 0
    parts = pieces(render, messages)
    n_turns = sum(sup for _, sup in parts)
    for k, (text, supervised) in enumerate(parts):
        toks = tokenize(text)
        if k == 0 and head_end(text) == len(text):  # the shared head, a piece of its own
            head = len(toks)
        mask = [False] * len(toks)
        if supervised:
            end = next((i for i, t in enumerate(toks) if t in end_ids), None)
            if end is None:
                raise PackingError(f"assistant turn {kept} has no end-of-turn token in {text[-40:]!r}")
            mask = [i <= end for i in range(len(toks))]
            # trailing template text after the end token (a newline) carries no loss
            if len(ids) + end + 1 > max_length:
                break
        ids += toks
        labels += mask
        kept += supervised
    # tokens after the last target (an observation, a newline) would cost compute, not loss
    last = max((i for i, v in enumerate(labels) if v), default=-1)
    ids, labels = ids[: last + 1], labels[: last + 1]
    return Packed(ids, labels, kept, n_turns - kept, min(head, len(ids)))


def per_turn_examples(tokenize: Callable[[str], list[int]], render: Render, messages: list[dict],
                      end_ids: set[int]) -> list[Packed]:
    """The unpacked alternative: one example per assistant turn, only that turn supervised."""
    packed = pack_episode(tokenize, render, messages, end_ids, max_length=10**9)
    starts = [i for i, v in enumerate(packed.labels) if v and (i == 0 or not packed.labels[i - 1])]
    out = []
    for j, start in enumerate(starts):
        end = start
        while end < len(packed.labels) and packed.labels[end]:
            end += 1
        mask = [start <= i < end for i in range(end)]
        out.append(Packed(packed.input_ids[:end], mask, 1, 0))
    return out
