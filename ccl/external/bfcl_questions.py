"""BFCL's questions: the draw every configuration answers, each question with its possible answers,
and the oracle's answer (the first possible answer, written as the study's JSON action under the tool
names the model is shown)."""
from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from . import bfcl_lib
from .bfcl_config import CATEGORIES, BfclConfig

# The oracle's answer where no listed function applies (BFCL's irrelevance category).
NO_FUNCTION = "None of the listed functions can do this."


@dataclass(frozen=True)
class Question:
    id: str
    category: str
    entry: dict  # BFCL's entry as BFCL prepares it: id, question (turns of messages), function
    answer: list | None  # BFCL's possible answers; None for irrelevance


def draw(cfg: BfclConfig) -> dict:
    """The questions every configuration answers: per category, ``per_category`` ids drawn without
    replacement by a generator seeded with (seed, category), kept in BFCL's file order."""
    categories = {}
    for category in cfg.categories:
        ids = [e["id"] for e in bfcl_lib.entries(category)]
        k = len(ids) if cfg.per_category is None else min(cfg.per_category, len(ids))
        picked = sorted(random.Random(f"{cfg.seed}|{category}").sample(range(len(ids)), k))
        categories[category] = {"total": len(ids), "ids": [ids[i] for i in picked]}
    return {"bfcl_eval": bfcl_lib.version(), "seed": cfg.seed, "per_category": cfg.per_category,
            "categories": categories}


def questions(sample: dict, where: str = "the BFCL sample") -> list[Question]:
    """The sample's questions with their possible answers, in the sample's order."""
    if sample.get("bfcl_eval") != bfcl_lib.version():
        raise InputError(f"{where} was drawn from bfcl-eval {sample.get('bfcl_eval')}, but "
                         f"{bfcl_lib.version()} is installed: rerun stage bfcl_sample (dvc repro bfcl_sample)")
    out = []
    for category, drawn in sample["categories"].items():
        if category not in CATEGORIES:  # checked here, or BFCL's loader names its own missing data file
            raise InputError(f"{where}: unknown BFCL category {category!r} (a sample draws from "
                             f"{', '.join(CATEGORIES)}); rerun stage bfcl_sample")
        by_id = {e["id"]: e for e in bfcl_lib.entries(category)}
        truth = bfcl_lib.ground_truth(category)
        for qid in drawn["ids"]:
            if qid not in by_id:
                raise InputError(f"{where}: {category} has no question {qid!r} in bfcl-eval {bfcl_lib.version()}")
            out.append(Question(qid, category, by_id[qid], truth.get(qid)))
    return out


_OMIT = object()


def _first(options: list, required: bool = False) -> Any:
    """A possible-answer list's first value, or none where "" says the parameter may be left out and
    the function does not require it (the oracle leaves every such parameter out: a few of BFCL's
    possible answers give an optional value to a parameter the function does not have, or mark a
    parameter the function requires as optional, and BFCL's checker rejects both)."""
    if "" in options and not required:
        return _OMIT
    given = [o for o in options if o != ""]
    if not given:
        raise ValueError(f"a required parameter has no possible value: {options!r}")
    return _pick(given[0])


def _pick(value: Any, required: frozenset[str] = frozenset()) -> Any:
    """A concrete value from a possible answer: a dict's keys each hold a list of options (``required``:
    the keys that may not be left out), and a list may hold such dicts."""
    if isinstance(value, dict):
        chosen = ((k, _first(options, k in required)) for k, options in value.items())
        return {k: v for k, v in chosen if v is not _OMIT}
    if isinstance(value, list):
        return [_pick(v) for v in value]
    return value


def gold_text(q: Question) -> str:
    """The oracle's assistant turn: the first possible answer as the study's JSON action, under the
    tool names the model is shown; for irrelevance a final answer that calls nothing."""
    if q.answer is None:
        return json.dumps({"final": NO_FUNCTION, "status": "failed"})
    functions = q.entry["function"]
    shown = {f["name"]: t["function"]["name"] for f, t in zip(functions, bfcl_lib.openai_tools(functions))}
    required = {f["name"]: frozenset(f["parameters"].get("required", [])) for f in functions}
    calls = []
    for call in q.answer:
        if not isinstance(call, dict) or len(call) != 1:
            raise InputError(f"BFCL's possible answer of {q.id} holds {call!r}, not one {{function: params}}")
        (name, params), = call.items()
        try:
            calls.append({"tool": shown.get(name, name), "args": _pick(params, required.get(name, frozenset()))})
        except ValueError as e:
            raise InputError(f"BFCL's possible answer of {q.id}, {name}: {e}") from None
    return json.dumps({"calls": calls}, ensure_ascii=False)
