"""Stage configuration: one dataclass per stage, defaults only there, typos refused.

``params.yaml`` has a ``profile`` key, the ``runs`` list and one section per stage. A
section may hold a ``profiles:`` mapping whose entry for the active profile overrides the
section's other keys; profiles change sizes only, never code paths. Unknown sections and
keys, values of the wrong type and YAML syntax errors are one-line errors naming the file,
the key and what is valid, raised before any work. pydantic does the checking; the stage
dataclasses stay plain stdlib ones, and are what ``stage_config`` returns.
"""
from __future__ import annotations

import dataclasses
import functools
import types
import typing
from pathlib import Path
from typing import Annotated, Any, TypeVar

import pydantic
import yaml
from typing_extensions import TypedDict  # pydantic needs this one, not typing's, before Python 3.12

from .errors import StageError
from .vocabulary import DEFAULT_PRECISION, PRECISIONS, RUNS, learned_run

PROFILES = ("paper", "paper-cuda", "cpu", "cpu-scale", "smoke")  # paper-cuda: paper sizes, a teacher that runs on CUDA;
# cpu-scale: the competent cpu student of issue 58 (scale/params.yaml, experiments/c_scale)
# the top level of params.yaml: the profile, the run matrix, and one section per stage
SECTIONS = ("profile", "runs", "replay_runs", "models", "build_datasets", "distill", "accept_teacher", "build_sft", "train", "evaluate", "analyze",
            "power", "serve_eval", "learned_runs", "dagger_iterations", "dagger", "val_replay_runs", "err", "dpo",
            "grpo", "bfcl", "bfcl_runs", "fresh_pool", "study1_c", "scaled_c")
T = TypeVar("T")


class ConfigError(StageError, ValueError):
    """A params problem; the message names the key, the place and the valid choices."""


