"""LoRA training with torch + peft (CPU, CUDA, MPS): packed episodes, assistant-only loss.

Each optimizer step takes ``batch_size x grad_accum`` episodes (sorted by length so each
micro-batch pads little); the loss is the sum of target-token negative log-likelihoods
divided by the step's target count, so gradient accumulation gives exactly the gradient
of one big batch. The loss (:mod:`.shared_head`) runs the shared prompt head once per
micro-batch and projects logits only at each row's targets; ``summed_nll_round1`` is the
previous per-row computation, kept as the reference of tests and ``scripts/bench_train.py``.

On CUDA, training steps and validation losses run under torch's deterministic kernels
(:func:`reproducible`), so a resumed run ends on the same adapter bytes as a straight one, as
on CPU; checkpoints there also carry the CUDA generator's state (:func:`rng_state`).
"""
from __future__ import annotations

import hashlib
import io
import json
import sys
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import torch

from ..artifacts.jsonio import atomic_write_bytes
from ..episode import chat
from ..vocabulary import DEFAULT_PRECISION
from .errors import CheckpointError, check_fingerprint
from .packing import Packed, pack_episode
from .recipe import TrainRecipe, adapted_layers
from .shared_head import allow_cache_under_checkpointing, summed_nll

NllFn = Callable[[torch.nn.Module, list[Packed], int, str], tuple[torch.Tensor, int]]

ADAPTER_FILE = "adapter_model.safetensors"
CHECKPOINT = "checkpoint.pt"
LINEAR_NAMES = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
CUBLAS_CONFIG = "CUBLAS_WORKSPACE_CONFIG"
CUBLAS_DETERMINISTIC = ":4096:8"  # one of the two settings torch's deterministic mode accepts


@dataclass
class TorchModel:
    model: torch.nn.Module  # the peft-wrapped model
    tok: object
    device: str
    end_ids: set[int]
    precision: str = DEFAULT_PRECISION  # the products' precision (TrainRecipe.precision)

    def tokenize(self, text: str) -> list[int]:
        return self.tok(text, add_special_tokens=False).input_ids

    def pack(self, messages: list[dict], max_length: int) -> Packed:
        return pack_episode(self.tokenize, chat.template(self.tok), messages, self.end_ids, max_length)


def end_token_ids(tok, model) -> set[int]:
    ids = model.generation_config.eos_token_id
    ids = set(ids if isinstance(ids, list) else [ids] if ids is not None else [])
    if tok.eos_token_id is not None:
        ids.add(tok.eos_token_id)
    return ids


def _base(folder: Path, device: str) -> tuple[Any, torch.nn.Module]:
    """The tokenizer and the base model: float32 on CPU (the precision a CPU run starts from; a
    bfloat16 recipe converts the frozen weights after the LoRA is made, :func:`_in_precision`),
    bfloat16 on an accelerator."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    return AutoTokenizer.from_pretrained(folder), AutoModelForCausalLM.from_pretrained(folder, dtype=dtype).to(device)


def _in_precision(model: torch.nn.Module, precision: str) -> torch.nn.Module:
    """The model for ``precision``. bfloat16: every frozen weight stored in bfloat16, so each product
    reads it as the CPU's matrix units take it (under autocast a float32 weight would be converted on
    every forward); the LoRA weights stay float32, as do their gradients and the optimizer's state,
    and drawn before the conversion, they start from the same values as a float32 run's."""
    if precision == "bfloat16":
        for p in model.parameters():
            if not p.requires_grad:
                p.data = p.data.to(torch.bfloat16)
    return model


def compute(tm: TorchModel) -> Any:
    """The forward's precision: autocast to bfloat16 for a bfloat16 model (the LoRA products too, their
    float32 weights converted per product: in the prototype a few percent faster than leaving those
    small products in float32), else as is."""
    if tm.precision == "bfloat16":
        return torch.autocast(tm.device.split(":")[0], dtype=torch.bfloat16)
    return nullcontext()


