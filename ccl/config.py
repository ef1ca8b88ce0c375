"""Stage configuration: one dataclass per stage, defaults only there, unknown keys rejected.

``params.yaml`` has a ``profile`` key and one section per stage. A section may hold a
``profiles:`` mapping whose entry for the active profile overrides the section's
other keys; profiles change sizes only, never code paths.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, TypeVar

import yaml

PROFILES = ("paper", "cpu", "smoke")
T = TypeVar("T")


class ConfigError(ValueError):
    """A params problem; the message names the key, the place and the valid choices."""


def load_params(path: str | Path = "params.yaml") -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: params file not found")
    with open(path, encoding="utf-8") as f:
        params = yaml.safe_load(f) or {}
    if not isinstance(params, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return params


def check_profile(profile: Any, where: str) -> str:
    if profile not in PROFILES:
        raise ConfigError(f"{where}: unknown profile {profile!r}; valid profiles: {', '.join(PROFILES)}")
    return profile


def _build(cls: type[T], values: dict[str, Any], where: str) -> T:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; valid keys: {sorted(fields)}")
    kwargs = {}
    for name, value in values.items():
        ftype = fields[name].type
        sub = _dataclass_type(ftype)
        kwargs[name] = _build(sub, value, f"{where}.{name}") if sub and isinstance(value, dict) else value
    try:
        return cls(**kwargs)
    except TypeError as e:
        raise ConfigError(f"{where}: {e}") from None


def _dataclass_type(ftype: Any) -> type | None:
    if isinstance(ftype, str):
        ftype = _TYPES.get(ftype)
    return ftype if dataclasses.is_dataclass(ftype) else None


_TYPES: dict[str, type] = {}


def register(cls: type[T]) -> type[T]:
    """Make a nested config dataclass resolvable from string annotations."""
    _TYPES[cls.__name__] = cls
    return cls


def stage_config(params: dict[str, Any], stage: str, cls: type[T], profile: str | None = None,
                 where: str = "params.yaml") -> tuple[T, str]:
    """Resolve ``params[stage]`` for the active (or given) profile into ``cls``."""
    profile = check_profile(profile if profile is not None else params.get("profile"),
                            f"{where}: profile" if profile is None else "--profile")
    section = dict(params.get(stage) or {})
    overrides = section.pop("profiles", {}) or {}
    unknown = sorted(set(overrides) - set(PROFILES))
    if unknown:
        raise ConfigError(f"{where}: {stage}.profiles has unknown profile(s) {unknown}; "
                          f"valid profiles: {', '.join(PROFILES)}")
    section.update(overrides.get(profile) or {})
    return _build(cls, section, f"{where}: {stage}"), profile


def stage_with_models(params_path: str | Path, stage: str, cls: type[T], profile: str | None = None):
    """A model-using stage's config, the profile's ``models`` section, and the profile name."""
    from .models.registry import ModelsConfig

    params = load_params(params_path)
    cfg, profile = stage_config(params, stage, cls, profile, where=str(params_path))
    models, _ = stage_config(params, "models", ModelsConfig, profile, where=str(params_path))
    return cfg, models, profile
