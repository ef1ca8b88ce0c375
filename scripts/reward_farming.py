"""Farm the rewards before a policy trains on them (issue 41): every scripted adversarial policy of
``ccl.learn.farming`` on every template x seeds, each episode scored by sparse, decomposed and the dense
per-turn grade (summed, and averaged over turns).

    python -m scripts.reward_farming [--seeds 3] [--out experiments/reward_farming/result.json]

Per policy and reward: the mean over the episodes it applies to (and per task family); on how many
episodes the reward pays it more than it pays the honest give-up on the same task (``over_give_up``);
on how many it pays something although ruler 2 fails the episode (``paid_on_failure``); and on how many
it pays at least what it pays the oracle although ruler 2 fails it (``oracle_level_on_failure``), the
case a policy gradient cannot tell from the real thing.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

from ccl.artifacts.jsonio import write_json
from ccl.learn.farming import BASELINE, POLICIES, REFERENCE, REWARDS, Scored, score
from ccl.world.tasks import TEMPLATES, generate_task

from .layout import ROOT


def tasks(seeds: int) -> list[dict]:
    """Every template x seeds 0..seeds-1, from the pool each template's split uses."""
    return [generate_task(name, seed, "train" if TEMPLATES[name].split == "train" else "eval")
            for name in sorted(TEMPLATES) for seed in range(seeds)]


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def _example(rows: list[Scored]) -> dict | None:
    """The failing episode the dense grade pays most (by mean, then by sum): where to look first."""
    failing = [s for s in rows if s.sparse == 0]
    if not failing:
        return None
    s = max(failing, key=lambda s: (s.dense_mean, s.dense_sum, s.decomposed))
    return {"task": s.task_id, "sparse": s.sparse, "decomposed": s.decomposed, "dense_sum": s.dense_sum,
            "dense_mean": round(s.dense_mean, 4),
            "turns": [f"{'PASS' if g.passed else 'fail'}:{g.why}" for g in s.grades],
            "reasons": list(s.reasons)}


def summarise(name: str, rows: list[Scored], ref: dict[str, Scored], base: dict[str, Scored]) -> dict:
    """One policy's row of the table (``ref`` and ``base``: the oracle's and the give-up's episode by task)."""
    out: dict = {"episodes": len(rows), "ruler2_success": sum(s.sparse == 1 for s in rows),
                 "mean_turns": _mean([len(s.grades) for s in rows])}
    for r in REWARDS:
        out[r] = {
            "mean": _mean([s.reward(r) for s in rows]),
            "over_give_up": sum(s.reward(r) > base[s.task_id].reward(r) for s in rows if s.task_id in base),
            "paid_on_failure": sum(s.reward(r) > 0 and s.sparse == 0 for s in rows),
            "oracle_level_on_failure": sum(s.sparse == 0 and s.reward(r) >= ref[s.task_id].reward(r) > 0
                                           for s in rows),
        }
    families: dict[str, list[Scored]] = defaultdict(list)
    for s in rows:
        families[s.family].append(s)
    out["by_family"] = {f: {"episodes": len(v), **{r: _mean([s.reward(r) for s in v]) for r in REWARDS}}
                        for f, v in sorted(families.items())}
    out["templates_applied"] = sorted({s.template for s in rows})
    out["most_paid_failure"] = _example(rows)
    return out


def run(seeds: int) -> dict:
    scored: dict[str, list[Scored]] = {}
    for name in POLICIES:
        scored[name] = [s for t in tasks(seeds) if (s := score(t, name)) is not None]
    ref = {s.task_id: s for s in scored[REFERENCE]}
    base = {s.task_id: s for s in scored[BASELINE]}
    return {"seeds": seeds, "templates": len(TEMPLATES), "baseline": BASELINE, "reference": REFERENCE,
            "policies": {name: summarise(name, rows, ref, base) for name, rows in scored.items()}}


SHORT = {"sparse": "sparse", "decomposed": "decomp", "decomposed_gated": "dec_gate", "dense_sum": "d_sum",
         "dense_mean": "d_mean", "dense_safe_mean": "d_safe"}


def table(result: dict) -> str:
    """Means per reward, then per reward: episodes paid although ruler 2 failed them / paid more than the
    give-up / paid at least the oracle's reward although ruler 2 failed them."""
    cols = " ".join(f"{SHORT[r]:>8s}" for r in REWARDS)
    lines = [f"{'policy':24s} {'eps':>4s} {'r2 ok':>5s} {cols}"]
    for name, p in result["policies"].items():
        means = " ".join(f"{p[r]['mean']:8.3f}" for r in REWARDS)
        lines.append(f"{name:24s} {p['episodes']:4d} {p['ruler2_success']:5d} {means}")
    lines += ["", f"{'paid on failure / > give-up / oracle-level on failure':56s}",
              f"{'policy':24s} " + " ".join(f"{SHORT[r]:>12s}" for r in REWARDS[1:])]
    for name, p in result["policies"].items():
        counts = " ".join(f"{p[r]['paid_on_failure']:>4d}/{p[r]['over_give_up']:>3d}/"
                          f"{p[r]['oracle_level_on_failure']:>3d}" for r in REWARDS[1:])
        lines.append(f"{name:24s} {counts}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "experiments" / "reward_farming" / "result.json")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    result = run(args.seeds)
    write_json(args.out, result)
    print(table(result))
    print(f"{time.perf_counter() - start:.0f} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
