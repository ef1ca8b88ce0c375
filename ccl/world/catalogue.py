"""A task's tool catalogue as the model sees it: surface names, schemas, prompt text.

Renamed tasks show aliases for tools and parameters; the runtime maps them back
to canonical names before validating and executing. Descriptions that mention
another tool are rewritten with that tool's surface name, so no canonical name
leaks into a renamed catalogue.
"""
from __future__ import annotations

import re
from typing import Any

from .tools import TOOLS

_TOOL_NAME_RE = re.compile(r"\b(" + "|".join(sorted(TOOLS, key=len, reverse=True)) + r")\b")


class Catalogue:
    def __init__(self, task: dict):
        aliases = task.get("aliases") or {"tools": {}, "params": {}}
        self.canonical: list[str] = list(task["catalogue"])
        self.tool_alias: dict[str, str] = {t: aliases["tools"].get(t, t) for t in self.canonical}
        self.param_alias: dict[str, dict[str, str]] = {
            t: {p.name: aliases["params"].get(t, {}).get(p.name, p.name) for p in TOOLS[t].params}
            for t in self.canonical}
        self._tool_back = {s: c for c, s in self.tool_alias.items()}
        self._param_back = {t: {s: c for c, s in m.items()} for t, m in self.param_alias.items()}

    def surface(self, tool: str) -> str:
        return self.tool_alias.get(tool, tool)

    def to_canonical(self, surface_name: str) -> str | None:
        """Canonical tool for a surface name in this catalogue; None if not offered."""
        return self._tool_back.get(surface_name)

    def args_to_canonical(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        back = self._param_back[tool]
        return {back.get(k, f"?{k}"): v for k, v in args.items()}  # "?" marks an unknown name

    def args_to_surface(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return {self.param_alias[tool][k]: v for k, v in args.items()}

    def _describe(self, text: str) -> str:
        return _TOOL_NAME_RE.sub(lambda m: self.surface(m.group(1)) if m.group(1) in self.tool_alias
                                 else m.group(1), text)

    def render(self) -> str:
        """Compact one-line-per-tool listing for the system prompt (through :func:`render_tools`, as a
        client's OpenAI ``tools`` are rendered, so both give the same prompt)."""
        return render_tools(self.openai_tools())

    def openai_tools(self) -> list[dict]:
        """The catalogue as OpenAI ``tools`` under surface names; a tool's roles, approval and fallback
        end its description, as in the prompt."""
        out = []
        for t in self.canonical:
            tool = TOOLS[t]
            props, required = {}, []
            for p in tool.params:
                schema: dict[str, Any] = {"type": p.type}
                if p.enum:
                    schema["enum"] = list(p.enum)
                if p.items:
                    schema["items"] = {"type": p.items}
                schema["description"] = self._describe(p.description)
                props[self.param_alias[t][p.name]] = schema
                if p.required:
                    required.append(self.param_alias[t][p.name])
            notes = []
            if tool.roles:
                notes.append("role: " + "/".join(tool.roles))
            if tool.approval:
                notes.append("asks the user for approval")
            if tool.fallback and tool.fallback in self.tool_alias:
                notes.append("fallback: " + self.surface(tool.fallback))
            note = f" [{'; '.join(notes)}]" if notes else ""
            out.append({"type": "function", "function": {
                "name": self.surface(t), "description": self._describe(tool.description) + note,
                "parameters": {"type": "object", "properties": props, "required": required}}})
        return out


class ToolsError(ValueError):
    """OpenAI ``tools`` that cannot be rendered; the message names the entry."""


def _kind(schema: dict, where: str) -> str:
    """A parameter's type in the prompt's notation: ``a|b`` for an enum, ``string[]`` for an array."""
    if "enum" in schema:
        if not isinstance(schema["enum"], list) or not schema["enum"]:
            raise ToolsError(f"{where}.enum must be a non-empty list")
        return "|".join(str(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return f"{items.get('type', 'any')}[]"
    if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        return "|".join(kind)
    return kind if isinstance(kind, str) else "any"


def render_tools(tools: Any) -> str:
    """OpenAI ``tools`` as the system prompt's catalogue listing, one line per tool:
    ``- name(param?: kind (description), ...): description``."""
    if not isinstance(tools, list):
        raise ToolsError("tools must be a list")
    lines = []
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(fn, dict) or tool.get("type", "function") != "function":
            raise ToolsError(f'{where} must be {{"type": "function", "function": {{...}}}}')
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise ToolsError(f"{where}.function.name must be a non-empty string")
        params = fn.get("parameters") or {}
        props = params.get("properties") or {} if isinstance(params, dict) else None
        required = params.get("required") or [] if isinstance(params, dict) else []
        if not isinstance(props, dict) or not isinstance(required, list):
            raise ToolsError(f"{where}.function.parameters must be an object schema (properties, required)")
        rendered = []
        for pname, schema in props.items():
            schema = schema if isinstance(schema, dict) else {}
            desc = schema.get("description")
            rendered.append(f"{pname}{'' if pname in required else '?'}: "
                            f"{_kind(schema, f'{where}.function.parameters.properties.{pname}')}"
                            + (f" ({desc})" if isinstance(desc, str) and desc else ""))
        desc = fn.get("description")
        lines.append(f"- {name}({', '.join(rendered)})" + (f": {desc}" if isinstance(desc, str) and desc else ""))
    return "\n".join(lines)
