"""An OpenVINO model (IR) holding a loaded model's exact float32 weights, made inside the project's one
environment (issue 39).

OpenVINO GenAI builds a model graph from a GGUF file with its own reader (no optimum-intel, whose export
needs an older transformers), but it reads float16 or quantised matrices only, and the IR it saves keeps
every floating-point constant in float16: the matrices, the normalisation weights and the rotary
frequencies. So:

1. the loaded model (float32, any LoRA already merged as peft merges it) is written as a float16 GGUF
   with the source package's metadata (ccl/models/gguf_export.py);
2. GenAI reads it and saves the IR (``enable_save_ov_model``);
3. every float16 constant of the IR is replaced by a float32 constant holding the model's own value:
   found by name for the matrices (the reader names them after the transformers weights), by content for
   the rest (a normalisation weight is the float32 vector whose float16 rounding equals the constant;
   the rotary frequencies are transformers' ``inv_freq``; a scalar is kept only when it is a whole
   number, exact in float16). A constant matched by nothing, or by two different weights, stops the
   export;
4. the IR is saved uncompressed, with the tokenizer models the reader wrote.

For a sampler that receives LoRA weights at run time (GRPO, issue 56), ``lora_targets=True`` also names
each projection's MatMul after its weight (``model.layers[10].self_attn.q_proj/MatMul``): OpenVINO
GenAI's adapter support finds the MatMuls to adapt by a substring of their names, and the reader leaves
them numbered. :func:`lora_tensors` writes a peft model's LoRA in the names it then matches.

What the backend then computes in float32 is the transformers model's graph with the same numbers; the
transcripts' agreement with torch is measured, not assumed (experiments/engine_bench2/README.md).
"""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from .gguf_export import export_gguf, permute, permuted_heads
from .registry import ModelError

IR = "openvino_model.xml"
LORA_PREFIX = "base_model.model."  # GenAI's LLM pipelines strip this from a LoRA tensor's name before matching
WEIGHT = ".weight"


def export_ir(source: Path, model: Any, out: Path, lora_targets: bool = False) -> Path:
    """Write the float32 IR of ``model`` (a transformers model; ``source``: its package's GGUF) into the
    folder ``out``, made whole under a temporary name and renamed; ``lora_targets``: name the MatMuls
    for run-time LoRA (the module docstring)."""
    import openvino as ov
    import openvino_genai as ovg

    out = Path(out)
    with tempfile.TemporaryDirectory(prefix="ccl-ov-export-", dir=out.parent) as tmp:
        work = Path(tmp)
        gguf = export_gguf(source, model, work / "model.gguf", half=True)
        ovg.LLMPipeline(str(gguf), "CPU", enable_save_ov_model=True)  # saves the IR beside the GGUF
        ir = ov.Core().read_model(str(work / IR))
        restore_f32(ir, model)
        if lora_targets:
            name_matmuls(ir)
        folder = work / "ir"
        folder.mkdir()
        ov.save_model(ir, str(folder / IR), compress_to_fp16=False)
        for f in work.glob("openvino_*tokenizer.*"):
            shutil.copy(f, folder / f.name)
        if out.exists():
            shutil.rmtree(out)
        folder.replace(out)
    return out


def model_values(model: Any) -> dict[str, np.ndarray]:
    """The float32 values an IR constant may stand for: every weight, in the transformers layout and (for
    permuted projections) in llama.cpp's, and the rotary frequencies."""
    cfg = model.config.get_text_config()
    arch = cfg.model_type  # transformers' name is the GGUF architecture's for llama and qwen2
    values = {}
    for key, t in model.state_dict().items():
        w = t.detach().to("cpu").float().numpy()
        values[key] = w
        heads = permuted_heads(cfg, arch, key)
        if heads:
            values[key + "@permuted"] = permute(w, heads)
    rotary = getattr(getattr(model, "model", model), "rotary_emb", None)
    if rotary is not None:
        values["rotary_emb.inv_freq"] = rotary.inv_freq.detach().float().numpy()
    return values


def restore_f32(ir: Any, model: Any) -> dict[str, int]:
    """Replace each float16 constant of ``ir`` (feeding a Convert to float32) by the float32 value it
    rounds; returns counts by kind. Raises ModelError for a constant it cannot place."""
    from openvino import opset13 as ops

    values = model_values(model)
    vectors = {k: v for k, v in values.items() if v.ndim == 1}
    counts = {"named": 0, "vector": 0, "scalar": 0}
    for op in ir.get_ordered_ops():
        if op.get_type_name() != "Constant" or op.get_element_type().get_type_name() != "f16":
            continue
        half = op.get_data()
        value, kind = _value_of(op.get_friendly_name(), half, values, vectors)
        new = ops.constant(np.ascontiguousarray(value.reshape(half.shape), dtype=np.float32))
        new.set_friendly_name(op.get_friendly_name())
        for use in list(op.output(0).get_target_inputs()):
            convert = use.get_node()
            if convert.get_type_name() != "Convert":
                raise ModelError(f"IR constant {op.get_friendly_name()} feeds {convert.get_type_name()}, not a "
                                 f"Convert to float32; this OpenVINO version's GGUF graph is not the one checked")
            for target in list(convert.output(0).get_target_inputs()):
                target.replace_source_output(new.output(0))
        counts[kind] += 1
    left = [op.get_friendly_name() for op in ir.get_ordered_ops() if op.get_type_name() == "Constant"
            and op.get_element_type().get_type_name() in ("f16", "bf16")]
    if left:
        raise ModelError(f"IR constants still in 16 bits after the restore: {left[:3]}")
    ir.validate_nodes_and_infer_types()
    return counts


