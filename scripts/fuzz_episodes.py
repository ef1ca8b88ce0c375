"""Fuzzer: random episodes with hostile actions and injected tool faults, checked for the two properties
the verdicts rely on (issue 38).

    python -m scripts.fuzz_episodes [--episodes 2000] [--seed 0]

Each episode is a random task driven by a random policy that mixes the oracle's gold calls (so side
effects really happen), calls with random arguments (NaN, Infinity, huge numbers written as model
text), malformed text and finals. Every side-effect tool is wrapped so that, at random, it fails after
changing the world: at once (a ToolError or a crash), after its time limit, or never returns. After
every turn the world must equal the replay of the recorded effects, and every record must be strict
JSON (what a browser's JSON.parse accepts). Prints the counts as JSON.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import random
import time
from collections import Counter
from contextlib import contextmanager
from typing import Callable, Iterator

from ccl.artifacts.jsonio import dumps
from ccl.episode.runtime import Episode, Limits
from ccl.records import CallOutcome
from ccl.world.state import World
from ccl.world.tasks import TEMPLATES, generate_task
from ccl.world.toolkit import ToolError
from ccl.world.tools import TOOLS

LIMIT_S = 0.02
FAULTS = ("error", "crash", "slow_crash", "hang")
NUMBER_TEXT = ("NaN", "Infinity", "-Infinity", "1e999", "-0", "12.5", "9" * 40)


def strict_json(line: str) -> bool:
    """Whether ``line`` is JSON as the standard (and JSON.parse) has it: no NaN, no Infinity."""
    def refuse(constant: str) -> None:
        raise ValueError(constant)
    try:
        json.loads(line, parse_constant=refuse)
    except ValueError:
        return False
    return True


class Injector:
    """Side-effect tools that, on a coin flip, fail after their change to the world; counts what it did."""

    def __init__(self, rng: random.Random, rate: float):
        self.rng, self.rate, self.injected = rng, rate, Counter()
        self.real = {n: t for n, t in TOOLS.items() if t.side_effect}

    def wrap(self, name: str, fn: Callable) -> Callable:
        def run(world: World, **args):
            result = fn(world, **args)  # the change is made; now, maybe, the fault
            if self.rng.random() >= self.rate:
                return result
            fault = self.rng.choice(FAULTS)
            self.injected[fault] += 1
            if fault == "error":
                raise ToolError(CallOutcome.NOT_FOUND, "injected")
            if fault == "crash":
                raise RuntimeError("injected")
            if fault == "slow_crash":
                time.sleep(2 * LIMIT_S)
                raise RuntimeError("injected late")
            while True:  # hang: only the runtime's stop ends it
                pass
        return run

    @contextmanager
    def installed(self) -> Iterator[None]:
        for name, spec in self.real.items():
            TOOLS[name] = dataclasses.replace(spec, fn=self.wrap(name, spec.fn))
        try:
            yield
        finally:
            TOOLS.update(self.real)


def replay(task: dict, effects: list[dict], real: dict) -> dict:
    world = World(task["world"])
    for e in effects:
        real[e["tool"]].fn(world, **e["args"])
    return world.state


def gold_call(task: dict, rng: random.Random) -> dict:
    node = rng.choice(task["gold"]["nodes"])
    return {"tool": node["tool"], "args": {k: v["value"] for k, v in node["args"].items()}}


def random_text(task: dict, rng: random.Random) -> str:
    """One assistant turn: gold calls, calls with number-ish text for arguments, junk, or a final."""
    kind = rng.random()
    catalogue = task["catalogue"]
    if kind < 0.45 and task["gold"]["nodes"]:
        calls = [gold_call(task, rng) for _ in range(rng.randint(1, 3))]
        return json.dumps({"calls": calls})
    if kind < 0.75 or kind < 0.45:
        tool = rng.choice(catalogue)
        args = {p.name: rng.choice(NUMBER_TEXT) for p in TOOLS[tool].params}
        body = ", ".join(f'"{k}": {v}' for k, v in args.items())
        return '{"calls": [{"tool": "%s", "args": {%s}}]}' % (tool, body)
    if kind < 0.85:
        return rng.choice(['{"calls": [', "sure thing", '{"final": {"x": NaN}, "status": "done"}', "]]]{"])
    return '{"final": %s, "status": "done"}' % rng.choice(['"ok"', "NaN", "[Infinity, 1]"])


def fuzz(episodes: int, seed: int = 0, fault_rate: float = 0.5) -> dict:
    rng = random.Random(seed)
    injector = Injector(rng, fault_rate)
    names = sorted(TEMPLATES)
    tasks = [generate_task(names[i % len(names)], seed * 100_000 + i,  # built with the real tools
                           "train" if TEMPLATES[names[i % len(names)]].split == "train" else "eval")
             for i in range(episodes)]
    seen = Counter()
    with injector.installed():
        for task in tasks:
            task["approvals"] = {t: "approve" for t in task["catalogue"]}  # let side effects happen
            ep = Episode(task, limits=Limits(tool_timeout_s=LIMIT_S))
            while not ep.done:
                ep.step(random_text(task, rng))
                seen["state_mismatches"] += dumps(ep.world.state) != dumps(replay(task, ep.effects, injector.real))
            record = ep.record()
            seen["episodes"] += 1
            seen["calls"] += len(record["calls"])
            seen["effects"] += len(record["effects"])
            seen["non_json_records"] += not strict_json(dumps(record))
            seen["records_with_non_finite_text"] += any(c in dumps(record) for c in ('"NaN"', '"Infinity"'))
    return {**dict(sorted(seen.items())), "failures_injected": sum(injector.injected.values()),
            "failures_by_kind": dict(sorted(injector.injected.items()))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    counts = fuzz(args.episodes, args.seed)
    print(json.dumps({**counts, "seconds": round(time.perf_counter() - t0, 1)}))


if __name__ == "__main__":
    main()
