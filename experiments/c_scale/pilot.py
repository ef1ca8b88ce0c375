"""The learning-curve pilot of experiments/c_scale/PLAN.md (issue 58): how much oracle data and how
many steps make the cpu student competent, read on the validation pool only.

    python -m experiments.c_scale.pilot coverage [--cell NAME]   # what a cell's data teaches, counted
    python -m experiments.c_scale.pilot cell NAME [--work DIR]   # train one cell, validate its readings
    python -m experiments.c_scale.pilot report                   # curve, tables and the selection rule

A cell is one training run of the cpu recipe in bfloat16 (issue 56) on ``budget`` oracle episodes of
the training pool for ``steps`` optimizer steps of 4 episodes. Its *readings* are the adapter after half
its steps and at its end: each plays every task of ``val_pool`` greedily on the cpu profile's engine
(OpenVINO, bfloat16 generation) and is judged by rulers 1, 2 and 3. A cell is resumable (the training
run keeps checkpoints; a reading already written is not redone). What is committed: ``results/<cell>.json``
(the run's summary, the machine, and per reading the success counts by family and on renamed catalogues)
and ``results/<cell>/<reading>.jsonl.gz`` (every transcript with its three verdicts); adapters stay in
``--work``.
"""
from __future__ import annotations

import argparse
import dataclasses
import re
from collections import Counter
from pathlib import Path

from ccl.artifacts.inputs import split_rows
from ccl.artifacts.jsonio import read_json, read_jsonl, write_json, write_jsonl
from ccl.config import load_params, stage_config, stage_with_models
from ccl.data import scaled
from ccl.devices import cpu_record
from ccl.episode.evaluate_config import EvaluateConfig
from ccl.models.weights import model_dir
from ccl.stages import validate_run
from ccl.train import torch_trainer as T
from ccl.train.errors import Diverged
from ccl.train.recipe import TrainRecipe
from ccl.train.run import train_run
from ccl.vocabulary import RULER2, RULER3, Run
from ccl.world.tasks.base import FAMILIES
from scripts.layout import DATA, PARAMS
from scripts.model_store import model_store

HERE = Path(__file__).parent
RESULTS = HERE / "results"
SEED = 0
PRECISION = "bfloat16"  # training products and generation (experiments/bf16_cpu: T1-T3 and G1-G3 hold)


@dataclasses.dataclass(frozen=True)
class Cell:
    sampler: str  # "uniform": a random draw of the pool; "balanced": see PLAN.md's data rule
    budget: int  # oracle episodes
    steps: int  # optimizer steps of 4 episodes
    selectable: bool = True  # PLAN.md: the 1,000 x 2 cell is over the cap by design, never selectable


# PLAN.md's cells. u128 is the published cpu recipe's size in bfloat16 (run 0: its failures are read
# before the data rule is fixed); the grid's cells follow the data rule.
CELLS: dict[str, Cell] = {
    "u128_s48": Cell("uniform", 128, 48),
    "b128_s64": Cell("balanced", 128, 64),
    "b256_s128": Cell("balanced", 256, 128),
    "b512_s256": Cell("balanced", 512, 256),
    "b1000_s250": Cell("balanced", 1000, 250),
    "b1000_s500": Cell("balanced", 1000, 500, selectable=False),
}


def oracle_rows() -> list[dict]:
    return list(read_jsonl(DATA / "sft" / "oracle_train.jsonl"))


def draw(rows: list[dict], sampler: str, budget: int) -> list[dict]:
    """The cell's episodes, drawn as the cpu-scale profile's build_c stage draws them."""
    return scaled.draw(rows, scaled.ScaledCConfig(budget=budget, sampler=sampler, seed=SEED))


