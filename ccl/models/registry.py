"""The model registry (``configs/models.yaml``): names to sources, pinned hashes and revisions."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping
from pathlib import Path

import yaml

from ..errors import StageError

SOURCES = ("pypi-gguf", "hub")


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
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ModelsConfig:
    """Which registered models a profile uses (params.yaml ``models``); defaults are the paper's."""

    student: str = "qwen2.5-0.5b-instruct"
    student_backend: str = "torch"  # torch | mlx: the student, trained runs and training
    teacher: str = "qwen3.5-4b-mlx-4bit"
    teacher_backend: str = "mlx"


def load_registry(path: Path) -> dict[str, ModelSpec]:
    if not Path(path).is_file():
        raise ModelError(f"{path}: model registry not found")
    with open(path, encoding="utf-8") as f:
        raw = yaml.safe_load(f)
    specs = {}
    known = {f for f in ModelSpec.__dataclass_fields__} - {"name", "extra"}
    for name, entry in raw.items():
        unknown = sorted(set(entry) - known)
        if unknown:
            raise ModelError(f"{path}: model {name}: unknown key(s) {unknown}")
        if entry.get("source") not in SOURCES:
            raise ModelError(f"{path}: model {name}: source must be one of {SOURCES}")
        entry = {**entry, "files": tuple(entry.get("files", ()))}
        specs[name] = ModelSpec(name=name, **entry)
    return specs


def local_path_variable(name: str) -> str:
    """The environment variable a script reads for a local copy of hub model ``name``."""
    return "CCL_MODEL_PATH_" + re.sub(r"[^A-Z0-9]", "_", name.upper())


@dataclass(frozen=True)
class ModelStore:
    """Where the models are: the registry file, the cache of converted weights, and local
    copies of hub models by name. The stage scripts build it (from the repository layout and
    the environment); library code only receives it, so it never picks a path itself."""

    registry: Path
    cache: Path
    local: Mapping[str, Path] = field(default_factory=dict)

    def specs(self) -> dict[str, ModelSpec]:
        return load_registry(self.registry)

    def spec(self, name: str) -> ModelSpec:
        specs = self.specs()
        if name not in specs:
            raise ModelError(f"unknown model {name!r}; registered models ({self.registry}): "
                             f"{', '.join(sorted(specs))}")
        return specs[name]
