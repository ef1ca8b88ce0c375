"""The one way a conversation becomes a model's prompt text: its tokenizer's chat template, with
thinking switched off.

Qwen3 and Qwen3.5 templates open a reasoning block unless ``enable_thinking`` is false; the
write-up ran its Qwen3.5 teacher without it, and a JSON-only orchestrator must not spend its
token budget thinking. Templates that never read the variable (SmolLM2, Qwen2.5) render the
same text with or without it, so the cpu profile's prompts are unchanged.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

Render = Callable[..., str]  # tokenizer.apply_chat_template with our fixed options


def template(tok: Any) -> Render:
    """``tok.apply_chat_template`` with thinking disabled; call it as the tokenizer's own."""
    return partial(tok.apply_chat_template, enable_thinking=False)


def prompt(tok: Any, messages: list[dict]) -> str:
    """The text a model continues: every message, then the assistant's turn opened."""
    return template(tok)(messages, add_generation_prompt=True, tokenize=False)