def recipe_for(cell: Cell) -> TrainRecipe:
    """The cpu recipe (params.yaml) with the cell's steps, bfloat16 products and four checkpoints."""
    recipe, _ = stage_config(load_params(PARAMS), "train", TrainRecipe, "cpu")
    return dataclasses.replace(recipe, steps=cell.steps, checkpoint_every=cell.steps // 4, precision=PRECISION)


def readings(cell: Cell) -> tuple[int, ...]:
    """Half way and the end; the half-way reading is the checkpoint at or before half the steps (the
    adapter is saved when a checkpoint is written: step 124 of 250, whose checkpoints fall every 62)."""
    every = recipe_for(cell).checkpoint_every
    return (cell.steps // 2 // every * every, cell.steps)


def train_cell(name: str, cell: Cell, work: Path) -> dict:
    """Train (or resume) the cell's run; the adapter at each reading step is saved under work/name/readings."""
    _, models, _ = stage_with_models(PARAMS, "evaluate", EvaluateConfig, "cpu")
    folder = model_dir(model_store(), models.student)
    root = work / name
    train_file = root / "train.jsonl"
    if not train_file.exists():
        write_jsonl(train_file, draw(oracle_rows(), cell.sampler, cell.budget))

    def keep(step: int, tm) -> None:
        if step in readings(cell):
            T.save_adapter(tm, root / "readings" / f"step{step}" / "adapter")

    return train_run(Run("C", SEED), recipe_for(cell), models.student, folder, "torch", train_file,
                     DATA / "sft" / "oracle_val.jsonl", root / "runs", root / "archive", root / "stability.jsonl",
                     "cpu", on_checkpoint=keep)


def validate_reading(adapter: Path, out: Path) -> dict:
    """Every val_pool task played greedily with ``adapter`` by the scale pipeline's validate stage's play
    (the cpu profile's engine, generating in bfloat16) and tallied as it tallies; transcripts and verdicts
    to ``out``."""
    ev, models, _ = stage_with_models(PARAMS, "evaluate", EvaluateConfig, "cpu")
    models = dataclasses.replace(models, student_precision=PRECISION)
    rows, seconds = validate_run.play_val_pool(model_store(), models, ev, adapter, DATA)
    write_jsonl(out, rows)
    return {"seconds": round(seconds, 1), **validate_run.tally(rows)}


def step_seconds(log: Path) -> dict:
    """Each optimizer step's seconds (its tokens over its tokens per second), summarised: the median is
    robust to a stretch of steps slowed by other work on the machine, which ``train_minutes`` is not."""
    times = sorted(e["tokens"] / e["tok_per_s"] for e in read_jsonl(log))
    return {"steps": len(times), "median": round(times[len(times) // 2], 2), "sum_minutes": round(sum(times) / 60, 2),
            "slowest": round(times[-1], 2)}


def run_cell(name: str, work: Path) -> dict:
    cell = CELLS[name]
    out_json = RESULTS / f"{name}.json"
    record = read_json(out_json) if out_json.exists() else {"cell": name, **dataclasses.asdict(cell)}
    if "summary" not in record:
        record |= {"machine": cpu_record(), "recipe": dataclasses.asdict(recipe_for(cell))}
        try:
            record["summary"] = train_cell(name, cell, work)
        except Diverged as e:  # the cell stays in the report as broken (selection skips it)
            record["summary"] = {"stability": "broken", "reason": str(e)}
            write_json(out_json, record)
            raise
        write_json(out_json, record)
    if "step_seconds" not in record:
        record["step_seconds"] = step_seconds(work / name / "runs" / "C_s0" / "train_log.jsonl")
        write_json(out_json, record)
    record.setdefault("readings", {})
    for step in readings(cell):
        key = f"step{step}"
        if key not in record["readings"]:
            record["readings"][key] = validate_reading(work / name / "readings" / key,
                                                       RESULTS / name / f"{key}.jsonl.gz")
            write_json(out_json, record)
    return record


# The conversions the training templates ask for (ccl/world/tasks/base.py: relative_date, time_12h;
# args.py: URGENCY), found in a task's request text.
CONVERSIONS = {
    "today / tomorrow / the day after": re.compile(r"\b(today|tomorrow|the day after tomorrow)\b"),
    "in N days": re.compile(r"\bin \d days\b"),
    "next <weekday>": re.compile(r"\bnext (Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\b"),
    "this coming <weekday>": re.compile(r"\bthis coming \w+day\b"),
    "12-hour time": re.compile(r"\b\d{1,2}(:\d\d)? ?(am|pm|AM|PM)\b|\bnoon\b"),
    "urgency phrase": re.compile(r"no rush|low priority|normal priority|regular priority|high priority|"
                                 r"it's important|urgent|critical, ASAP", re.IGNORECASE),
}


def coverage(rows: list[dict]) -> dict:
    """Families, templates, renamed episodes and conversions in a training draw."""
    tasks = {t["id"]: t for t in split_rows(DATA / "tasks", "train_pool", need_rows=True)}
    requests = [tasks[r["task_id"]]["request"] for r in rows]
    return {"episodes": len(rows), "families": dict(Counter(r["family"] for r in rows)),
            "renamed": sum(bool(tasks[r["task_id"]]["rename"]) for r in rows),
            "conversions": {k: sum(bool(rx.search(q)) for q in requests) for k, rx in CONVERSIONS.items()},
            "templates": dict(sorted(Counter(r["template"] for r in rows).items()))}


MARGIN = 0.05  # PLAN.md's selection rule: within 5 points of the best
CAP_MINUTES = 30.0


def finished() -> dict[str, dict]:
    """The committed records of the cells that ran, in CELLS order."""
    return {n: read_json(RESULTS / f"{n}.json") for n in CELLS if (RESULTS / f"{n}.json").exists()}


def select(records: dict[str, dict]) -> dict:
    """PLAN.md's rule over the grid's final readings (run 0 is not a grid cell)."""
    rows = []
    for name, r in records.items():
        cell, s = CELLS[name], r["summary"]
        final = r.get("readings", {}).get(f"step{cell.steps}")
        if cell.sampler != "balanced" or not cell.selectable or final is None:
            continue
        rows.append({"cell": name, "budget": cell.budget, "steps": cell.steps, "sampler": cell.sampler,
                     "success": final[RULER3]["success"] / final["tasks"], "train_minutes": s["train_minutes"],
                     "eligible": s["stability"] == "passed" and s["train_minutes"] <= CAP_MINUTES})
    eligible = [x for x in rows if x["eligible"]]
    if not eligible:
        return {"candidates": rows, "selected": None}
    best = max(x["success"] for x in eligible)
    near = [x for x in eligible if x["success"] >= best - MARGIN - 1e-12]
    chosen = min(near, key=lambda x: (x["budget"], x["steps"]))
    return {"rule": f"smallest budget (then fewest steps) within {MARGIN * 100:g} points of the best ruler-3 validation "
                    f"success among stable cells trained in at most {CAP_MINUTES:g} minutes",
            "best": best, "candidates": rows, "selected": chosen}


def reading_steps(record: dict) -> list[int]:
    """The steps a cell's record holds readings at, in order (its keys are ``step<k>``)."""
    return sorted(int(k.removeprefix("step")) for k in record.get("readings", {}))


def table(records: dict[str, dict]) -> str:
    """The curve as a Markdown table: one row per reading, ruler-3 successes pooled, by family, renamed."""
    head = ["cell", "step", "episodes seen", "train min", "r1", "r2", "r3", "r3 unrenamed", "r3 renamed", *FAMILIES]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for name, r in records.items():
        for step in reading_steps(r):
            rd = r["readings"][f"step{step}"]
            n, m = rd["tasks"], rd["n_renamed"]
            r3 = rd[RULER3]
            fam = [f"{r3['by_family'][f]}/{rd['n_by_family'][f]}" for f in FAMILIES]
            cells = [name, str(step), str(step * 4), f"{r['summary']['train_minutes']:.1f}" if step == CELLS[name].steps else "",
                     *(f"{rd[x]['success'] / n:.1%}" for x in ("ruler1", RULER2, RULER3)),
                     f"{r3['unrenamed']}/{n - m}", f"{r3['renamed']}/{m}", *fam]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def template_table(records: dict[str, dict]) -> str:
    """Ruler-3 successes per training template at each cell's final reading, read from its transcripts."""
    counts: dict[str, dict[str, list[int]]] = {}
    for name in records:
        for r in read_jsonl(RESULTS / name / f"step{CELLS[name].steps}.jsonl.gz"):
            tally_ = counts.setdefault(r["template"], {}).setdefault(name, [0, 0])
            tally_[0] += r[RULER3]
            tally_[1] += 1
    lines = ["| template | " + " | ".join(records) + " |", "|" + " --- |" * (len(records) + 1)]
    for template in sorted(counts):
        lines.append(f"| {template} | " + " | ".join("{}/{}".format(*counts[template][n]) for n in records) + " |")
    return "\n".join(lines) + "\n"


def plot(records: dict[str, dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for name, r in records.items():
        steps = reading_steps(r)
        reads = [r["readings"][f"step{s}"] for s in steps]
        for ax, part in zip(axes, ("unrenamed", "renamed")):
            ys = [rd[RULER3][part] / (rd["n_renamed"] if part == "renamed" else rd["tasks"] - rd["n_renamed"])
                  for rd in reads]
            ax.plot([4 * s for s in steps], ys, marker="o", label=name)
    for ax, part in zip(axes, ("unrenamed", "renamed (training aliases)")):
        ax.set_xscale("log")
        ax.set_xlabel("episodes seen (steps x 4)")
        ax.set_ylabel("ruler-3 validation success")
        ax.set_title(f"val_pool, {part}")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(fig)


def report() -> None:
    records = finished()
    read = {n: r for n, r in records.items() if f"step{CELLS[n].steps}" in r.get("readings", {})}
    write_json(RESULTS / "selection.json", select(records))
    (HERE / "curve.md").write_text(table(records) + "\nFinal readings, ruler 3, per template:\n\n" + template_table(read),
                                   encoding="utf-8")
    plot(read, HERE / "curve.png")
    print((HERE / "curve.md").read_text(encoding="utf-8"))
    print(read_json(RESULTS / "selection.json"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["coverage", "cell", "report"])
    ap.add_argument("name", nargs="?")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ccl-c-scale"))
    args = ap.parse_args()
    if args.what == "report":
        report()
    elif args.what == "cell":
        if args.name not in CELLS:
            raise SystemExit(f"cell {args.name!r}: expected one of {', '.join(CELLS)}")
        print(run_cell(args.name, args.work))
    else:
        names = [args.name] if args.name else list(CELLS)
        rows = oracle_rows()
        counts = {n: coverage(draw(rows, CELLS[n].sampler, CELLS[n].budget)) for n in names}
        write_json(RESULTS / "coverage.json", {"pool": coverage(rows), **counts})


if __name__ == "__main__":
    main()