def _value_of(name: str, half: np.ndarray, values: dict, vectors: dict) -> tuple[np.ndarray, str]:
    """The float32 value a float16 constant was rounded from, and how it was found."""
    key = re.sub(r"\[(\d+)\]", r".\1", name)  # model.layers[0].mlp... -> model.layers.0.mlp...
    for k in (key, key + "@permuted"):
        if k in values and values[k].size == half.size and np.array_equal(values[k].reshape(half.shape)
                                                                          .astype(np.float16), half):
            return values[k], "named"
    flat = half.reshape(-1)
    if flat.size == 1:
        x = float(flat[0])
        if x.is_integer() and abs(x) <= 65504:  # 0, 1, 2, -1, f16's lowest as a mask value: exact in 16 bits
            return flat.astype(np.float32), "scalar"
        raise ModelError(f"IR constant {name}: scalar {x!r} is not exact in 16 bits and no weight of the "
                         f"model is known to be it")
    hits = [k for k, v in vectors.items() if v.size == flat.size and np.array_equal(v.astype(np.float16), flat)]
    if not hits or any(not np.array_equal(vectors[k], vectors[hits[0]]) for k in hits):
        what = "no weight of the model rounds to it" if not hits else f"different weights round to it ({hits[:3]})"
        raise ModelError(f"IR constant {name} {half.shape}: {what}")
    return vectors[hits[0]], "vector"  # several equal vectors (two all-ones norms) are one value


def ir_name(module: str) -> str:
    """The IR's name of a transformers module: GenAI's reader writes list indices in brackets
    (``model.layers.10.mlp.up_proj`` -> ``model.layers[10].mlp.up_proj``)."""
    return re.sub(r"\.(\d+)(?=\.|$)", r"[\1]", module)


def name_matmuls(ir: Any) -> set[str]:
    """Name every MatMul whose weight input is a named constant ``<module>.weight`` ``<module>/MatMul``;
    returns the modules named. A bracketed index ends at ``]``, so ``layers[1]`` is no part of
    ``layers[10]``'s names and GenAI's substring match finds exactly one MatMul per module."""
    named = set()
    for op in ir.get_ordered_ops():
        if op.get_type_name() != "MatMul":
            continue
        weight = op.input_value(1).get_node()
        if weight.get_type_name() == "Constant" and weight.get_friendly_name().endswith(WEIGHT):
            module = weight.get_friendly_name()[:-len(WEIGHT)]
            op.set_friendly_name(module + "/MatMul")
            named.add(module)
    return named


def lora_tensors(model: Any, targets: set[str] | None = None) -> dict[str, Any]:
    """A peft model's LoRA (its ``default`` adapter) as float32 tensors under the names GenAI matches to
    an IR exported with ``lora_targets``: ``base_model.model.<IR module>.lora_A.weight`` and ``lora_B``,
    with peft's scaling folded into B, so the adapter applies at alpha 1 (GenAI's own rule for an alpha
    tensor, alpha over rank, is not peft's under every option). The reader keeps the transformers layout of
    the query and key projections, so B needs no permutation (a test compares with torch). ``targets``:
    the modules the IR names (:func:`name_matmuls`); a LoRA module missing from them stops the export, and
    so does any trainable weight this export would leave behind (a LoRA bias, an embedding LoRA, a saved
    module), since the sampler would then not be the model being trained."""
    out, covered = {}, set()
    for name, module in model.named_modules():
        if not hasattr(module, "lora_A") or "default" not in module.lora_A:
            continue
        if getattr(module, "use_dora", {}).get("default", False):
            raise ModelError(f"{name}: a DoRA adapter is not a plain low-rank update; run-time LoRA cannot apply it")
        target = ir_name(name.removeprefix(LORA_PREFIX))
        if targets is not None and target not in targets:
            raise ModelError(f"LoRA module {name}: the IR has no MatMul named after {target}{WEIGHT}")
        a, b = module.lora_A["default"].weight, module.lora_B["default"].weight
        out[f"{LORA_PREFIX}{target}.lora_A{WEIGHT}"] = a.detach().float().contiguous().cpu()
        scaled = b.detach().float() * float(module.scaling["default"])
        out[f"{LORA_PREFIX}{target}.lora_B{WEIGHT}"] = scaled.contiguous().cpu()
        covered |= {id(a), id(b)}
    if not out:
        raise ModelError("the model carries no LoRA adapter named 'default' to apply at run time")
    left = [n for n, q in model.named_parameters() if q.requires_grad and id(q) not in covered]
    if left:
        raise ModelError(f"trainable weights run-time LoRA would not carry to the sampler: {left[:3]} "
                         f"({len(left)} in all); only plain LoRA A and B matrices are supported")
    return out


def lora_targets_of(folder: Path) -> set[str]:
    """The modules an IR exported with ``lora_targets`` named MatMuls after (:func:`name_matmuls`)."""
    import openvino as ov

    end = "/MatMul"
    return {op.get_friendly_name()[:-len(end)] for op in ov.Core().read_model(str(Path(folder) / IR)).get_ordered_ops()
            if op.get_type_name() == "MatMul" and op.get_friendly_name().endswith(end)}
