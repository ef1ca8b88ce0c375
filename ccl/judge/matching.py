"""Per-argument matching rules used by the validator (answers are read by ``ccl.judge.answers``).

A gold argument is ``{"rule": R, "value": V}``. The rules encode the conversions a
model must perform (relative dates to ISO, 12h to 24h times, currency names and
symbols to ISO codes, urgency words to priorities) by comparing the converted value
only after harmless normalisation (case, surrounding and repeated whitespace).
"""
from __future__ import annotations

import math
import re
from typing import Any

from ..world.toolkit import ToolError


def norm_text(s: str) -> str:
    return " ".join(s.split()).casefold()


def _time_24h(v: str) -> str | None:
    m = re.fullmatch(r"([01]?\d|2[0-3]):([0-5]\d)(?::[0-5]\d)?", v.strip())
    return f"{int(m.group(1)):02d}:{m.group(2)}" if m else None


def _close(a: float, b: float) -> bool:
    """Equal to the cent: money arguments (refunds, conversions) may not be a cent off."""
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=0.005)


def arg_matches(rule: str, gold: Any, value: Any) -> bool:
    """Does a model-supplied ``value`` satisfy the gold argument ``(rule, gold)``?

    Never raises on a model's value: a number too large for a float, or an expression
    that does not evaluate, simply does not match.
    """
    try:
        return _arg_matches(rule, gold, value)
    except (OverflowError, TypeError, ValueError, RecursionError):
        if rule not in _RULES:
            raise
        return False


_RULES = ("any", "exact", "date", "time", "number", "integer", "substring_of", "contains", "set", "expr")


def _arg_matches(rule: str, gold: Any, value: Any) -> bool:
    if rule == "any":
        return True
    if rule == "exact":
        return isinstance(value, str) and norm_text(value) == norm_text(gold)
    if rule == "date":
        return isinstance(value, str) and value.strip()[:10] == gold and (
            len(value.strip()) == 10 or value.strip()[10] in "T ")
    if rule == "time":
        return isinstance(value, str) and _time_24h(value) == gold
    if rule == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and _close(value, gold)
    if rule == "integer":
        return isinstance(value, int) and not isinstance(value, bool) and value == gold
    if rule == "substring_of":  # a non-empty search string that finds the gold name
        return isinstance(value, str) and bool(norm_text(value)) and norm_text(value) in norm_text(gold)
    if rule == "contains":  # gold: keywords that must all occur
        return isinstance(value, str) and all(k.casefold() in value.casefold() for k in gold)
    if rule == "set":  # gold: list of strings, order-free
        return (isinstance(value, list) and all(isinstance(x, str) for x in value)
                and sorted(norm_text(x) for x in value) == sorted(norm_text(x) for x in gold))
    if rule == "expr":  # gold: the value the expression must evaluate to
        from ..world.tools import evaluate_expression
        try:
            return isinstance(value, str) and _close(evaluate_expression(value), gold)
        except ToolError:
            return False
    raise ValueError(f"unknown matching rule {rule!r}")


def args_match(gold_args: dict[str, dict], args: dict[str, Any]) -> bool:
    """All gold arguments present and matching; extra optional arguments are tolerated. Arguments that
    are not an object (a malformed record) match nothing: every stored record's are objects, so no
    published verdict depends on this."""
    if not isinstance(args, dict):
        return False
    return all(k in args and arg_matches(g["rule"], g["value"], args[k])
               for k, g in gold_args.items()) and all(
        k in gold_args for k, v in args.items() if v not in (None, [], ""))
