"""Prompts are rendered with thinking switched off, by one function for every backend and the trainer."""
from __future__ import annotations

import pytest

from ccl.episode import chat

MESSAGES = [{"role": "system", "content": "Answer with JSON."}, {"role": "user", "content": "Weather in Oslo?"}]

# The rule of Qwen3's and Qwen3.5's templates, reduced to it: an empty reasoning block closes the
# assistant's opening when enable_thinking is false, and the model reasons freely otherwise.
QWEN3_STYLE = (
    "{%- for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{ '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{%- endif %}")


@pytest.fixture(scope="module")
def tok():
    from transformers import AutoTokenizer

    from ccl.models.weights import model_dir
    from scripts.model_store import model_store
    return AutoTokenizer.from_pretrained(model_dir(model_store(), "smollm2-135m-instruct"))


def test_a_template_without_thinking_renders_as_before(tok):
    assert chat.prompt(tok, MESSAGES) == tok.apply_chat_template(MESSAGES, add_generation_prompt=True, tokenize=False)


def test_a_qwen3_style_template_renders_without_thinking(tok):
    default = tok.apply_chat_template(MESSAGES, add_generation_prompt=True, tokenize=False,
                                      chat_template=QWEN3_STYLE)
    assert default.endswith("<|im_start|>assistant\n")  # thinking on: the model would open <think> itself
    qwen = chat.template(tok)
    ours = qwen(MESSAGES, add_generation_prompt=True, tokenize=False, chat_template=QWEN3_STYLE)
    assert ours == default + "<think>\n\n</think>\n\n"
    # The trainer renders through the same partial; a template whose rendered history differs from
    # its generation prompt (here: the empty reasoning block is not kept in history) cannot be packed
    # append-only, and packing says so instead of training on a prompt the model never sees.
    from functools import partial

    from ccl.train.packing import PackingError, pieces
    with pytest.raises(PackingError, match="rewrites earlier text"):
        pieces(partial(qwen, chat_template=QWEN3_STYLE), MESSAGES + [{"role": "assistant", "content": "{}"}])
