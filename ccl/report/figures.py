"""Figures for the site, drawn with matplotlib from the same artifacts as the tables.

Each function returns a Figure, or a string saying why it cannot be drawn (which
artifact is missing or holds no rows); the site prints that string in the figure's place.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..vocabulary import ORACLE
from .artifacts import SUMMARY, TRAIN_RUNS, Artifacts, Missing
from .tables import TableError


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _summary(art: Artifacts, key: str) -> dict | str:
    s = art.get(SUMMARY)
    if isinstance(s, Missing):
        return s.message()
    if not s[key]["rows"]:
        return f"No rows in `{SUMMARY}` [{key}]: {s[key].get('note', '')}"
    return s[key]


def success_by_split(art: Artifacts):
    """Bars for the models; the oracle, which solves (nearly) everything by construction, is a reference
    written above the bars, not a bar: at 100% it would squash the range where every model sits."""
    block = _summary(art, "success_by_split")
    if isinstance(block, str):
        return block
    plt = _plt()
    splits = [c for c in block["columns"] if c.startswith("eval_") or c == "all"]
    for r in block["rows"]:
        for s in splits:
            c = r.get(s)
            if c and not c["low"] <= c["mean"] <= c["high"]:
                raise TableError(f"{SUMMARY} success_by_split, {r['config']} {s}: mean {c['mean']} lies outside "
                                 f"its interval [{c['low']}, {c['high']}]")
    rows = [r for r in block["rows"] if r["config"] != ORACLE]
    reference = next((r for r in block["rows"] if r["config"] == ORACLE), None)
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / max(len(rows), 1)
    for i, r in enumerate(rows):
        cells = [r.get(s) for s in splits]
        mean = np.array([c["mean"] if c else np.nan for c in cells])
        err = np.array([[c["mean"] - c["low"], c["high"] - c["mean"]] if c else [0, 0] for c in cells]).T
        ax.bar(np.arange(len(splits)) + i * width, mean, width, yerr=err, capsize=2, label=r["config"])
    top = max([c["high"] for r in rows for s in splits if (c := r.get(s))] or [0.0])
    ceiling = min(105.0, max(10.0, top * 1.2 + 2))
    ax.set_ylim(0, ceiling)
    if reference:
        for j, s in enumerate(splits):
            if c := reference.get(s):
                ax.text(j + 0.4 - width / 2, ceiling * 0.97, f"{ORACLE} {c['mean']:.0f}", ha="center", va="top",
                        fontsize=7, color="0.3")
    ax.set_xticks(np.arange(len(splits)) + 0.4 - width / 2, splits)
    ax.set_ylabel("strict success (%)")
    ax.legend(ncol=4, fontsize=8, loc="upper left", bbox_to_anchor=(0, -0.12))
    ax.set_title("Strict success by split, mean and 95% CI" + (f" ({ORACLE}: reference, written above)" if reference else ""))
    fig.tight_layout()
    return fig


def _heatmap(art: Artifacts, key: str, title: str):
    block = _summary(art, key)
    if isinstance(block, str):
        return block
    plt = _plt()
    cols = [c for c in block["columns"] if c not in ("config", "seeds", "ci")]
    configs = [r["config"] for r in block["rows"]]
    grid = np.array([[r[c]["mean"] if r.get(c) else np.nan for c in cols] for r in block["rows"]])
    counts = [[r[c].get("n") if r.get(c) else None for c in cols] for r in block["rows"]]
    fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(cols), 0.8 + 0.55 * len(configs)))
    im = ax.imshow(grid, vmin=0, vmax=100, cmap="viridis", aspect="auto")
    ax.set_xticks(range(len(cols)), cols, rotation=30, ha="right")
    ax.set_yticks(range(len(configs)), configs)
    for (i, j), v in np.ndenumerate(grid):  # each rate with the count it rests on
        n = counts[i][j]
        ax.text(j, i, "—" if np.isnan(v) else f"{v:.0f}" + (f"\nn={n}" if n is not None else ""), ha="center",
                va="center", color="white" if not np.isnan(v) and v < 60 else "black", fontsize=7)
    fig.colorbar(im, ax=ax, label="success (%)")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def by_family(art: Artifacts):
    return _heatmap(art, "by_family", "Success by task family")


def by_depth(art: Artifacts):
    return _heatmap(art, "by_depth", "Success by gold workflow depth")


def catalogue(art: Artifacts):
    block = _summary(art, "catalogue_ablation")
    if isinstance(block, str):
        return block
    plt = _plt()
    ks = [c for c in block["columns"] if c not in ("config", "seeds", "ci")]
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in block["rows"]:
        ax.plot(ks, [r[k]["mean"] if r.get(k) else np.nan for k in ks], marker="o", label=r["config"])
    ax.set_xlabel("distractor tools in the catalogue")
    ax.set_ylabel("success (%)")
    ax.legend(fontsize=8)
    ax.set_title("Catalogue-size ablation")
    return fig


def loss_curves(art: Artifacts):
    if not any(art.train_logs.values()):
        return Missing(f"{TRAIN_RUNS}/<run>/train_log.jsonl", "train", "training logs").message()
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, log in art.train_logs.items():
        if log:
            ax.plot([r["step"] for r in log], [r["loss"] for r in log], marker=".", label=name)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training loss (assistant tokens)")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("Training loss per run")
    return fig


def grpo_curves(art: Artifacts):
    """GRPO's monitors per step, one line per run: its own reward, ruler-2 success of the samples, KL to C,
    and the greedy validation success at its readings."""
    if not any(art.rl_logs.values()):
        return Missing(f"{TRAIN_RUNS}/<run>/train_log.jsonl", "grpo_train", "GRPO runs").message()
    plt = _plt()
    fig, axes = plt.subplots(2, 2, figsize=(9, 6))
    panels = [("reward", "own reward (sample mean)"), ("success", "ruler-2 success of samples"), ("kl", "KL to C per token")]
    for ax, (key, label) in zip(axes.flat, panels):
        for name, log in art.rl_logs.items():
            pts = [(r["step"], r[key]) for r in log if r.get(key) is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=name)
        ax.set_xlabel("step")
        ax.set_ylabel(label)
    ax = axes.flat[3]
    for name, val in art.rl_val.items():
        ax.plot([r["step"] for r in val], [r["val_success"] for r in val], marker="o", label=name)
    ax.set_xlabel("steps done")
    ax.set_ylabel("validation success (greedy)")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle("GRPO from C: monitors per step")
    fig.tight_layout()
    return fig


FIGURES = {  # file name -> (caption, builder)
    "success_by_split.png": ("Workflow success by split with 95% intervals.", success_by_split),
    "by_family.png": ("Success by task family, main splits pooled.", by_family),
    "by_depth.png": ("Success by gold workflow depth, main splits pooled.", by_depth),
    "catalogue_ablation.png": ("Success against the number of distractor tools.", catalogue),
    "loss_curves.png": ("Training loss per optimizer step for every run.", loss_curves),
    "grpo_curves.png": ("GRPO from C: each arm's own reward, ruler-2 success of its samples and KL to C per step, and "
                        "greedy success on the validation slice.", grpo_curves),
}


def write_figures(art: Artifacts, out: Path) -> dict[str, str | None]:
    """Draw every figure into ``out``; value None = drawn, else the reason it is absent."""
    plt = _plt()
    out.mkdir(parents=True, exist_ok=True)
    status = {}
    for name, (_, build) in FIGURES.items():
        fig = build(art)
        if isinstance(fig, str):
            (out / name).unlink(missing_ok=True)
            status[name] = fig
            continue
        tmp = out / f".{name}.tmp"
        fig.savefig(tmp, dpi=110, format="png", metadata={"Software": None})
        plt.close(fig)
        tmp.replace(out / name)
        status[name] = None
    return status
