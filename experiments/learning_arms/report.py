"""The learning arms' tables, curve and summary, read from the cpu-scale pipeline's artifacts (issue 59).

    python -m experiments.learning_arms.report

Reads scale/runs/<run>/ (summaries and step logs), results/scale/arms/ (rollout timings),
data/scale/dagger and data/scale/dpo (DAgger's and DPO's statistics) and results/scale/validation/ (every
curve point's 150 validation tasks under rulers 1-3), and writes experiments/learning_arms/results/:
summary.json (every number the README quotes), tables.md and curve.png. An arm's minutes are its
training-side seconds: rollouts, expert labelling and optimizer steps, never model loading or validation.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from ccl.artifacts.jsonio import read_jsonl, write_json
from ccl.world.tasks.base import FAMILIES

ROOT = Path(__file__).resolve().parents[2]
RUNS, VALIDATION, ARMS = ROOT / "scale" / "runs", ROOT / "results" / "scale" / "validation", ROOT / "results" / "scale" / "arms"
OUT = Path(__file__).resolve().parent / "results"
DAGGER_RUNS = ("C_dagger_i1_s0", "C_dagger_i2_s0", "C_dagger_i3_s0", "C_dagger_s0")
BUDGET_MINUTES = 10.0  # PLAN.md


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def log(run: str, name: str = "train_log.jsonl") -> list[dict]:
    return list(read_jsonl(RUNS / run / name))


def step_seconds(entry: dict) -> float:
    """An SFT step's seconds from its log line (tokens over throughput, as ccl.train.run reads them)."""
    return entry["tokens"] / entry["tok_per_s"]


def reading(name: str) -> dict:
    """One curve point's validation record: ruler-3 success pooled, per family and by renaming."""
    r = load(VALIDATION / f"{name}.json")
    n = r["tasks"]
    return {"name": name, "tasks": n, "success": r["ruler3"]["success"], "rate": r["ruler3"]["success"] / n,
            "by_family": r["ruler3"]["by_family"], "n_by_family": r["n_by_family"],
            "renamed": r["ruler3"]["renamed"], "n_renamed": r["n_renamed"],
            "unrenamed": r["ruler3"]["unrenamed"], "n_unrenamed": n - r["n_renamed"],
            "ruler2": r["ruler2"]["success"], "ruler1": r["ruler1"]["success"]}


def paired(a: str, b: str) -> dict:
    """Task by task under ruler 3: what ``a`` solves that ``b`` does not (gained) and the reverse (lost), with
    the exact two-sided sign test (McNemar's exact form) on the discordant tasks."""
    from scipy.stats import binomtest

    ra = {r["task_id"]: r["ruler3"] for r in read_jsonl(VALIDATION / f"{a}.jsonl.gz")}
    rb = {r["task_id"]: r["ruler3"] for r in read_jsonl(VALIDATION / f"{b}.jsonl.gz")}
    if set(ra) != set(rb):
        raise ValueError(f"{a} and {b} were not read on the same tasks")
    gained = sum(ra[t] and not rb[t] for t in ra)
    lost = sum(rb[t] and not ra[t] for t in ra)
    p = binomtest(gained, gained + lost, 0.5).pvalue if gained + lost else 1.0
    return {"gained": gained, "lost": lost, "p_exact": round(float(p), 4)}


def overchained(name: str) -> dict:
    """Select-family episodes that failed under ruler 3 after making more tool calls than the oracle's episode
    of the task (the failure read in the transcripts: a lookup answered, then another tool called)."""
    from ccl.episode.oracle import OraclePolicy
    from ccl.episode.runtime import run_episode
    from ccl.artifacts.inputs import split_rows

    tasks = {t["id"]: t for t in split_rows(ROOT / "data" / "v1" / "tasks", "val_pool")}
    calls = lambda messages: sum(m["content"].count('"tool"') for m in messages if m["role"] == "assistant")  # noqa: E731
    failed = [r for r in read_jsonl(VALIDATION / f"{name}.jsonl.gz") if r["family"] == "select" and not r["ruler3"]]
    more = sum(calls(r["record"]["messages"]) > calls(run_episode(tasks[r["task_id"]], OraclePolicy()).messages)
               for r in failed)
    return {"select_failed": len(failed), "select_failed_with_extra_calls": more}


