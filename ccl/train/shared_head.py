"""The training loss with the shared prompt head run once per micro-batch (issue 17, round 2).

Every packed episode starts with the same tokens: the chat template's opening and the static
head of the system prompt, which the packer tokenises on its own (``packing.pieces``), about
a third of an oracle episode. Round 1 ran them through the model again for every row. Here:

1. the head runs once, as a batch of one, with gradients; each layer's keys and values are
   recorded, still attached to the autograd graph;
2. every row's remaining tokens run with those keys and values as a read-only prefix
   (expanded to the batch, a view), so each row sees exactly the context it saw before;
3. the vocabulary projection runs only at each row's own target positions (round 1 projected
   every row at the union of all rows' target positions).

The loss is the same function of the same parameters, so its value and its gradients equal
the per-row computation up to float summation order: the gradient reaching the head's keys
and values is the sum over rows, which is what the expand's backward computes
(tests/test_train.py checks loss and every LoRA gradient against round 1 on a tiny model,
with and without gradient checkpointing).

Gradient checkpointing replays each decoder layer in the backward pass. Both cache layers
here only read (the prefix) or overwrite with the same value (the recorder), so a replay
leaves them as they were; ``allow_cache_under_checkpointing`` tells transformers so.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .packing import Packed


def _layer_classes():
    from transformers.cache_utils import DynamicLayer

    class RecordingLayer(DynamicLayer):
        """Keeps the keys and values of the one forward pass over the head (overwritten, not
        appended, so the replay of a checkpointed layer leaves the same record)."""

        def update(self, key_states, value_states, *args, **kwargs):
            self.keys, self.values = key_states, value_states
            self.device, self.is_initialized = key_states.device, True
            return key_states, value_states

        def get_seq_length(self) -> int:
            return 0  # the head pass starts at position 0; the record is read through PrefixLayer

    class PrefixLayer(DynamicLayer):
        """Read-only: returns the head's keys and values followed by the rows' own; stores nothing."""

        def __init__(self, keys: torch.Tensor, values: torch.Tensor):
            super().__init__()
            self.keys, self.values = keys, values
            self.device, self.is_initialized = keys.device, True

        def update(self, key_states, value_states, *args, **kwargs):
            rows = key_states.shape[0]
            return (torch.cat([self.keys.expand(rows, -1, -1, -1), key_states], dim=-2),
                    torch.cat([self.values.expand(rows, -1, -1, -1), value_states], dim=-2))

    return RecordingLayer, PrefixLayer


def allow_cache_under_checkpointing(model: torch.nn.Module) -> None:
    """Let the decoder layers keep the cache argument under gradient checkpointing (transformers
    drops it by default because its own caches append on every call; these do not)."""
    from transformers.modeling_layers import GradientCheckpointingLayer
    for m in model.modules():
        if isinstance(m, GradientCheckpointingLayer):
            m._can_checkpoint_with_cache = True


def common_head(batch: list[Packed]) -> int:
    """Length of the head all rows share (0: none). The head carries no target, and neither
    does the token right after it, whose logit would come from the head's last position."""
    h = batch[0].head
    if h == 0 or any(p.head != h or p.input_ids[:h] != batch[0].input_ids[:h] for p in batch):
        return 0
    if any(any(p.labels[:h + 1]) for p in batch):
        return 0
    return h


@dataclass
class Split:
    head: torch.Tensor  # (1, h) shared head ids
    rest: torch.Tensor  # (B, W) each row's tokens after the head, right-padded
    mask: torch.Tensor  # (B, h + W) attention mask over head and rest
    rows: torch.Tensor  # (N,) row of each target
    cols: torch.Tensor  # (N,) position in ``rest`` whose output predicts the target
    targets: torch.Tensor  # (N,) target token ids


def split_batch(batch: list[Packed], h: int, pad_id: int, device: str) -> Split:
    """Head, right-padded remainders and the (row, position, token) of every target.
    Position t predicts token t + 1; in ``rest`` coordinates it is t - h."""
    width = max(len(p.input_ids) for p in batch) - h
    rest = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), h + width), dtype=torch.long)
    rows, cols, targets = [], [], []
    for r, p in enumerate(batch):
        n = len(p.input_ids)
        rest[r, :n - h] = torch.tensor(p.input_ids[h:])
        mask[r, :n] = 1
        for t in range(max(h, 0), n - 1):
            if p.labels[t + 1]:
                rows.append(r)
                cols.append(t - h)
                targets.append(p.input_ids[t + 1])
    as_long = lambda xs: torch.tensor(xs, dtype=torch.long, device=device)  # noqa: E731
    return Split(torch.tensor([batch[0].input_ids[:h]], device=device), rest.to(device), mask.to(device),
                 as_long(rows), as_long(cols), as_long(targets))


def _body_and_head(model: torch.nn.Module) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The transformer body (embeddings to final norm) and the vocabulary projection. The loss
    projects the body's output itself, so a model whose causal-LM head does more than that
    (logit scaling or soft-capping) is refused rather than trained on other logits."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    cfg = base.config
    for name in ("final_logit_softcapping", "logits_scaling", "logit_scale"):
        if getattr(cfg, name, None) not in (None, 1, 1.0):
            raise NotImplementedError(f"{type(base).__name__}: {name} is not applied by the shared-head loss")
    return getattr(base, base.base_model_prefix), base.get_output_embeddings()


def _full_attention_only(cfg) -> bool:
    """The prefix cache is a plain full-attention cache: sliding-window or hybrid layers get none."""
    types = getattr(cfg, "layer_types", None)
    return not getattr(cfg, "use_sliding_window", False) and (types is None or set(types) == {"full_attention"})


def summed_nll(model: torch.nn.Module, batch: list[Packed], pad_id: int, device: str) -> tuple[torch.Tensor, int]:
    """Sum of target-token negative log-likelihoods over the batch, and the target count."""
    logits, s = target_logits(model, batch, pad_id, device)
    loss = torch.nn.functional.cross_entropy(logits, s.targets, reduction="sum")
    return loss, int(s.targets.numel())


def target_logps(model: torch.nn.Module, batch: list[Packed], pad_id: int, device: str,
                 temperature: float = 1.0) -> torch.Tensor:
    """Each target token's log-probability (logits divided by ``temperature``, as the sampler drew them),
    row by row and in order within a row: the per-token quantity policy-gradient losses need (GRPO)."""
    logits, s = target_logits(model, batch, pad_id, device)
    logps = torch.log_softmax(logits / temperature, dim=-1)
    return logps.gather(1, s.targets[:, None])[:, 0]


def target_logits(model: torch.nn.Module, batch: list[Packed], pad_id: int,
                  device: str) -> tuple[torch.Tensor, Split]:
    """Float32 logits at every target's predicting position (the shared head run once), and the split
    that says which row, position and token each belongs to."""
    from transformers import DynamicCache

    body, lm_head = _body_and_head(model)
    h = common_head(batch) if _full_attention_only(body.config) else 0
    s = split_batch(batch, h, pad_id, device)
    cache = None
    if h:
        Recording, Prefix = _layer_classes()
        record = DynamicCache(config=body.config)
        record.layers = [Recording() for _ in range(body.config.num_hidden_layers)]
        body(input_ids=s.head, cache=record, use_cache=False)
        cache = DynamicCache(config=body.config)
        cache.layers = [Prefix(layer.keys, layer.values) for layer in record.layers]
    hidden = body(input_ids=s.rest, attention_mask=s.mask, cache=cache, use_cache=False).last_hidden_state
    return lm_head(hidden[s.rows, s.cols]).float(), s