def load_for_training(folder: Path, recipe: TrainRecipe, seed: int, device: str) -> TorchModel:
    from peft import LoraConfig, get_peft_model

    tok, model = _base(folder, device)
    n_layers = model.config.num_hidden_layers
    config = LoraConfig(r=recipe.rank, lora_alpha=recipe.scale * recipe.rank, lora_dropout=recipe.dropout,
                        target_modules=list(LINEAR_NAMES),
                        layers_to_transform=adapted_layers(n_layers, recipe.adapt_fraction),
                        task_type="CAUSAL_LM")
    torch.manual_seed(seed)  # LoRA A matrices are drawn from the global generator
    model = _in_precision(get_peft_model(model, config), recipe.precision)
    if recipe.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
        allow_cache_under_checkpointing(model)  # the shared head's read-only prefix cache
    return TorchModel(model, tok, device, end_token_ids(tok, model), recipe.precision)


def load_adapter_for_training(folder: Path, adapter: Path, device: str) -> TorchModel:
    """The base model with a trained adapter (peft format), its weights trainable: a second stage (DPO)
    continues a run instead of starting a fresh LoRA."""
    from peft import PeftModel

    tok, base = _base(folder, device)
    model = PeftModel.from_pretrained(base, adapter, is_trainable=True)
    return TorchModel(model, tok, device, end_token_ids(tok, base))


def trainable(model: torch.nn.Module) -> dict[str, torch.nn.Parameter]:
    return {n: p for n, p in model.named_parameters() if p.requires_grad}


def count_trainable(tm: TorchModel) -> int:
    return sum(p.numel() for p in trainable(tm.model).values())


def collate(batch: list[Packed], pad_id: int, device: str) -> tuple[torch.Tensor, ...]:
    """Right-padded ids, attention mask, targets (-100 = no loss) and the positions to score."""
    width = max(len(p.input_ids) for p in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    targets = torch.full((len(batch), width), -100, dtype=torch.long)
    for r, p in enumerate(batch):
        n = len(p.input_ids)
        ids[r, :n] = torch.tensor(p.input_ids)
        mask[r, :n] = 1
        targets[r, :n] = torch.tensor([t if lab else -100 for t, lab in zip(p.input_ids, p.labels)])
    # position t predicts token t+1: keep the positions whose next token is a target in any row
    keep = (targets[:, 1:] != -100).any(dim=0).nonzero().flatten()
    return ids.to(device), mask.to(device), targets[:, 1:][:, keep].to(device), keep.to(device)


def summed_nll_round1(model: torch.nn.Module, batch: list[Packed], pad_id: int,
                      device: str) -> tuple[torch.Tensor, int]:
    """Round 1's loss: every row whole (head included), logits at the union of all rows' target
    positions. Same value as :func:`.shared_head.summed_nll`, more work."""
    ids, mask, targets, keep = collate(batch, pad_id, device)
    logits = model(input_ids=ids, attention_mask=mask, logits_to_keep=keep).logits.float()
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                                             ignore_index=-100, reduction="sum")
    return loss, int((targets != -100).sum())


def token_losses(model: torch.nn.Module, p: Packed, device: str) -> torch.Tensor:
    """Per-target negative log-likelihoods of one sequence, in order (for tests and checks)."""
    ids = torch.tensor([p.input_ids], device=device)
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, :-1].float()
    nll = torch.nn.functional.cross_entropy(logits, ids[0, 1:], reduction="none")
    return nll[torch.tensor(p.labels[1:], device=device)]