def cplus() -> dict:
    steps = log("C_plus_s0")
    half = len(steps) // 2
    return {"points": [(sum(map(step_seconds, steps[:half])) / 60, "C_plus_half_s0"),
                       (load(RUNS / "C_plus_s0" / "summary.json")["train_minutes"], "C_plus_s0")],
            "steps": len(steps), "episodes_seen": len(steps) * 4,
            "machine": load(RUNS / "C_plus_s0" / "summary.json")["machine"]}


def dagger() -> dict:
    minutes, points, iterations = 0.0, [], []
    for k, run in enumerate(DAGGER_RUNS, 1):
        rollout = load(ARMS / f"dagger_iter{k}.json")["wall_s"] / 60
        train = load(RUNS / run / "summary.json")["train_minutes"]
        minutes += rollout + train
        points.append((minutes, run))
        stats = load(ROOT / "data" / "scale" / "dagger" / f"iter{k}" / "stats.json")
        iterations.append({"iteration": k, "beta": stats["beta"], "rollout_minutes": round(rollout, 2),
                           "train_minutes": train, **{key: stats[key] for key in (
                               "tasks", "episodes_ruler2_success", "states", "states_off_expert_path",
                               "executed_by_expert", "student_agrees", "student_passes", "unrecoverable", "rows",
                               "train_rows")}})
    return {"points": points, "iterations": iterations}


def dpo() -> dict:
    entries = log("C_dpo_s0")
    rollout = load(ARMS / "dpo_rollout.json")["wall_s"] / 60
    summary = load(RUNS / "C_dpo_s0" / "summary.json")
    chosen = [e["logp_chosen"] for e in entries]
    first, last = _mean(chosen[:3]), _mean(chosen[-3:])
    return {"points": [(rollout + summary["train_minutes"], "C_dpo_s0")], "rollout_minutes": round(rollout, 2),
            "train_minutes": summary["train_minutes"], "pairs": load(ROOT / "data" / "scale" / "dpo" / "stats.json"),
            "steps": len(entries), "logp_chosen_first3": first, "logp_chosen_last3": last,
            "chosen_likelihood_fell": last < first,
            "log": [{k: e[k] for k in ("step", "loss", "reward_accuracy", "reward_margin", "logp_chosen",
                                       "logp_rejected")} for e in entries]}


def grpo() -> dict:
    entries = log("C_grpo_sparse_s0")
    cfg = load(RUNS / "C_grpo_sparse_s0" / "config.json")["grpo"]
    seconds = [e["sample_s"] + e["update_s"] for e in entries]
    keep = cfg["keep_at"]
    return {"points": [(sum(seconds[:keep]) / 60, "C_grpo_sparse_half_s0"), (sum(seconds) / 60, "C_grpo_sparse_s0")],
            "steps": len(entries), "episodes": sum(e["episodes"] for e in entries),
            "val_log": log("C_grpo_sparse_s0", "val_log.jsonl"),
            "log": [{k: e.get(k) for k in ("step", "reward", "reward_sparse_std",
                                          "zero_spread_groups", "screened", "flagged", "kl", "grad_norm",
                                          "sample_s", "update_s", "updated")} for e in entries]}


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return sum(xs) / len(xs) if xs else math.nan


