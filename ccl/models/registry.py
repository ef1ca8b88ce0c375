"""The model registry (``configs/models.yaml``): names to sources, pinned hashes and revisions."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping

import pydantic
from typing_extensions import Required, TypedDict  # pydantic needs this one, not typing's, before Python 3.12

from ..config import read_yaml
from ..errors import StageError

SOURCES = ("pypi-gguf", "hub")
ADAPTER_FILES = ("adapter_model.safetensors", "adapters.safetensors")  # a LoRA adapter's weights: peft (torch), mlx-lm


class ModelError(StageError, RuntimeError):
    """A model cannot be used; the message names the model or file and the fix."""


@dataclass(frozen=True)
class ModelSpec:
    name: str
    source: str  # pypi-gguf | hub
    role: str = ""
    files: tuple[dict, ...] = ()  # pypi-gguf: [{package, path}] concatenated in order
    sha256: str | None = None  # pypi-gguf: hash of the concatenated GGUF
    repo: str | None = None  # hub
    revision: str | None = None  # hub
    upstream: str = ""
    license: str = ""
    hub_base: str | None = None  # pypi-gguf: the Hub repository the GGUF was converted from (an adapter card's base)
    extra: dict = field(default_factory=dict)


# What an entry of the registry file may hold, checked by pydantic as in ccl/config.py: strict TypedDicts
# (no 5 -> "5"), unknown keys refused, the keys each source's loader (ccl/models/weights.py) needs required.
_CHECK = pydantic.ConfigDict(strict=True, extra="forbid")
_Text = Annotated[str, pydantic.StringConstraints(min_length=1)]


@pydantic.with_config(_CHECK)
class _File(TypedDict):
    package: _Text
    path: _Text


@pydantic.with_config(_CHECK)
class _Gguf(TypedDict, total=False):
    source: Required[Literal["pypi-gguf"]]
    files: Required[Annotated[list[_File], pydantic.Field(min_length=1)]]
    sha256: Required[Annotated[str, pydantic.StringConstraints(pattern=r"^[0-9a-f]{64}$")]]
    role: str
    upstream: str
    license: str
    hub_base: _Text


@pydantic.with_config(_CHECK)
class _Hub(TypedDict, total=False):
    source: Required[Literal["hub"]]
    repo: Required[_Text]
    revision: Required[Annotated[str, pydantic.StringConstraints(pattern=r"^[0-9a-f]{40}$")]]
    role: str
    upstream: str
    license: str


_ENTRIES = {"pypi-gguf": pydantic.TypeAdapter(_Gguf), "hub": pydantic.TypeAdapter(_Hub)}
_KEYS = {"pypi-gguf": _Gguf.__annotations__, "hub": _Hub.__annotations__, "files": _File.__annotations__}
_EXPECTED = {"files": "a non-empty list of {package, path} mappings", "sha256": "64 lowercase hex digits",
             "repo": "non-empty text", "package": "non-empty text",
             "revision": "a full commit hash (40 lowercase hex digits; a short hash cannot be found in an HF cache)",
             "path": "non-empty text"}  # any other key: text


def load_registry(path: Path) -> dict[str, ModelSpec]:
    """The registry file's models by name; any problem with it is one ModelError naming the file, the
    model and the key."""
    if not Path(path).is_file():
        raise ModelError(f"{path}: model registry not found")
    raw = read_yaml(path, ModelError)
    if raw is None:
        raise ModelError(f"{path}: the model registry is empty; expected a mapping of model names to entries")
    if not isinstance(raw, dict):
        raise ModelError(f"{path}: expected a mapping of model names to entries at the top level, "
                         f"got {type(raw).__name__}")
    return {name: _spec(path, name, entry) for name, entry in raw.items()}


def _spec(path: Path, name: Any, entry: Any) -> ModelSpec:
    if not isinstance(name, str):
        raise ModelError(f"{path}: model name {name!r} is not text; quote it")
    where = f"{path}: model {name}"
    if not isinstance(entry, dict):
        raise ModelError(f"{where}: expected a mapping of keys (source, ...), got {entry!r}")
    source = entry.get("source")
    if source not in SOURCES:
        everywhere = set(_KEYS["pypi-gguf"]) | set(_KEYS["hub"])
        unknown = sorted(set(entry) - everywhere, key=str)
        if "source" not in entry and unknown:
            raise ModelError(f"{where}: unknown key(s) {unknown}; valid keys: {', '.join(sorted(everywhere))}")
        if "source" not in entry:
            raise ModelError(f"{where}: missing key 'source'; valid sources: {', '.join(SOURCES)}")
        raise ModelError(f"{where}: source: expected one of {', '.join(SOURCES)}, got {source!r}")
    try:
        checked = _ENTRIES[source].validate_python(entry)
    except pydantic.ValidationError as e:
        raise ModelError(f"{where}: {_problem(source, entry, e.errors())}") from None
    return ModelSpec(name=name, **{**checked, "files": tuple(checked.get("files", ()))})


def _problem(source: str, entry: dict, errors: list[Any]) -> str:
    """One line for pydantic's errors: unknown keys first (all of one mapping), then missing keys, else the
    first wrong value; a key in ``files`` is named ``files[i].key``."""
    for kind in ("extra_forbidden", "missing"):  # invalid_key: a key that is not text, so unknown too
        found = [e for e in errors if e["type"] == kind or (kind, e["type"]) == ("extra_forbidden", "invalid_key")]
        if found:
            parent = found[0]["loc"][:-1]
            keys = sorted((e["loc"][-1] for e in found if e["loc"][:-1] == parent), key=str)
            at = f"{_dotted(parent)}: " if parent else ""
            valid = _KEYS["files" if parent else source]
            if kind == "missing":
                return f"{at}missing key(s) {keys}" + ("" if parent else f" (required for source {source})")
            return f"{at}unknown key(s) {keys}; valid keys{'' if parent else f' for source {source}'}: " \
                   f"{', '.join(sorted(valid))}"
    loc = errors[0]["loc"]
    if loc and loc[0] == "files" and len(loc) > 2:  # a bad entry of files: name its key, not the list
        loc = loc[:3]
    elif loc:
        loc = loc[:1]
    value: Any = entry
    for key in loc:
        value = value[key]
    expected = _EXPECTED.get(loc[-1] if loc else "", "text")
    tip = " (YAML reads it as a number: quote it)" if "text" in expected and type(value) in (int, float) else ""
    return f"{_dotted(loc)}: expected {expected}, got {value!r}{tip}"


def _dotted(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in loc).lstrip(".")


def local_path_variable(name: str) -> str:
    """The environment variable a script reads for a local copy of hub model ``name``."""
    return "CCL_MODEL_PATH_" + re.sub(r"[^A-Z0-9]", "_", name.upper())


@dataclass(frozen=True)
class ModelStore:
    """Where the models are: the registry file, the cache of converted weights, local copies of
    hub models by name, the Hugging Face cache and whether the hub may be reached. The stage scripts build it (from the repository layout and
    the environment); library code only receives it, so it never picks a path itself."""

    registry: Path
    cache: Path
    local: Mapping[str, Path] = field(default_factory=dict)
    hf_cache: Path | None = None  # the Hugging Face hub cache; None: the hub client's default
    offline: bool = False  # never download a hub model (HF_HUB_OFFLINE)

    def specs(self) -> dict[str, ModelSpec]:
        return load_registry(self.registry)

    def spec(self, name: str) -> ModelSpec:
        specs = self.specs()
        if name not in specs:
            raise ModelError(f"unknown model {name!r}; registered models ({self.registry}): "
                             f"{', '.join(sorted(specs))}")
        return specs[name]
