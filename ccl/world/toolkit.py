"""Tool declaration: one typed function per tool, its JSON schema derived from the signature.

A tool is a plain function ``f(world, **args) -> dict`` decorated with :func:`tool`.
The decorator reads the type hints and the Google-style docstring (first line =
description, ``Args:`` section = parameter descriptions), so a tool is declared once
and never described twice. Argument validation uses the same derived schema.
"""
from __future__ import annotations

import inspect
import math
import re
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, Literal, get_args, get_origin

from ..records import CallOutcome

MAX_STRING = 1000  # longest string argument accepted; longer breaks the schema (outcome invalid_args)
MAX_LIST = 20


class ToolError(Exception):
    """An error a tool reports to the model as an observation (not a crash); ``kind``
    becomes the call's outcome: NOT_FOUND or INVALID_ARGUMENT (a value the schema allows
    but the tool rejects; a schema violation is the runtime's INVALID_ARGS)."""

    def __init__(self, kind: CallOutcome, message: str, retryable: bool = False):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # JSON type: string | integer | number | array
    description: str
    required: bool
    enum: tuple[str, ...] | None = None
    items: str | None = None  # item type of an array


@dataclass(frozen=True)
class Tool:
    name: str
    domain: str
    description: str
    params: tuple[Param, ...]
    fn: Callable[..., dict]
    approval: bool = False  # a human must approve each call
    roles: tuple[str, ...] = ()  # roles allowed to call it; empty = everyone
    side_effect: bool = False  # changes the world (compared against expected side effects)
    fallback: str | None = None  # tool to use when this one is permanently unavailable

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def json_schema(self) -> dict:
        props: dict[str, dict] = {}
        for p in self.params:
            d: dict[str, Any] = {"type": p.type, "description": p.description}
            if p.enum:
                d["enum"] = list(p.enum)
            if p.items:
                d["items"] = {"type": p.items}
            props[p.name] = d
        return {
            "name": self.name,
            "description": self.description,
            "parameters": {
                "type": "object",
                "properties": props,
                "required": [p.name for p in self.params if p.required],
            },
        }


REGISTRY: dict[str, Tool] = {}

_PY_TO_JSON = {str: "string", int: "integer", float: "number"}


def _json_type(hint: Any) -> tuple[str, tuple[str, ...] | None, str | None, bool]:
    """Map a type hint to (json type, enum, item type, optional)."""
    optional = False
    if get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        optional = len(args) < len(get_args(hint))
        hint = args[0]
    if get_origin(hint) is Literal:
        return "string", tuple(get_args(hint)), None, optional
    if get_origin(hint) is list:
        (item,) = get_args(hint)
        return "array", None, _PY_TO_JSON[item], optional
    return _PY_TO_JSON[hint], None, None, optional


def _doc_sections(doc: str) -> tuple[str, dict[str, str]]:
    lines = inspect.cleandoc(doc).splitlines()
    description = lines[0].strip()
    params: dict[str, str] = {}
    in_args = False
    for line in lines[1:]:
        if line.strip() == "Args:":
            in_args = True
            continue
        m = re.match(r"\s+(\w+):\s*(.+)", line) if in_args else None
        if m:
            params[m.group(1)] = m.group(2).strip()
        elif in_args and line.strip() and not line.startswith(" "):
            in_args = False
    return description, params


def tool(domain: str, *, approval: bool = False, roles: tuple[str, ...] = (),
         side_effect: bool = False, fallback: str | None = None) -> Callable:
    """Register a tool; its schema is derived from the signature and docstring."""

    def wrap(fn: Callable[..., dict]) -> Callable[..., dict]:
        hints = typing.get_type_hints(fn)
        description, docs = _doc_sections(fn.__doc__ or fn.__name__)
        params = []
        for name, p in list(inspect.signature(fn).parameters.items())[1:]:  # skip world
            jtype, enum, items, optional = _json_type(hints[name])
            if name not in docs:
                raise TypeError(f"tool {fn.__name__}: parameter {name!r} lacks a docstring entry")
            required = p.default is inspect.Parameter.empty and not optional
            params.append(Param(name, jtype, docs[name], required, enum, items))
        t = Tool(fn.__name__, domain, description, tuple(params), fn, approval, roles,
                 side_effect, fallback)
        if t.name in REGISTRY:
            raise ValueError(f"tool {t.name} declared twice")
        REGISTRY[t.name] = t
        return fn

    return wrap


def _check_value(p: Param, v: Any) -> str | None:
    """Return an error message if ``v`` does not fit parameter ``p``."""
    if p.type == "string":
        if not isinstance(v, str):
            return f"{p.name} must be a string"
        if len(v) > MAX_STRING:
            return f"{p.name} is longer than {MAX_STRING} characters"
        if p.enum and v not in p.enum:
            return f"{p.name} must be one of {list(p.enum)}"
    elif p.type == "integer":
        if isinstance(v, bool) or not isinstance(v, int):
            return f"{p.name} must be an integer"
    elif p.type == "number":
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not _finite(v):
            return f"{p.name} must be a finite number"
    elif p.type == "array":
        if not isinstance(v, list) or len(v) > MAX_LIST:
            return f"{p.name} must be a list of at most {MAX_LIST} items"
        item = Param(p.name + "[]", p.items or "string", "", True)
        for x in v:
            if err := _check_value(item, x):
                return err
    return None


def _finite(v: int | float) -> bool:
    try:
        return math.isfinite(v)
    except OverflowError:  # an integer of 309+ digits does not fit a float
        return False


def validate_args(t: Tool, args: Any) -> str | None:
    """Check arguments against the derived schema; ``None`` when they are valid."""
    if not isinstance(args, dict):
        return "args must be a JSON object"
    unknown = sorted(set(args) - {p.name for p in t.params})
    if unknown:
        return f"unknown argument(s) {unknown} for {t.name}"
    for p in t.params:
        if p.name not in args:
            if p.required:
                return f"missing required argument {p.name!r}"
            continue
        if err := _check_value(p, args[p.name]):
            return err
    return None