def main() -> int:
    arms = {"C+": cplus(), "DAgger": dagger(), "DPO": dpo(), "GRPO": grpo()}
    c = reading("C_s0")
    readings = {"C_s0": c} | {name: reading(name) for arm in arms.values() for _, name in arm["points"]}
    for name, x in readings.items():
        x["vs_C"] = paired(name, "C_s0")
        x["vs_C_plus_half"] = paired(name, "C_plus_half_s0")
        x["vs_C_plus"] = paired(name, "C_plus_s0")
        x["overchained"] = overchained(name)
    summary = {"budget_minutes": BUDGET_MINUTES, "c": c, "readings": readings,
               "arms": {k: {**v, "points": [{"minutes": round(m, 2), "run": n} for m, n in v["points"]]}
                        for k, v in arms.items()}}
    OUT.mkdir(exist_ok=True)
    write_json(OUT / "summary.json", summary)
    (OUT / "tables.md").write_text(tables(summary), encoding="utf-8")
    plot(summary, OUT / "curve.png")
    print((OUT / "tables.md").read_text(encoding="utf-8"))
    return 0


def pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.1f}%)" if n else "-"


def tables(s: dict) -> str:
    r, c = s["readings"], s["c"]
    def vs(x: dict, key: str, ref: dict) -> str:
        d = x[key]
        return f"{100 * (x['rate'] - ref['rate']):+.1f} (+{d['gained']}/-{d['lost']}, p {d['p_exact']:.3f})"

    head = ("| arm | run | minutes | ruler 3 | vs C | vs C+ at 5.0 min | vs C+ at 10.9 min | unrenamed | renamed "
            "| ruler 2 |\n|---|---|---|---|---|---|---|---|---|---|\n")
    rows = [f"| C | C_s0 | 0 | {pct(c['success'], c['tasks'])} | | | | {pct(c['unrenamed'], c['n_unrenamed'])} | "
            f"{pct(c['renamed'], c['n_renamed'])} | {c['ruler2']} |"]
    for arm, v in s["arms"].items():
        for p in v["points"]:
            x = r[p["run"]]
            rows.append(f"| {arm} | {p['run']} | {p['minutes']:.1f} | {pct(x['success'], x['tasks'])} | "
                        f"{vs(x, 'vs_C', c)} | {vs(x, 'vs_C_plus_half', r['C_plus_half_s0'])} | "
                        f"{vs(x, 'vs_C_plus', r['C_plus_s0'])} | "
                        f"{pct(x['unrenamed'], x['n_unrenamed'])} | {pct(x['renamed'], x['n_renamed'])} | {x['ruler2']} |")
    fam_head = "| run | " + " | ".join(f"{f} ({c['n_by_family'][f]})" for f in FAMILIES) + " |\n|---|" + "---|" * len(FAMILIES) + "\n"
    finals = ["C_s0", "C_plus_s0", "C_dagger_s0", "C_dpo_s0", "C_grpo_sparse_s0"]
    fam = [f"| {n} | " + " | ".join(str(r[n]["by_family"][f]) for f in FAMILIES)
           + f" | {r[n]['overchained']['select_failed_with_extra_calls']}/{r[n]['overchained']['select_failed']} |"
           for n in finals]
    fam_head = fam_head.replace(" |\n|---|", " | select failures with extra calls |\n|---|---|", 1)
    return ("## Validation success against minutes (ruler 3, 150 val_pool tasks)\n\n" + head + "\n".join(rows)
            + "\n\n## Per family, final adapters (ruler-3 successes)\n\n" + fam_head + "\n".join(fam) + "\n")


def plot(s: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
    c = 100 * s["c"]["rate"]
    for arm, v in s["arms"].items():
        xs = [0.0] + [p["minutes"] for p in v["points"]]
        ys = [c] + [100 * s["readings"][p["run"]]["rate"] for p in v["points"]]
        ax.plot(xs, ys, marker="o", label=arm)
    ax.axvline(s["budget_minutes"], color="grey", ls=":", lw=1)
    ax.set_xlabel("training-side minutes after C (2 CPU cores)")
    ax.set_ylabel("validation success, ruler 3 (%)")
    ax.set_title("What the extra minutes buy (150 val_pool tasks, one seed)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    raise SystemExit(main())
