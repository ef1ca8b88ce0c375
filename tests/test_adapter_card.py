"""Hub-ready adapter folders (ccl/models/adapter_card.py): the base named by its Hub id, a card written from the
run's artifacts, and a folder that ``AutoPeftModelForCausalLM`` loads."""
from __future__ import annotations

import json
import shutil

import pytest
import torch
from tiny_models import save_tiny

from ccl.artifacts.jsonio import sha256_file, write_json
from ccl.errors import InputError
from ccl.models.adapter_card import hub_base, write_hub_folder
from ccl.models.registry import ModelSpec, load_registry
from ccl.models.weights import model_dir
from scripts.layout import MODEL_REGISTRY
from scripts.model_store import model_store

REV = "0123456789abcdef0123456789abcdef01234567"
TINY = ModelSpec(name="tiny-qwen2", source="hub", repo="ccl-test/tiny-qwen2", revision=REV, license="apache-2.0")


def test_every_registered_model_has_a_hub_base_and_gguf_ones_are_marked_inexact():
    bases = {name: hub_base(spec) for name, spec in load_registry(MODEL_REGISTRY).items()}
    smol = bases["smollm2-135m-instruct"]
    assert (smol.repo, smol.revision, smol.exact) == ("HuggingFaceTB/SmolLM2-135M-Instruct", None, False)
    assert "differ" in smol.note and "b179c9523d0e" in smol.note  # the GGUF's hash, so the card names both
    paper = bases["qwen2.5-0.5b-instruct"]
    assert (paper.repo, paper.revision, paper.exact) == ("Qwen/Qwen2.5-0.5B-Instruct",
                                                         "7ae557604adf67be50417f59c2c2f167def9a775", True)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A run folder as the train and judge_run stages leave it, around a PEFT adapter of a tiny Qwen2,
    and a Hugging Face cache holding that tiny model under TINY's Hub id at TINY's revision."""
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM
    root = tmp_path_factory.mktemp("card")
    snap = root / "hub" / "models--ccl-test--tiny-qwen2" / "snapshots" / REV
    save_tiny(snap, "qwen2", model_dir(model_store(), "smollm2-135m-instruct"))
    (snap.parents[1] / "refs").mkdir()
    (snap.parents[1] / "refs" / "main").write_text(REV)
    torch.manual_seed(2)
    peft = get_peft_model(AutoModelForCausalLM.from_pretrained(snap),
                          LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    with torch.no_grad():
        for n, p in peft.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.5)
    peft.peft_config["default"].base_model_name_or_path = "tiny-qwen2"  # as train writes it: the folder name
    run = root / "runs" / "X_s0"
    peft.save_pretrained(run / "adapter")
    weights = sha256_file(run / "adapter" / "adapter_model.safetensors")
    write_json(run / "config.json", {"run": "X_s0", "variant": "X", "seed": 0, "base_model": "tiny-qwen2",
                                     "base_weights": "b" * 64, "train_sha256": "d" * 64,
                                     "recipe": {"lr": 0.001, "rank": 4, "steps": 2, "stability": {"ema": 0.8}}})
    write_json(run / "summary.json", {"adapter_sha256": weights, "backend": "torch", "device": "cpu",
                                      "episodes": 8, "episodes_used": 8, "val_episodes": 4,
                                      "final_train_loss": 0.5, "val_loss_before": 1.25, "val_loss": 0.75,
                                      "stability": "passed", "trainable_params": 1234, "train_minutes": 0.1,
                                      "peak_mem_gb": 1.0})
    split = {"n": 32, "success": 0.0625, "success_writeup": 0.1875, "parse_errors": 0.25,
             "hallucinated_tools": 0.0}
    write_json(root / "metrics.json", {"adapter": "runs/X_s0", "profile": "smoke", "splits": {"eval_id": split},
                                       "pooled_main": split})
    return root, run, snap


def test_the_hub_folder_names_the_hub_id_and_its_card_carries_recipe_metrics_and_hashes(tiny_run):
    root, run, _ = tiny_run
    out = write_hub_folder(run, root / "metrics.json", {"tiny-qwen2": TINY}.__getitem__, run / "hub")
    config = json.loads((out / "adapter_config.json").read_text())
    assert (config["base_model_name_or_path"], config["revision"]) == ("ccl-test/tiny-qwen2", REV)
    assert (out / "adapter_model.safetensors").read_bytes() == (run / "adapter" / "adapter_model.safetensors").read_bytes()
    card = (out / "README.md").read_text()
    assert card.startswith("---\nbase_model: ccl-test/tiny-qwen2\nbase_model_relation: adapter\nlibrary_name: peft\n")
    assert "trained on exactly this checkpoint" in card and f"revision `{REV}`" in card
    assert sha256_file(out / "adapter_model.safetensors") in card and sha256_file(out / "adapter_config.json") in card
    assert "d" * 64 in card and "| lr | 0.001 |" in card and "| rank | 4 |" in card
    # 2 of 32 strict (Wilson 95%: 1.7% to 20.1%), 6 of 32 under the write-up's definition
    assert "| eval_id | 32 | 2/32 = 6.2% [1.7, 20.1] | 6/32 = 18.8% [8.9, 35.3] |" in card
    assert "| validation loss after training | 0.750000 |" in card
    listed = json.loads((out / "manifest.json").read_text())["files"]
    assert {name: entry["sha256"] for name, entry in listed.items()} == {
        name: sha256_file(out / name) for name in ("README.md", "adapter_config.json", "adapter_model.safetensors")}


def test_autopeft_loads_the_hub_folder_offline_and_it_is_the_trained_adapter(tiny_run, monkeypatch):
    from peft import AutoPeftModelForCausalLM, PeftModel
    from transformers import AutoModelForCausalLM
    root, run, snap = tiny_run
    out = write_hub_folder(run, root / "metrics.json", {"tiny-qwen2": TINY}.__getitem__, run / "hub")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub = AutoPeftModelForCausalLM.from_pretrained(out, cache_dir=str(root / "hub")).eval()
    local = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(snap), run / "adapter").eval()
    ids = torch.tensor([[1, 5, 9, 42, 7]])
    with torch.no_grad():
        a, b = hub(input_ids=ids).logits, local(input_ids=ids).logits
    assert torch.equal(a, b)
    assert not torch.equal(a, AutoModelForCausalLM.from_pretrained(snap)(input_ids=ids).logits)  # the adapter acts


def test_a_stale_or_missing_run_is_refused_naming_the_stage(tiny_run, tmp_path):
    root, run, _ = tiny_run
    copy = tmp_path / "X_s0"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("hub"))
    with pytest.raises(InputError, match=r"metrics.json: missing; run the judge_run stage first"):
        write_hub_folder(copy, tmp_path / "metrics.json", {"tiny-qwen2": TINY}.__getitem__, copy / "hub")
    (copy / "adapter" / "adapter_model.safetensors").write_bytes(b"retrained elsewhere")
    with pytest.raises(InputError, match=r"differs from the run's summary.*rerun the train stage"):
        write_hub_folder(copy, root / "metrics.json", {"tiny-qwen2": TINY}.__getitem__, copy / "hub")
    assert not (copy / "hub").exists()
