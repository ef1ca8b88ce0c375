"""The oracle: a programmatic policy that reads the gold graph and reacts to real observations.

Each turn it issues every gold call whose prerequisites have returned (so independent
calls go out together, in parallel), filling dependent arguments from the observed
results. It retries a timeout, switches to the declared fallback on
service_unavailable, reports a missing entity (status failed), stops after a denied
approval (blocked), refuses calls the role forbids (refused) and answers when done.
It is the source of config-C data and the validator's ceiling; it is not a model.
"""
from __future__ import annotations

from typing import Any

from .runtime import Action, Episode, format_action
from .tasks import resolve

_TERMINAL = {"not_found": "failed", "approval_denied": "blocked", "denied_retry": "blocked",
             "permission_denied": "refused"}


def _fmt(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_fmt(v) for v in value)
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)


class OraclePolicy:
    name = "oracle"

    def act(self, ep: Episode) -> str:
        return format_action(self.decide(ep))

    def act_batch(self, eps: list[Episode]) -> list[str]:
        return [self.act(ep) for ep in eps]

    def decide(self, ep: Episode) -> Action:
        st = ep.scratch.setdefault("oracle", {"state": {}, "results": {}, "pending": []})
        nodes = ep.task["gold"]["nodes"]
        outcome = self._absorb(ep, st)
        if outcome is not None:
            return self._final(ep, st, outcome)
        if any(n["forbidden"] for n in nodes):
            return self._final(ep, st, "refused")
        ready = [n for n in nodes if self._ready(n, st["state"])]
        if not ready:
            return self._final(ep, st, "done")
        st["pending"] = [n["id"] for n in ready]
        return Action(calls=[self._call(ep, n, st["results"]) for n in ready])

    @staticmethod
    def _absorb(ep: Episode, st: dict) -> str | None:
        """Read the results of the calls issued last turn; a terminal status if one ended the task."""
        if not st["pending"]:
            return None
        last = ep.turns[-1]["calls"]
        terminal = None
        for nid, ci in zip(st["pending"], last):
            rec = ep.calls[ci]
            kind = rec["outcome"]
            if kind == "ok":
                st["state"][nid], st["results"][nid] = "done", rec["result"]
            elif kind == "timeout":
                st["state"][nid] = "retry"
            elif kind == "service_unavailable":
                st["state"][nid] = "down"
            else:
                terminal = _TERMINAL.get(kind, "failed")
        st["pending"] = []
        return terminal

    @staticmethod
    def _ready(n: dict, state: dict) -> bool:
        if n["forbidden"] or state.get(n["id"]) in ("done", "down"):
            return False
        if n["fallback_for"] and state.get(n["fallback_for"]) != "down":
            return False
        return all(state.get(d) == "done" for d in n["deps"])

    @staticmethod
    def _call(ep: Episode, n: dict, results: dict) -> dict:
        args = {}
        for k, g in n["args"].items():
            if "refs" in g:
                v = [resolve(r, results) for r in g["refs"]]
            elif "ref" in g:
                v = resolve(g["ref"], results)
            else:
                v = g.get("say", g["value"])
            args[k] = v
        return {"tool": ep.catalogue.surface(n["tool"]),
                "args": ep.catalogue.args_to_surface(n["tool"], args)}

    @staticmethod
    def _final(ep: Episode, st: dict, status: str) -> Action:
        ans = ep.task["answer"]
        if status == ep.task["expected_status"]:
            values = {k: _fmt(resolve(path, st["results"])) for k, path in ans["refs"].items()}
            text = ans["template"].format(**values)
        else:  # the world surprised the gold graph; say so honestly
            text = f"I could not complete the request (status: {status})."
        return Action(final=text, status=status)
