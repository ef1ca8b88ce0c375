"""LoRA training with MLX (Apple silicon; Linux CPU through ``mlx[cpu]``).

mlx-lm supplies the LoRA layers (``linear_to_lora_layers``) and the adapter format that
``mlx_lm.load(..., adapter_path=...)`` reads. The loss is ours: mlx-lm's own masking
supervises only the last message, while the study supervises every assistant turn of
the packed episode (``ccl.train.packing``). The functions mirror
``ccl.train.torch_trainer`` so one run driver serves both backends.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..artifacts.jsonio import orphans, temp_prefix
from ..episode import chat
from ..models.mlx_config import mlx_config_overrides
from ..vocabulary import DEFAULT_PRECISION
from .errors import CheckpointError, TrainingError, check_fingerprint
from .packing import Packed, pack_episode
from .recipe import TrainRecipe, adapted_layers

ADAPTER_FILE = "adapters.safetensors"
CHECKPOINT = "checkpoint.safetensors"


@dataclass
class MLXModel:
    model: object
    tok: object
    end_ids: set[int]
    n_adapted: int
    recipe: TrainRecipe
    base: str

    def tokenize(self, text: str) -> list[int]:
        return self.tok(text, add_special_tokens=False).input_ids

    def pack(self, messages: list[dict], max_length: int) -> Packed:
        return pack_episode(self.tokenize, chat.template(self.tok), messages, self.end_ids, max_length)


def load_for_training(folder: Path, recipe: TrainRecipe, seed: int, device: str | None = None) -> MLXModel:
    import mlx.core as mx
    import mlx_lm
    from mlx_lm.tuner.utils import linear_to_lora_layers
    from transformers import AutoTokenizer

    if recipe.precision != DEFAULT_PRECISION:  # bfloat16 is the torch trainer's (issue 56)
        raise TrainingError(f"train recipe precision {recipe.precision!r}: the MLX trainer computes in "
                            f"{DEFAULT_PRECISION} only; set train precision: {DEFAULT_PRECISION} or train on torch")
    model, wrapper = mlx_lm.load(str(folder), model_config=mlx_config_overrides(Path(folder)))
    tok = AutoTokenizer.from_pretrained(folder)
    model.freeze()
    n = len(adapted_layers(len(model.layers), recipe.adapt_fraction))
    mx.random.seed(seed)  # LoRA A matrices are drawn from MLX's global generator
    linear_to_lora_layers(model, n, {"rank": recipe.rank, "scale": recipe.scale, "dropout": recipe.dropout})
    if recipe.gradient_checkpointing:
        # mlx-lm's own switch: recompute each block's activations in the backward pass. It patches the
        # block class, so every model of that class in this process is checkpointed from here on (the
        # forward values are unchanged; a training process trains one model)
        from mlx_lm.tuner.trainer import grad_checkpoint
        grad_checkpoint(model.layers[0])
    end_ids = set(wrapper.eos_token_ids) | ({tok.eos_token_id} - {None})
    return MLXModel(model, tok, end_ids, n, recipe, str(folder))


def trainable(tm: MLXModel) -> dict:
    from mlx.utils import tree_flatten
    return dict(tree_flatten(tm.model.trainable_parameters()))


def count_trainable(tm: MLXModel) -> int:
    return sum(v.size for v in trainable(tm).values())


def _batch(batch: list[Packed], pad_id: int):
    import mlx.core as mx
    width = max(len(p.input_ids) for p in batch)
    ids = [p.input_ids + [pad_id] * (width - len(p.input_ids)) for p in batch]
    mask = [p.labels + [False] * (width - len(p.labels)) for p in batch]
    return mx.array(ids), mx.array(mask)


def _output_logits(model, hidden):
    """The vocabulary projection: a separate head, or the tied input embedding."""
    head = getattr(model, "lm_head", None)
    return head(hidden) if head is not None else model.model.embed_tokens.as_linear(hidden)


def _summed_nll(model, ids, mask):
    """Summed target NLL; the vocabulary projection runs only at positions whose next token is a
    target in some row (as in the torch trainer): projecting every position would cost
    batch x tokens x vocabulary floats, most of them never scored."""
    import mlx.core as mx
    import mlx.nn as nn
    import numpy as np
    targets = mask[:, 1:]
    keep = mx.array(np.flatnonzero(np.array(targets).any(axis=0)))
    hidden = model.model(ids[:, :-1])[:, keep]
    logits = _output_logits(model, hidden).astype(mx.float32)
    nll = nn.losses.cross_entropy(logits, ids[:, 1:][:, keep], reduction="none")
    return (nll * targets[:, keep]).sum()


def make_optimizer(tm: MLXModel, recipe: TrainRecipe):
    import mlx.optimizers as optim
    opt = optim.AdamW(learning_rate=recipe.lr, weight_decay=recipe.weight_decay)
    opt.init(tm.model.trainable_parameters())
    return opt


def _pad(tm: MLXModel) -> int:
    return tm.tok.pad_token_id if tm.tok.pad_token_id is not None else 0


def train_step(tm: MLXModel, opt, episodes: list[Packed], recipe: TrainRecipe, lr: float) -> dict:
    import mlx.core as mx
    import mlx.nn as nn
    import mlx.optimizers as optim
    from mlx.utils import tree_map

    start = time.perf_counter()
    tm.model.train()
    total = sum(p.n_targets for p in episodes)
    ordered = sorted(episodes, key=lambda p: len(p.input_ids))
    grad_fn = nn.value_and_grad(tm.model, lambda m, ids, mask: _summed_nll(m, ids, mask) / total)
    grads, loss_sum = None, 0.0
    for i in range(0, len(ordered), recipe.batch_size):
        loss, g = grad_fn(tm.model, *_batch(ordered[i:i + recipe.batch_size], _pad(tm)))
        grads = g if grads is None else tree_map(lambda a, b: a + b, grads, g)
        mx.eval(loss, grads)
        loss_sum += float(loss) * total
    grads, norm = optim.clip_grad_norm(grads, recipe.clip)
    opt.learning_rate = mx.array(lr)
    opt.update(tm.model, grads)
    mx.eval(tm.model.parameters(), opt.state)
    seconds = time.perf_counter() - start
    tokens = sum(len(p.input_ids) for p in episodes)
    return {"loss": loss_sum / total, "grad_norm": float(norm), "targets": total, "tokens": tokens,
            "tok_per_s": round(tokens / seconds, 1), "seconds": round(seconds, 3)}


def mean_loss(tm: MLXModel, episodes: list[Packed], batch_size: int, progress: Callable[[int], None]) -> float:
    tm.model.eval()
    ordered = sorted(episodes, key=lambda p: len(p.input_ids))
    total, count = 0.0, 0
    for i in range(0, len(ordered), batch_size):
        chunk = ordered[i:i + batch_size]
        total += float(_summed_nll(tm.model, *_batch(chunk, _pad(tm))))
        count += sum(p.n_targets for p in chunk)
        progress(len(chunk))
    return total / count if count else float("nan")


def save_adapter(tm: MLXModel, folder: Path) -> None:
    """mlx-lm's adapter format: adapter_config.json + adapters.safetensors, renamed into place."""
    import shutil

    import mlx.core as mx
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    mx.save_safetensors(str(tmp / ADAPTER_FILE), trainable(tm))
    r = tm.recipe
    config = {"fine_tune_type": "lora", "num_layers": tm.n_adapted, "base_model_name_or_path": Path(tm.base).name,  # no machine path
              "lora_parameters": {"rank": r.rank, "scale": r.scale, "dropout": r.dropout}}
    (tmp / "adapter_config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)


def _digest(arrays: dict, meta: dict) -> str:
    """SHA-256 over every array's name, dtype, shape and bytes and the metadata."""
    import numpy as np
    h = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    for k in sorted(arrays):
        a = np.array(arrays[k])
        h.update(f"{k}|{a.dtype}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save_checkpoint(path: Path, step: int, tm: MLXModel, opt, extra: dict) -> None:
    import mlx.core as mx
    from mlx.utils import tree_flatten
    arrays = {f"adapter/{k}": v for k, v in trainable(tm).items()}
    arrays |= {f"optimizer/{k}": v for k, v in tree_flatten(opt.state)}
    # by name: MLX sorts the header but lays the data out in the dict's order, and a resumed optimizer's
    # state is rebuilt from the loaded file, whose order need not be a straight run's; sorted, equal
    # state gives equal bytes (tests/test_checkpoint_determinism.py)
    arrays = dict(sorted(arrays.items()))
    meta = {"step": str(step), "extra": json.dumps(extra, sort_keys=True)}
    meta["sha256"] = _digest(arrays, meta)
    for stale in orphans(path.parent, path.name):  # a save killed before its rename
        stale.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix(path.name), suffix=".safetensors")
    os.close(fd)
    try:
        mx.save_safetensors(tmp, arrays, metadata=meta)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_checkpoint(path: Path, tm: MLXModel, opt, fingerprint: dict) -> dict:
    import mlx.core as mx
    from mlx.utils import tree_unflatten
    try:
        arrays, meta = mx.load(str(path), return_metadata=True)
        extra = json.loads(meta["extra"])
    except Exception as e:
        raise CheckpointError(f"{path}: corrupt checkpoint ({type(e).__name__}: {e}); delete it to start over") from None
    stored = meta.pop("sha256", None)
    if stored is None or stored != _digest(arrays, meta):
        raise CheckpointError(f"{path}: checkpoint content does not match its SHA-256 (altered or damaged); "
                              f"delete it to start over")
    check_fingerprint(path, extra.get("fingerprint"), json.loads(json.dumps(fingerprint)))
    adapter = {k[len("adapter/"):]: v for k, v in arrays.items() if k.startswith("adapter/")}
    if set(adapter) != set(trainable(tm)):
        raise CheckpointError(f"{path}: adapter tensors do not match this model's LoRA layers")
    tm.model.load_weights(list(adapter.items()), strict=False)
    opt.state = tree_unflatten([(k[len("optimizer/"):], v) for k, v in arrays.items() if k.startswith("optimizer/")])
    mx.eval(tm.model.parameters(), opt.state)
    return {"step": int(meta["step"]), **extra}
