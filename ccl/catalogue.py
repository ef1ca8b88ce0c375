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
        """Compact one-line-per-tool listing for the system prompt."""
        lines = []
        for t in self.canonical:
            tool = TOOLS[t]
            params = []
            for p in tool.params:
                kind = "|".join(p.enum) if p.enum else (f"{p.items}[]" if p.type == "array" else p.type)
                opt = "" if p.required else "?"
                params.append(f"{self.param_alias[t][p.name]}{opt}: {kind} ({self._describe(p.description)})")
            notes = []
            if tool.roles:
                notes.append("role: " + "/".join(tool.roles))
            if tool.approval:
                notes.append("asks the user for approval")
            if tool.fallback and tool.fallback in self.tool_alias:
                notes.append("fallback: " + self.surface(tool.fallback))
            note = f" [{'; '.join(notes)}]" if notes else ""
            lines.append(f"- {self.surface(t)}({', '.join(params)}): {self._describe(tool.description)}{note}")
        return "\n".join(lines)

    def schemas(self) -> list[dict]:
        """JSON schemas under surface names (for chat templates that take tools)."""
        out = []
        for t in self.canonical:
            s = TOOLS[t].json_schema()
            s["name"] = self.surface(t)
            s["description"] = self._describe(s["description"])
            props = s["parameters"]["properties"]
            s["parameters"]["properties"] = {self.param_alias[t][k]: v for k, v in props.items()}
            s["parameters"]["required"] = [self.param_alias[t][k] for k in s["parameters"]["required"]]
            out.append(s)
        return out
