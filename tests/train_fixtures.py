"""Shared by the training tests: a tiny random Llama with the student's tokenizer, oracle training and
validation rows, a small recipe, and one training run on them. ``tiny_model`` and ``data_dir`` are
module-scoped fixtures, registered for every test module by conftest.py."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ccl.artifacts.jsonio import write_jsonl
from ccl.data.sft import sft_row
from ccl.episode.oracle import OraclePolicy
from ccl.episode.rollout import rollout
from ccl.train.recipe import TrainRecipe
from ccl.train.run import Segment, train_run
from ccl.vocabulary import Run
from ccl.world.tasks import generate_task


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    """A 3-block random Llama with the embedded student's tokenizer and chat template."""
    from transformers import AutoTokenizer, GenerationConfig, LlamaConfig, LlamaForCausalLM

    from ccl.models.weights import model_dir
    from scripts.model_store import model_store
    tok = AutoTokenizer.from_pretrained(model_dir(model_store(), "smollm2-135m-instruct"))
    folder = tmp_path_factory.mktemp("tiny")
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    model = LlamaForCausalLM(cfg)
    model.generation_config = GenerationConfig(eos_token_id=tok.eos_token_id)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def oracle_rows(templates, seeds, pool="train") -> list[dict]:
    rows = []
    for t in templates:
        for s in seeds:
            task = {**generate_task(t, s, pool), "dataset": "x"}
            _, ep, _, _ = next(rollout([task], OraclePolicy(), batch_size=1))
            rows.append(sft_row(task, ep.record(), "oracle"))
    return rows


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("data")
    write_jsonl(d / "variants" / "C.jsonl", oracle_rows(["sel_weather", "ch_order_customer", "par_fx"], range(4)))
    write_jsonl(d / "sft" / "oracle_val.jsonl", oracle_rows(["sel_fx", "rec_weather_timeout"], range(2)))
    return d


TINY = TrainRecipe(steps=6, warmup=2, lr=1e-2, lr_min=1e-3, batch_size=2, grad_accum=2, max_length=1024,
                   gradient_checkpointing=False, checkpoint_every=3, val_episodes=4, rank=4, scale=2.0)

def run(tiny_model, data_dir, tmp_path, recipe=TINY, progress=lambda *a: None, backend="torch", baseline=None,
        seed=0, name=Run("C", 0), train_file=None, segment=Segment()):
    return train_run(Run(name.variant, seed), recipe, "tiny", tiny_model, backend,
                     train_file or data_dir / "variants" / "C.jsonl", data_dir / "sft" / "oracle_val.jsonl",
                     tmp_path / "runs", tmp_path / "archive", tmp_path / "logs" / "stability.jsonl",
                     "cpu", progress, baseline, segment)


class Crash(Exception):
    pass


