"""Tiny randomly initialised models of the paper's architectures, built from a config at test time
(no weights, no network): Qwen2 (the paper student's) and Qwen3.5 (the paper teacher's, a hybrid of
gated linear-attention and attention layers). They borrow a tokenizer folder given by the caller."""
from __future__ import annotations

from pathlib import Path

ARCHS = ("qwen2", "qwen3_5")


def save_tiny(folder: Path, arch: str, tokenizer_dir: Path, seed: int = 0) -> Path:
    """Write a tiny ``arch`` model with the tokenizer of ``tokenizer_dir`` into ``folder``."""
    import torch
    from transformers import AutoTokenizer, GenerationConfig

    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    ids = dict(vocab_size=len(tok), bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
               pad_token_id=tok.pad_token_id)
    torch.manual_seed(seed)
    if arch == "qwen2":
        from transformers import Qwen2Config, Qwen2ForCausalLM
        model = Qwen2ForCausalLM(Qwen2Config(hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                                             num_attention_heads=4, num_key_value_heads=2,
                                             **ids))
    elif arch == "qwen3_5":
        # shaped like the real checkpoint (Qwen/Qwen3.5-4B is a vision-language model): a tiny vision
        # tower beside the text model, which transformers loads as Qwen3_5ForCausalLM and mlx-lm as text;
        # three linear-attention layers, then one attention layer, as in the real 3:1 pattern
        from transformers.models.qwen3_5 import Qwen3_5Config, Qwen3_5ForConditionalGeneration
        rope = {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25,
                "mrope_section": [1, 1, 0], "mrope_interleaved": True}  # 4 rotary dims of 16
        text = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                    num_key_value_heads=2, head_dim=16, linear_key_head_dim=16, linear_value_head_dim=16,
                    linear_num_key_heads=2, linear_num_value_heads=4, rope_parameters=rope,
                    layer_types=["linear_attention"] * 3 + ["full_attention"], **ids)
        vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                      patch_size=4, num_position_embeddings=16)
        model = Qwen3_5ForConditionalGeneration(Qwen3_5Config(text_config=text, vision_config=vision))
    else:
        raise ValueError(f"unknown tiny architecture {arch!r}; expected one of {ARCHS}")
    model.generation_config = GenerationConfig(eos_token_id=tok.eos_token_id)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def mlx_quantised(source: Path, folder: Path) -> Path:
    """``source`` converted by mlx-lm to 4-bit weights, as the mlx-community teacher is (group size 32:
    the tiny model's widths are multiples of it)."""
    from mlx_lm import convert

    convert(str(source), mlx_path=str(folder), quantize=True, q_group_size=32, q_bits=4)
    return folder