def state_digest(state) -> str:
    """SHA-256 over a checkpoint's content: every tensor's name, dtype, shape and bytes, and
    every other value as JSON, so a flipped byte inside a stored tensor is detected."""
    h = hashlib.sha256()

    def walk(prefix: str, value) -> None:
        if isinstance(value, torch.Tensor):
            t = value.detach().cpu().contiguous()
            h.update(f"{prefix}|{t.dtype}|{tuple(t.shape)}|".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        elif isinstance(value, dict):
            for k in sorted(value, key=str):
                walk(f"{prefix}/{k}", value[k])
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(f"{prefix}/{i}", v)
        else:
            h.update(f"{prefix}={json.dumps(value, sort_keys=True, default=str)}|".encode())

    walk("", state)
    return h.hexdigest()


def _on_cuda(device: str) -> bool:
    return device.split(":")[0] == "cuda"


@contextmanager
def reproducible(device: str) -> Iterator[None]:
    """On CUDA, torch's deterministic kernels while the block runs, then the process's settings back.

    By default two identical bf16 runs on a GPU end on different adapters: the fused attention
    kernels' backward (cuDNN attention on an H200 with torch 2.11, the only op torch flagged
    there; memory-efficient and flash attention alike) adds partial gradients in whatever order
    the thread blocks finish. Deterministic mode makes them (and any other op with a choice)
    take a fixed order; an op with no deterministic kernel raises rather than silently varying.
    Cost measured there: 1.47 s instead of 1.28 s per step (+14%) on a Qwen2.5-0.5B-shaped model
    with the default recipe (8 episodes, 5,615 tokens, gradient checkpointing).
    torch also requires cuBLAS's workspace variable: set here when unset, for the block only (on
    Hopper and newer it is torch's default size anyway); a value the user set is kept, and torch
    refuses one that is not deterministic. CPU kernels are deterministic already: a CPU run is
    untouched."""
    if not _on_cuda(device):
        yield
        return
    before = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    # the library reads no environment (tests/test_layout.py): CUBLAS_WORKSPACE_CONFIG is set by the
    # training script (scripts/train.py) and the CUDA tests; torch names it if it is missing
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(before[0], warn_only=before[1])


def rng_state(device: str) -> dict:
    """The generators a resumed run continues from: the CPU one always, and on CUDA the device's
    (LoRA dropout draws there). A CPU checkpoint keeps the single key it always had."""
    state = {"torch_rng": torch.get_rng_state()}
    if _on_cuda(device):
        state["cuda_rng"] = torch.cuda.get_rng_state(device)
    return state


def set_rng_state(state: dict, device: str) -> None:
    """Restore :func:`rng_state`; a checkpoint without CUDA's state (written on CPU, or before it was
    kept) leaves the CUDA generator as ``load_for_training`` seeded it."""
    torch.set_rng_state(state["torch_rng"])
    if _on_cuda(device) and "cuda_rng" in state:
        torch.cuda.set_rng_state(state["cuda_rng"], device)


def canonical(value):
    """``value`` rebuilt so that its pickle depends on its content alone. Pickle writes an object it met
    before as a reference to the first, so two equal strings that are distinct objects give other bytes
    than one object met twice: after a resume the optimizer's keys are strings read back from the
    checkpoint, no longer the code's own "step", and the same state pickled differently (issue 55).
    Every string is interned and every container rebuilt (none shared), dict keys sorted; tensors as
    they are (torch.save names their storages by order of appearance)."""
    if type(value) is str:
        return sys.intern(value)
    if isinstance(value, dict):
        return {canonical(k): canonical(value[k]) for k in sorted(value, key=lambda k: (type(k).__name__, k))}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, tuple):
        return tuple(canonical(v) for v in value)
    return value


def save_checkpoint(path: Path, step: int, tm: TorchModel, opt: torch.optim.Optimizer, extra: dict) -> None:
    """Equal state gives equal bytes: :func:`canonical` makes the pickle content-only, and torch's zip
    has fixed record names (a buffer's: ``archive/``), order and dates and a content-derived
    serialization id."""
    state = {"step": step, "adapter": {n: p.detach().cpu() for n, p in trainable(tm.model).items()},
             "optimizer": opt.state_dict(), **rng_state(tm.device), **extra}
    buf = io.BytesIO()
    torch.save(canonical({**state, "sha256": state_digest(state)}), buf)
    atomic_write_bytes(path, buf.getvalue())


