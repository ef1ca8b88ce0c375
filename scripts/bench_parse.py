"""Benchmark: the action parser's worst case over adversarial outputs (issue 38).

    python -m scripts.bench_parse [--chars 16000] [--repeat 3]

For each adversarial family (closing brackets inside strings, deep nesting, unclosed fences followed by
whitespace, think tags, ...) and each fill ratio of the length limit, times ``parse_action`` and the
parser before issue 38 (``old_parse_action``, kept here as the reference the tests compare against) and
prints the worst cases as JSON. Target: under 50 ms at 16,000 characters.
"""
from __future__ import annotations

import argparse
import json
import re
import time
from typing import Any, Callable

from ccl.episode.runtime import _THINK_RE, Action, Limits, _is_strict, _normalise, _too_deep, parse_action

_OLD_FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def old_parse_action(text: Any, limits: Limits = Limits()) -> tuple[Action | None, str | None, bool]:
    """parse_action as it was before issue 38: the decoder tried at every bracket (quadratic)."""
    if not isinstance(text, str):
        return None, "the assistant message must be text", False
    if len(text) > limits.max_action_chars:
        return None, f"action longer than {limits.max_action_chars} characters", False
    if _too_deep(text, limits.max_json_depth):
        return None, f"JSON nested deeper than {limits.max_json_depth} levels", False
    strict = _is_strict(text.strip())
    try:
        result = _normalise(json.loads(text))
        if isinstance(result, Action):
            return result, None, strict
    except (ValueError, RecursionError):
        pass
    body = _THINK_RE.sub("", text)
    candidates = [m.group(1) for m in _OLD_FENCE_RE.finditer(body)] + [body]
    decoder = json.JSONDecoder()
    error = "no JSON object found"
    for cand in candidates:
        for m in re.finditer(r"[\[{]", cand):
            try:
                obj, _ = decoder.raw_decode(cand, m.start())
            except (ValueError, RecursionError):
                continue
            result = _normalise(obj)
            if isinstance(result, Action):
                return result, None, strict
            error = result
            break
    return None, error, False


# unit repeated to fill the text; an optional tail closes what the units opened
FAMILIES: dict[str, tuple[str, str]] = {
    "closers_in_strings_open": ('{"a": "}", "b": ', ""),
    "closers_in_strings_closed": ('{"a":"}","b":', "CLOSE"),  # every unit closed at the end
    "array_of_closers": ('["]", ', ""),
    "nested_arrays_closers": ('["]",[', ""),
    "key_brackets": ('{"[": ', ""),
    "strings_with_openers": ('"[{", ', ""),
    "fence_then_spaces": ("```", " " * 20000),
    "fence_json_then_newlines": ("```json", "\n" * 20000),
    "many_fences": ("``` [", ""),
    "think_open": ("<think>[", ""),
    "unclosed_calls": ('{"calls": [{"tool": "x", "args": {"q": "]}]}', ""),
    "numbers": ("[1e5, -0.5, ", ""),
    "escapes": ('["\\"]\\\\", ', ""),
}


def build(family: str, chars: int, ratio: float) -> str:
    unit, tail = FAMILIES[family]
    if tail == "CLOSE":  # n units, a value, n closers: nesting the depth guard cannot see
        n = max(1, int(chars * ratio) // (len(unit) + 1) - 2)
        return (unit * n + "1" + "}" * n)[:chars]
    body = unit * max(1, int(chars * ratio) // len(unit))
    return (body + tail)[:chars]


def worst(parse: Callable, chars: int, repeat: int) -> dict:
    rows = []
    for family in FAMILIES:
        for ratio in (0.25, 0.5, 1.0):
            text = build(family, chars, ratio)
            best = min(_time(parse, text) for _ in range(repeat))
            rows.append({"family": family, "ratio": ratio, "ms": round(best * 1000, 2)})
    rows.sort(key=lambda r: -r["ms"])
    return {"worst": rows[0], "top3": rows[:3]}


def _time(parse: Callable, text: str) -> float:
    t0 = time.perf_counter()
    parse(text)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chars", type=int, default=Limits().max_action_chars)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-old", action="store_true", help="time only the current parser")
    args = ap.parse_args()
    out = {"chars": args.chars, "new": worst(parse_action, args.chars, args.repeat)}
    if not args.skip_old:
        out["old"] = worst(old_parse_action, args.chars, 1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