def load_params(path: str | Path = "params.yaml") -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: params file not found")
    params = read_yaml(path) or {}
    if not isinstance(params, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    unknown = sorted(set(params) - set(SECTIONS), key=str)
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {unknown}; valid sections: {', '.join(SECTIONS)}")
    runs = check_runs(params.get("runs", []), f"{path}: runs")
    replayed = check_runs(params.get("replay_runs", runs), f"{path}: replay_runs")
    if not set(replayed) <= set(runs):
        raise ConfigError(f"{path}: replay_runs {sorted(set(replayed) - set(runs))} are not in runs (only trained "
                          f"runs can be replayed): {runs}")
    check_learned(params, str(path))
    bfcl = params.get("bfcl_runs", [])
    if not isinstance(bfcl, list) or not all(isinstance(r, str) for r in bfcl):
        raise ConfigError(f"{path}: bfcl_runs: expected a list of run names, got {bfcl!r}")
    trained = set(runs) | set(params.get("learned_runs", []) or [])
    if not set(bfcl) <= trained:
        raise ConfigError(f"{path}: bfcl_runs {sorted(set(bfcl) - trained)} are neither in runs nor in learned_runs "
                          "(only a trained run has an adapter to answer with)")
    return params


def check_learned(params: dict[str, Any], where: str) -> None:
    """``learned_runs`` name runs of the learning arms; ``dagger_iterations`` chain them: iteration k
    (1, 2, ... in order) rolls out ``policy`` (C's run for the first, else the previous iteration's
    ``run``) and trains ``run`` on an aggregate that starts from ``base``."""
    for name in params.get("learned_runs", []) or []:
        try:
            learned_run(name)
        except ValueError as e:
            raise ConfigError(f"{where}: learned_runs: {e}") from None
    previous = None
    for k, item in enumerate(params.get("dagger_iterations", []) or [], 1):
        if not isinstance(item, dict) or set(item) != {"iteration", "policy", "run", "base"}:
            raise ConfigError(f"{where}: dagger_iterations[{k - 1}]: expected {{iteration, policy, run, base}}, got {item!r}")
        if item["iteration"] != k:
            raise ConfigError(f"{where}: dagger_iterations[{k - 1}]: iteration {item['iteration']!r}, expected {k}")
        if previous is not None and item["policy"] != previous:
            raise ConfigError(f"{where}: dagger_iterations[{k - 1}]: policy {item['policy']!r} must be the previous "
                              f"iteration's run {previous!r}")
        try:
            learned_run(item["run"])
        except ValueError as e:
            raise ConfigError(f"{where}: dagger_iterations[{k - 1}]: {e}") from None
        previous = item["run"]


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in one mapping is an error: YAML forbids
    it, and the safe loader would silently keep the last value (a typo that changes a setting)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base`: a key given here overrides base's
                continue
            key, line = self.construct_object(key_node, deep=True), key_node.start_mark.line + 1
            try:
                if key in seen:  # on any line: a one-line mapping {a: 1, a: 2} repeats a key on one line
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} given twice (lines {seen[key]} and {line})", key_node.start_mark)
                seen[key] = line
            except TypeError:  # an unhashable key: let the base class say so
                break
        return super().construct_mapping(node, deep)


def read_yaml(path: Path, error: type[StageError] = ConfigError) -> Any:
    """The YAML document in ``path`` (None when empty); a syntax error, a key given twice in one mapping
    or text that is not UTF-8 is one line naming the file (and the line and column), raised as ``error``."""
    try:
        with open(path, encoding="utf-8") as f:
            return yaml.load(f, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = " ".join(str(getattr(e, "problem", None) or e).split())  # one line, whatever PyYAML says
        raise error(f"{path}: YAML syntax error{at}: {problem}") from None
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def check_runs(runs: Any, where: str) -> list[str]:
    """The run matrix must name runs of ``ccl.vocabulary.RUNS``, each once."""
    if not isinstance(runs, list) or not all(isinstance(r, str) for r in runs):
        raise ConfigError(f"{where}: expected a list of run names, got {runs!r}")
    unknown = [r for r in runs if r not in RUNS]
    if unknown:
        raise ConfigError(f"{where}: unknown run(s) {unknown}; valid runs: {', '.join(RUNS)}")
    if len(set(runs)) != len(runs):
        raise ConfigError(f"{where}: a run is listed twice: {runs}")
    return runs


def check_profile(profile: Any, where: str) -> str:
    if profile not in PROFILES:
        raise ConfigError(f"{where}: unknown profile {profile!r}; valid profiles: {', '.join(PROFILES)}")
    return profile


# Validation is pydantic's, on a twin of each stage dataclass built from ``dataclasses.fields``: a
# ``total=False`` TypedDict with ``extra="forbid"``. A TypedDict returns only the keys the file gives, so the
# defaults stay in the dataclass alone, and we still build the very same stdlib dataclass (callers compare,
# hash and fingerprint it). ``TypeAdapter(cls, config=...)`` cannot be used on the dataclass itself: pydantic
# refuses a config for a dataclass, and it would take a config from the class, which we must not edit.
# Scalars are pydantic's Strict* types (no "5" -> 5, no true -> 1); a float field is ``StrictInt | StrictFloat``
# so an int is passed through unchanged, as before (``lr: 1`` stays the int 1 in a run's fingerprint).
def _strict(hint: Any) -> Any:
    """The pydantic type that validates a value of ``hint`` strictly (no coercion)."""
    if hint in _SCALARS:
        return _SCALARS[hint]
    sub = _dataclass_type(hint)
    if sub:
        return _twin(sub)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(_strict(a) for a in args)]
    if origin is tuple:  # YAML has no tuples: a list is accepted and becomes a tuple, nothing else (no set)
        inner = tuple(a if a is Ellipsis else _strict(a) for a in args)
        return Annotated[tuple[inner], pydantic.Strict(), pydantic.BeforeValidator(_list_as_tuple)]
    if origin is list:
        return Annotated[list[tuple(_strict(a) for a in args)], pydantic.Strict()]
    if origin is dict:
        return Annotated[dict[_strict(args[0]), _strict(args[1])], pydantic.Strict()]
    return hint  # Literal, Any and the like validate as pydantic does


_SCALARS: dict[Any, Any] = {bool: pydantic.StrictBool, int: pydantic.StrictInt, str: pydantic.StrictStr,
                            float: pydantic.StrictInt | pydantic.StrictFloat, type(None): None}


def _list_as_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    """The resolved annotations of the fields a caller may set (``init=True``)."""
    hints = typing.get_type_hints(cls, localns=_TYPES)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}


@functools.cache
def _twin(cls: type) -> Any:
    twin = TypedDict(f"{cls.__name__}Keys", {k: _strict(h) for k, h in _hints(cls).items()}, total=False)
    twin.__pydantic_config__ = pydantic.ConfigDict(extra="forbid")  # what pydantic.with_config sets
    return twin


@functools.cache
def _adapter(cls: type) -> pydantic.TypeAdapter:
    return pydantic.TypeAdapter(_twin(cls))


def _build(cls: type[T], values: Any, where: str) -> T:
    try:
        checked = _adapter(cls).validate_python(values)
    except pydantic.ValidationError as e:
        raise ConfigError(_message(cls, values, e.errors(), where)) from None
    return _instantiate(cls, checked, where)


def _instantiate(cls: type[T], checked: dict[str, Any], where: str) -> T:
    """The dataclass (nested ones too) from validated values; its ``__post_init__`` errors become ConfigErrors."""
    kwargs = {}
    for name, value in checked.items():
        sub = _nested(_hints(cls)[name])
        kwargs[name] = _instantiate(sub, value, f"{where}.{name}") if sub and isinstance(value, dict) else value
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{where}: {e}") from None


def _message(cls: type, values: Any, errors: list[Any], where: str) -> str:
    """One line for pydantic's errors: unknown keys first (all of one mapping), else the first wrong value."""
    unknown = [e for e in errors if e["type"] in ("extra_forbidden", "invalid_key")]  # invalid_key: not text
    if unknown:
        parent = unknown[0]["loc"][:-1]
        path, hint, _ = _locate(cls, values, parent)
        keys = sorted((e["loc"][-1] for e in unknown if e["loc"][:-1] == parent), key=str)
        return f"{where}{path}: unknown key(s) {keys}; valid keys: {sorted(_hints(_nested(hint)))}"
    path, hint, value = _locate(cls, values, errors[0]["loc"])
    tip = ""
    if isinstance(value, str) and "e" in value.lower() and (hint is float or float in typing.get_args(hint)):
        tip = " (YAML reads 1e-3 as text: write 1.0e-3)"
    return f"{where}{path}: expected {_describe(hint)}, got {value!r}{tip}"


def _locate(cls: type, values: Any, loc: tuple[Any, ...]) -> tuple[str, Any, Any]:
    """Follow pydantic's ``loc`` through the (nested) config keys to the dotted path, hint and value to
    report; a list item or a union member in ``loc`` reports its whole key."""
    path, hint, value = "", cls, values
    for key in loc:
        sub = _nested(hint)
        if not (sub and isinstance(value, dict) and key in _hints(sub)):
            break
        path, hint, value = f"{path}.{key}", _hints(sub)[key], value[key]
    return path, hint, value


def _describe(hint: Any) -> str:
    names = {int: "an integer", float: "a number", str: "text", bool: "true or false", type(None): "null"}
    if hint in names:
        return names[hint]
    if _dataclass_type(hint):
        return "a mapping of keys"
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in typing.get_args(hint))
    if origin in (tuple, list):
        return f"a list of {_describe(typing.get_args(hint)[0])}"
    if origin is dict:
        key, value = typing.get_args(hint)
        return f"a mapping of {_describe(key)} to {_describe(value)}"
    if origin is typing.Literal:
        return "one of " + ", ".join(map(repr, typing.get_args(hint)))
    return getattr(hint, "__name__", str(hint))


def _dataclass_type(hint: Any) -> type | None:
    return hint if isinstance(hint, type) and dataclasses.is_dataclass(hint) else None


def _nested(hint: Any) -> type | None:
    """The config dataclass a key holds, also where it may be null (``Rule | None``)."""
    return next(filter(None, map(_dataclass_type, (hint, *typing.get_args(hint)))), None)


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
    section = _mapping(params.get(stage), f"{where}: {stage}")
    overrides = _mapping(section.pop("profiles", None), f"{where}: {stage}.profiles")
    unknown = sorted(set(overrides) - set(PROFILES), key=str)
    if unknown:
        raise ConfigError(f"{where}: {stage}.profiles has unknown profile(s) {unknown}; "
                          f"valid profiles: {', '.join(PROFILES)}")
    section.update(_mapping(overrides.get(profile), f"{where}: {stage}.profiles.{profile}"))
    return _build(cls, section, f"{where}: {stage}"), profile


def _mapping(value: Any, where: str) -> dict[Any, Any]:
    """A copy of a section (or profile override) mapping; an empty one (YAML null) is no keys."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a mapping of keys, got {value!r}")
    return dict(value)


def stage_with_models(params_path: str | Path, stage: str, cls: type[T],
                      profile: str | None = None) -> tuple[T, ModelsConfig, str]:
    """A model-using stage's config, the profile's ``models`` section, and the profile name."""
    params = load_params(params_path)
    cfg, profile = stage_config(params, stage, cls, profile, where=str(params_path))
    models, _ = stage_config(params, "models", ModelsConfig, profile, where=str(params_path))
    return cfg, models, profile


@dataclasses.dataclass(frozen=True)
class ModelsConfig:
    """Which registered models a profile uses (params.yaml ``models``). Defaults: the paper's models;
    params.yaml's ``paper`` profile moves the student to MLX (Apple silicon, as the write-up ran it) and
    ``paper-cuda`` the teacher to its bf16 checkpoint on torch."""

    student: str = "qwen2.5-0.5b-instruct"
    student_backend: str = "torch"  # torch | mlx: the student, trained runs and training
    teacher: str = "qwen3.5-4b-mlx-4bit"
    teacher_backend: str = "mlx"  # torch | mlx | openvino: the teacher generates only
    # the backend that generates for the student and its trained runs (evaluation, replay, serving):
    # torch | mlx | openvino; empty: student_backend. Training and the validation baseline use student_backend.
    student_engine: str = ""
    # the precision that engine generates in for evaluation, decision-point replay, validation replay and
    # DAgger's rollouts (torch and openvino; issue 56, experiments/bf16_cpu): float32, what the published
    # studies used, or bfloat16 on the CPU's matrix units (validated on openvino; on torch its transcripts
    # and verdicts were measured, its divergences not yet located). BFCL and the server stay float32.
    # SFT training's precision is the train recipe's; DPO and GRPO compute in float32.
    student_precision: typing.Literal[PRECISIONS] = DEFAULT_PRECISION

    @property
    def student_generation(self) -> str:
        return self.student_engine or self.student_backend
