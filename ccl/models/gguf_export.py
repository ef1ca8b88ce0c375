"""Write a loaded model's weights as a GGUF file: the source GGUF's metadata (architecture, vocabulary,
chat template) with every tensor taken from the loaded model, renamed to llama.cpp's names and laid out
as llama.cpp expects (the llama architecture stores the query and key projections with their rotary
halves interleaved, so those two are permuted the way llama.cpp's converter permutes them; a tied
output head is not written).

The student's weights are the GGUF package's dequantised to float32 (ccl/models/weights.py), and a
trained run adds its LoRA merged into them (ccl/policy/adapters.py). OpenVINO GenAI builds its model
graph from a GGUF file but reads no float32 matrices, so the OpenVINO export
(ccl/models/openvino_export.py) writes a float16 GGUF here and then puts the exact float32 values back.

Checked: the base model written in float32 equals the source GGUF dequantised by gguf-py, bit for bit
(tests/test_openvino_backend.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..artifacts.jsonio import temp_prefix
from .registry import ModelError

ARCHS = {"llama": "LLAMA", "qwen2": "QWEN2"}  # architectures whose layout this writer knows
PERMUTED = {"llama": {"q_proj.weight": "num_attention_heads", "k_proj.weight": "num_key_value_heads"}}


def permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's layout of a llama query or key projection (its converter's ``permute``)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def permuted_heads(cfg: Any, arch: str, key: str) -> int | None:
    """The head count by which llama.cpp's layout permutes weight ``key`` (None: stored as it is)."""
    return next((getattr(cfg, attr) for end, attr in PERMUTED.get(arch, {}).items() if key.endswith(end)), None)


def gguf_tensors(model: Any, arch: str) -> dict[str, np.ndarray]:
    """The model's weights under llama.cpp's names, in its layout, as float32 arrays."""
    import gguf

    cfg = model.config.get_text_config()
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[ARCHS[arch]], cfg.num_hidden_layers)
    out = {}
    for key, tensor in model.state_dict().items():
        if key == "lm_head.weight" and getattr(cfg, "tie_word_embeddings", False):
            continue  # llama.cpp reads the tied head from the token embedding
        name = names.get_name(key, try_suffixes=(".weight", ".bias"))
        if name is None:
            raise ModelError(f"{key}: no llama.cpp name for this weight ({arch} architecture)")
        w = tensor.detach().to("cpu").float().numpy()
        heads = permuted_heads(cfg, arch, key)
        out[name] = np.ascontiguousarray(permute(w, heads) if heads else w, dtype=np.float32)
    return out


def export_gguf(source: Path, model: Any, out: Path, half: bool = False) -> Path:
    """Write ``out``: ``source``'s metadata (a GGUF of the same model) and ``model``'s weights, in float32,
    or with the matrices in float16 (``half``; vectors stay float32, as llama.cpp's converter keeps them).
    Written under a temporary name and renamed, so a killed export leaves no file that looks whole."""
    import gguf

    reader = gguf.GGUFReader(str(source))
    arch = reader.fields["general.architecture"].contents()
    if arch not in ARCHS:
        raise ModelError(f"{source}: architecture {arch!r}; the llama.cpp backend knows {', '.join(ARCHS)}")
    tensors = gguf_tensors(model, arch)
    expected = {t.name: tuple(int(d) for d in reversed(t.shape.tolist())) for t in reader.tensors}
    got = {name: w.shape for name, w in tensors.items()}
    if got != expected:
        diff = sorted(set(got.items()) ^ set(expected.items()))[:4]
        raise ModelError(f"{source}: the loaded model's weights do not match this GGUF's tensors ({diff}...)")
    tmp = out.with_name(temp_prefix(out.name) + "part")
    writer = gguf.GGUFWriter(str(tmp), arch=arch)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue  # the writer adds these itself
        if key == "general.file_type":
            writer.add_uint32(key, int(gguf.LlamaFileType.MOSTLY_F16 if half else gguf.LlamaFileType.ALL_F32))
        elif field.types[0] == gguf.GGUFValueType.ARRAY:
            writer.add_key_value(key, field.contents(), field.types[0], sub_type=field.types[-1])
        else:
            writer.add_key_value(key, field.contents(), field.types[0])
    for t in reader.tensors:  # the source's order
        w = tensors[t.name]
        writer.add_tensor(t.name, w.astype(np.float16) if half and w.ndim == 2 else w)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.replace(out)
    return out
