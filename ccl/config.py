"""Stage configuration: one dataclass per stage, defaults only there, typos refused.

``params.yaml`` has a ``profile`` key, the ``runs`` list and one section per stage. A
section may hold a ``profiles:`` mapping whose entry for the active profile overrides the
section's other keys; profiles change sizes only, never code paths. Unknown sections and
keys, values of the wrong type and YAML syntax errors are one-line errors naming the file,
the key and what is valid, raised before any work.
"""
from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml

PROFILES = ("paper", "cpu", "smoke")
# the top level of params.yaml: the profile, the run matrix, and one section per stage
SECTIONS = ("profile", "runs", "models", "build_datasets", "distill", "build_sft", "train", "evaluate", "analyze")
T = TypeVar("T")


class ConfigError(ValueError):
    """A params problem; the message names the key, the place and the valid choices."""


def load_params(path: str | Path = "params.yaml") -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: params file not found")
    try:
        with open(path, encoding="utf-8") as f:
            params = yaml.safe_load(f) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path}: YAML syntax error{at}: {getattr(e, 'problem', None) or e}") from None
    if not isinstance(params, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    unknown = sorted(set(params) - set(SECTIONS), key=str)
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {unknown}; valid sections: {', '.join(SECTIONS)}")
    return params


def check_profile(profile: Any, where: str) -> str:
    if profile not in PROFILES:
        raise ConfigError(f"{where}: unknown profile {profile!r}; valid profiles: {', '.join(PROFILES)}")
    return profile


def _build(cls: type[T], values: dict[str, Any], where: str) -> T:
    if not isinstance(values, dict):
        raise ConfigError(f"{where}: expected a mapping of keys, got {values!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - set(fields), key=str)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {unknown}; valid keys: {sorted(fields)}")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for name, value in values.items():
        sub = _dataclass_type(hints.get(name, fields[name].type))
        if sub and isinstance(value, dict):
            kwargs[name] = _build(sub, value, f"{where}.{name}")
        else:
            _check_type(value, hints.get(name), f"{where}.{name}")
            kwargs[name] = tuple(value) if isinstance(value, list) and _is_tuple(hints.get(name)) else value
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {e}") from None


def _is_tuple(hint: Any) -> bool:
    return typing.get_origin(hint) is tuple or any(typing.get_origin(a) is tuple for a in typing.get_args(hint))


def _describe(hint: Any) -> str:
    names = {int: "an integer", float: "a number", str: "text", bool: "true or false", type(None): "null"}
    if hint in names:
        return names[hint]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(hint))
    if origin in (tuple, list):
        return f"a list of {_describe(typing.get_args(hint)[0])}"
    if origin is typing.Literal:
        return "one of " + ", ".join(map(repr, typing.get_args(hint)))
    return getattr(hint, "__name__", str(hint))


def _matches(value: Any, hint: Any) -> bool:
    if hint is None or hint is Any:
        return True
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, a) for a in typing.get_args(hint))
    if origin in (tuple, list):
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        return isinstance(value, (list, tuple)) and all(_matches(v, args[0]) for v in value) if args else True
    if origin is dict:
        return isinstance(value, dict)
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(hint, type):
        return isinstance(value, hint) or dataclasses.is_dataclass(hint)
    return True


def _check_type(value: Any, hint: Any, where: str) -> None:
    if not _matches(value, hint):
        tip = ""
        if isinstance(value, str) and _matches(1.0, hint):
            tip = " (YAML reads 1e-3 as text: write 1.0e-3)" if "e" in value.lower() else ""
        raise ConfigError(f"{where}: expected {_describe(hint)}, got {value!r}{tip}")


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