def load_checkpoint(path: Path, tm: TorchModel, opt: torch.optim.Optimizer, fingerprint: dict) -> dict:
    try:  # weights_only: tensors and plain containers only, so a planted pickle payload never runs
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises several types for truncated, garbled or unsafe files
        raise CheckpointError(f"{path}: corrupt or unsafe checkpoint ({type(e).__name__}: {str(e)[:200]}); "
                              f"delete it to start over") from None
    stored = state.pop("sha256", None) if isinstance(state, dict) else None
    if stored is None or stored != state_digest(state):
        raise CheckpointError(f"{path}: checkpoint content does not match its SHA-256 (altered or damaged); "
                              f"delete it to start over")
    check_fingerprint(path, state.get("fingerprint"), fingerprint)
    params = trainable(tm.model)
    if set(state["adapter"]) != set(params):
        raise CheckpointError(f"{path}: adapter tensors do not match this model's LoRA layers")
    with torch.no_grad():
        for n, p in params.items():
            p.copy_(state["adapter"][n].to(p.device))
    opt.load_state_dict(state["optimizer"])
    set_rng_state(state, tm.device)
    return state


def make_optimizer(tm: TorchModel, recipe: TrainRecipe) -> torch.optim.Optimizer:
    return torch.optim.AdamW(list(trainable(tm.model).values()), lr=recipe.lr, weight_decay=recipe.weight_decay)


def train_step(tm: TorchModel, opt: torch.optim.Optimizer, episodes: list[Packed], recipe: TrainRecipe,
               lr: float, nll_fn: NllFn = summed_nll) -> dict:
    """One optimizer step over ``episodes``; returns loss, pre-clip grad norm and token counts."""
    with reproducible(tm.device):
        return _train_step(tm, opt, episodes, recipe, lr, nll_fn)


def _train_step(tm: TorchModel, opt: torch.optim.Optimizer, episodes: list[Packed], recipe: TrainRecipe,
                lr: float, nll_fn: NllFn) -> dict:
    start = time.perf_counter()
    for group in opt.param_groups:
        group["lr"] = lr
    tm.model.train()
    ordered = sorted(episodes, key=lambda p: len(p.input_ids))
    micro = [ordered[i:i + recipe.batch_size] for i in range(0, len(ordered), recipe.batch_size)]
    total = sum(p.n_targets for p in episodes)
    pad = tm.tok.pad_token_id if tm.tok.pad_token_id is not None else 0
    loss_sum = 0.0
    for batch in micro:
        with compute(tm):
            nll, _ = nll_fn(tm.model, batch, pad, tm.device)
        (nll / total).backward()
        loss_sum += float(nll.detach())
    params = list(trainable(tm.model).values())
    norm = float(torch.nn.utils.clip_grad_norm_(params, recipe.clip))
    opt.step()
    opt.zero_grad(set_to_none=True)
    seconds = time.perf_counter() - start
    tokens = sum(len(p.input_ids) for p in episodes)
    return {"loss": loss_sum / total, "grad_norm": norm, "targets": total, "tokens": tokens,
            "tok_per_s": round(tokens / seconds, 1), "seconds": round(seconds, 3)}


def mean_loss(tm: TorchModel, episodes: list[Packed], batch_size: int, progress: Callable[[int], None]) -> float:
    """Token-mean target loss over ``episodes`` (no gradient)."""
    tm.model.eval()
    pad = tm.tok.pad_token_id if tm.tok.pad_token_id is not None else 0
    ordered = sorted(episodes, key=lambda p: len(p.input_ids))
    total, count = 0.0, 0
    with torch.no_grad(), reproducible(tm.device), compute(tm):
        for i in range(0, len(ordered), batch_size):
            nll, n = summed_nll(tm.model, ordered[i:i + batch_size], pad, tm.device)
            total, count = total + float(nll), count + n
            progress(len(ordered[i:i + batch_size]))
    return total / count if count else float("nan")


def save_adapter(tm: TorchModel, folder: Path) -> None:
    """peft's own format (adapter_config.json + adapter_model.safetensors), renamed into place.

    The files must not depend on the machine: peft would write the base model's absolute path
    (config and model card) and its target modules in set order, which varies with Python's
    hash seed. The base is named by its folder, which is what ``attach_adapter`` compares."""
    import shutil
    cfg = tm.model.peft_config["default"]
    base = Path(cfg.base_model_name_or_path).name
    cfg.base_model_name_or_path = base
    cfg.target_modules = sorted(cfg.target_modules)
    model = tm.model.get_base_model()
    model.config._name_or_path = model.name_or_path = base  # the model card's base and tag
    tmp = folder.with_name(folder.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tm.model.save_pretrained(tmp)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)

