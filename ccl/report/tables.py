"""Report tables, each built from named artifacts and nothing else.

A ``Table`` holds display strings only, plus the artifacts it was built from. A table
whose artifact is missing still exists: it carries the ``Missing`` message instead of
rows, so a page says which file and stage to run rather than showing a blank.
``check_table`` refuses a table with an empty cell or without a source.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import quote

from ..errors import StageError
from ..vocabulary import RULER1, RULER2
from .artifacts import (
    ARCHIVE,
    DATA_MANIFEST,
    LEAKAGE,
    POWER,
    REPLAY_SUMMARY,
    SERVE_SUMMARY,
    SUMMARY,
    SUMMARY_WITHOUT_PRIMARY,
    SUMMARY_WITHOUT_RULER2,
    TEACHER_PILOT,
    TEACHER_SUMMARY,
    TRAIN_RUNS,
    VARIANTS_LISTING,
    Artifacts,
    Missing,
)
from .families import P_COLUMNS, p_text, replay_paired_note

REPLAY_PAGE = "replay.html"  # the site's failure map and decision explorer



@dataclass
class Table:
    name: str
    title: str
    columns: list[str]
    rows: list[list[str]]
    sources: list[str]
    note: str = ""
    missing: str = ""  # set when an artifact the table needs is absent
    links: dict[tuple[int, int], str] = field(default_factory=dict)  # (row, column) -> explorer anchor
    page: str = ""  # the site page the links open; empty: the trace explorer


class TableError(StageError, ValueError):
    pass


def check_table(t: Table) -> None:
    """Every cell is a non-empty string and the table names the artifacts it came from."""
    if not t.sources:
        raise TableError(f"table {t.name}: no source artifact")
    for i, row in enumerate(t.rows):
        if len(row) != len(t.columns):
            raise TableError(f"table {t.name}, row {i}: {len(row)} cells for {len(t.columns)} columns")
        for col, cell in zip(t.columns, row):
            if not isinstance(cell, str) or not cell:
                raise TableError(f"table {t.name}, row {i}, column {col!r}: cell has no value from its source")


# ------------------------------------------------------------------ cell formatting
def pct(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def signed(x: float) -> str:
    return f"{x:+.1f}"


def fmt_cell(v: Any) -> str:
    """A summary.json cell: interval dicts as 'mean [low, high] n=..', counts as 'mean (n=..)': a rate
    never without the count it rests on (a 100.0 [100.0, 100.0] from one task is not one from 96)."""
    if v is None:
        return "—"  # the artifact records the value as undefined (e.g. no calls to score)
    if isinstance(v, dict):
        if "low" in v and "high" in v:
            n = f" n={v['n']}" if "n" in v else ""
            return f"{v['mean']:.1f} [{v['low']:.1f}, {v['high']:.1f}]{n}"
        if "mean" in v:
            return f"{v['mean']:.1f} (n={v['n']})"
        return ", ".join(f"{k} {fmt_cell(x)}" for k, x in v.items())
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.2f}" if abs(v) < 1000 else f"{v:,.0f}"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, list):
        return ", ".join(fmt_cell(x) for x in v) or "none"
    return str(v)


def composition(counts: dict | None) -> str:
    return " · ".join(f"{k} {v}" for k, v in counts.items()) if counts else "—"


def missing_table(name: str, title: str, m: Missing) -> Table:
    return Table(name, title, [], [], [m.path], missing=m.message())


# ------------------------------------------------------------------ results tables (summary.json)
def summary_table(art: Artifacts, key: str, title: str,
                  cell: Callable[[str, Any], str] = lambda col, v: p_text(v) if col in P_COLUMNS else fmt_cell(v),
                  source: str = SUMMARY, page: str = "") -> Table:
    """Table ``key`` of a summary artifact (``source``) as it stands; per-split cells link to ``page``."""
    summary = art.get(source)
    if isinstance(summary, Missing):
        return missing_table(key, title, summary)
    block = summary[key]
    cols = block["columns"]
    rows = [[cell(c, r.get(c)) for c in cols] for r in block["rows"]]
    return Table(key, title, cols, rows, [source], note=block.get("note", ""),
                 links=split_links(block, summary.get("runs_per_config", {}), by_config=bool(page)), page=page)


def split_links(block: dict, runs: dict[str, list[str]], by_config: bool = False) -> dict[tuple[int, int], str]:
    """Cells of a per-split column link to that configuration's episodes on that split (the
    first run of a configuration with several seeds; with ``by_config``, the configuration)."""
    links = {}
    for i, r in enumerate(block["rows"]):
        names = runs.get(r.get("config"), [])
        for j, c in enumerate(block["columns"]):
            if names and c.startswith("eval_") and r.get(c) is not None:
                links[(i, j)] = f"config={r['config'] if by_config else names[0]}&split={c}"
    return links


def paired_table(art: Artifacts) -> Table:
    title = "Paired differences in success (percentage points)"
    summary = art.get(SUMMARY)
    if isinstance(summary, Missing):
        return missing_table("paired", title, summary)
    block = summary["paired"]
    cols = ["comparison", "split", "diff [95% CI]", "p (sign-flip)", "p_holm", "n"]
    rows = [[r["comparison"], r["split"], *paired_cells(r), str(r["n"])] for r in block["rows"]]
    return Table("paired", title, cols, rows, [SUMMARY], note=block["note"] + " * = significant after Holm.")


def _mde_text(value: float | None) -> str:
    return "none reachable" if value is None else f"{100 * value:.1f}"


# outcome -> (marker name, title) of the primary contrasts' table under that outcome
PRIMARY_TABLES = {
    "success": ("primary", "Primary contrasts (pre-registered; strict success)"),
    "success_writeup": ("primary_writeup", "Primary contrasts under the write-up's success definition (secondary)"),
    RULER2: ("primary_ruler2", "Post hoc: primary contrasts under ruler 2 (farm-resistant strict success; "
                               "sensitivity analysis, not pre-registered)"),
}


def primary_table(art: Artifacts, outcome: str = "success") -> Table:
    """The pre-registered primary contrasts with the MDE the design was sized for."""
    name, title = PRIMARY_TABLES[outcome]
    summary, power = art.get(SUMMARY), art.get(POWER)
    for m in (summary, power):
        if isinstance(m, Missing):
            return missing_table(name, title, m)
    if "primary" not in summary:
        return Table(name, title, [], [], [SUMMARY, POWER],
                     missing=f"Not available: {SUMMARY_WITHOUT_PRIMARY}")
    block = summary["primary"]
    if outcome not in block:
        return Table(name, title, [], [], [SUMMARY, POWER],
                     missing=f"Not available: {SUMMARY_WITHOUT_RULER2}")
    mdes = {r["contrast"]: r["mde"] for r in power["contrasts"]}
    cols = ["contrast", "a (seeds)", "a success %", "compared with", "diff [95% CI]", "p", "p_holm",
            "MDE (pre-registered)", "tasks", "a wins / b wins"]
    rows = []
    for r in block[outcome]["rows"]:
        comps = "; ".join(f"{c['b']} ({c['seeds_b']}) {c['b_success']:.1f}%: {signed(c['diff'])}, p {p_text(c['p'])}"
                          for c in r["components"])
        best = next(c for c in r["components"] if c["b"] == r["vs"])
        rows.append([r["contrast"], f"{r['a']} ({r['seeds_a']})", f"{r['a_success']:.1f}", comps,
                     *paired_cells(r), _mde_text(mdes.get(r["contrast"])), str(r["n"]),
                     f"{best['a_wins']} / {best['b_wins']}"])
    missing = [c for c in mdes if c not in {r["contrast"] for r in block[outcome]["rows"]}]
    note = (block["note"] + f" The difference, CI and win counts are against the comparator with the higher pooled "
            f"success; MDE: the smallest difference the design detects with {100 * power['power']:.0f}% power after "
            f"the correction ({POWER}, for {power['n']} tasks). * = significant after Holm.")
    if any(r["n"] != power["n"] for r in block[outcome]["rows"]):
        note += f" The design was sized for {power['n']} tasks but the contrasts ran on another number: check the profile."
    if missing:
        note += f" Not evaluated, so not tested: {', '.join(missing)}."
    return Table(name, title, cols, rows, [SUMMARY, POWER], note=note)


def power_table(art: Artifacts) -> Table:
    """The MDE of each primary contrast against the planned share of tasks the comparator wins."""
    title = "Minimum detectable effect (points) by the share of tasks the comparator wins"
    power = art.get(POWER)
    if isinstance(power, Missing):
        return missing_table("power", title, power)
    names = [r["contrast"] for r in power["contrasts"]]
    cols = ["comparator-wins share q", *names]
    rows = [[f"{100 * c['reverse_share']:.1f}%" + (" (planned)" if c["reverse_share"] == power["reverse_share"] else ""),
             *[_mde_text(c[n]) for n in names]] for c in power["curve"]]
    tasks = ", ".join(f"{s} {n}" for s, n in power["tasks"].items())
    note = (f"{power['n']} paired tasks ({tasks}); {power['family_size']} contrasts, Holm at alpha "
            f"{power['alpha']} (each sized at alpha / {power['family_size']}); power {power['power']:.0%}, an "
            f"intersection-union contrast sized with every component at 1 - (1 - power) / k. Target: at most "
            f"{100 * power['mde_target']:.0f} points at the planned q. Method: {power['method']}")
    return Table("power", title, cols, rows, [POWER], note=note)


def teacher_coverage_table(art: Artifacts) -> Table:
    """Offered and accepted teacher episodes by family: the study's teacher, and the pilot's two candidates."""
    title = "Teacher coverage by task family (accepted / offered training tasks)"
    s, pilot = art.get(TEACHER_SUMMARY), art.get(TEACHER_PILOT)
    if isinstance(s, Missing):
        return missing_table("teacher_coverage", title, s)
    sources = [TEACHER_SUMMARY]
    columns = {f"{s['teacher']['model']} (this study)": (s["offered_by_family"], s["accepted_by_family"])}
    if not isinstance(pilot, Missing):
        sources.append(TEACHER_PILOT)
        for model, r in pilot["teachers"].items():
            columns[f"{model} (pilot)"] = (r["offered_by_family"], r["accepted_by_family"])
    families = sorted({f for offered, _ in columns.values() for f in offered})
    rows = [[f, *[f"{acc.get(f, 0)} / {off.get(f, 0)}" for off, acc in columns.values()]] for f in families]
    rows.append(["all", *[f"{sum(acc.values())} / {sum(off.values())}" for off, acc in columns.values()]])
    note = "A family is covered when at least 2 of its offered tasks are accepted (the pilot's rule)."
    if not isinstance(pilot, Missing):
        offered = sorted({r["offered"] for r in pilot["teachers"].values()})
        note += (f" Pilot (the first {'/'.join(map(str, offered))} training tasks offered, pre-written rule: "
                 f"{pilot['rule']}): selected {pilot['selected']}.")
    return Table("teacher_coverage", title, ["family", *columns], rows, sources, note=note)


def paired_cells(r: dict) -> list[str]:
    """A paired test's difference [CI], raw p and Holm p (starred when significant)."""
    return [f"{signed(r['diff'])} [{signed(r['low'])}, {signed(r['high'])}]", p_text(r["p"]),
            p_text(r["p_holm"]) + (" *" if r["significant"] else "")]


# how the report names the two rulers wherever it shows them side by side
RULER_LABELS = {RULER1: "ruler 1: pre-registered", RULER2: "ruler 2: farm-resistant, post hoc"}


def rulers_table(art: Artifacts) -> Table:
    """Success under ruler 1 and ruler 2 side by side, per configuration and split (and pooled)."""
    title = "Success under both rulers (%): ruler 1, pre-registered, and ruler 2, farm-resistant, post hoc"
    summary = art.get(SUMMARY)
    if isinstance(summary, Missing):
        return missing_table("rulers", title, summary)
    block = summary.get("rulers")
    if not block or not block["rows"]:
        return Table("rulers", title, [], [], [SUMMARY], missing=f"Not available: {SUMMARY_WITHOUT_RULER2}")
    cols = ["config", "split", RULER_LABELS[RULER1], RULER_LABELS[RULER2], "ruler 1 only", "ruler 2 only",
            "episodes"]
    rows = [[r["config"], r["split"], fmt_cell(r[RULER1]), fmt_cell(r[RULER2]), str(r["ruler1_only"]),
             str(r["ruler2_only"]), str(r["episodes"])] for r in block["rows"]]
    return Table("rulers", title, cols, rows, [SUMMARY], note=block["note"])


def leniency_table(art: Artifacts) -> Table:
    title = "Success under both definitions: strict (primary) and the write-up's, with the gap"
    summary = art.get(SUMMARY)
    if isinstance(summary, Missing):
        return missing_table("leniency", title, summary)
    block = summary["leniency"]
    cols = ["config", "split", "strict", "write-up", "gap (points)", "episodes only the write-up counts"]
    rows = [[r["config"], r["split"], fmt_cell(r["strict"]), fmt_cell(r["writeup"]), fmt_cell(r["gap"]),
             str(r["episodes_gap"])] for r in block["rows"]]
    return Table("leniency", title, cols, rows, [SUMMARY], note=block["note"])


# ------------------------------------------------------------------ replay tables (replay_summary.json)
def replay_paired_table(art: Artifacts) -> Table:
    title = "Replay: paired differences in decision pass rate (percentage points, main splits pooled)"
    s = art.get(REPLAY_SUMMARY)
    if isinstance(s, Missing):
        return missing_table("replay_paired", title, s)
    block = s["replay_paired"]
    cols = ["comparison", "diff [95% CI]", "p (sign-flip)", "p_holm", "tasks", "decisions"]
    rows = [[r["comparison"], *paired_cells(r), str(r["n"]), str(r["decisions"])] for r in block["rows"]]
    return Table("replay_paired", title, cols, rows, [REPLAY_SUMMARY],
                 note=replay_paired_note(s["stats"]["n_flips"], block["n_tests"]))


def failure_worst_table(art: Artifacts) -> Table:
    """The worst cells of every configuration's failure map; each opens its decisions on the site."""
    title = "Replay failure map: the worst cells per configuration"
    s = art.get(REPLAY_SUMMARY)
    if isinstance(s, Missing):
        return missing_table("failure_worst", title, s)
    block = s["failure_worst"]
    cols = ["config", "axis", "rank", "cell (row × verdict)", "decisions", "% of row", "failures / decisions"]
    rows, links = [], {}
    for i, r in enumerate(block["rows"]):
        rows.append([r["config"], r["axis"], str(r["rank"]), r["cell"], str(r["count"]), f"{r['share']:.1f}",
                     f"{r['failures']} / {r['decisions']}"])
        links[(i, 3)] = (f"config={quote(r['config'])}&axis={r['axis']}&label={quote(r['label'])}"
                         f"&verdict={r['verdict']}")
    return Table("failure_worst", title, cols, rows, [REPLAY_SUMMARY], note=block["note"], links=links,
                 page=REPLAY_PAGE)


def replay_vs_episode_table(art: Artifacts) -> Table:
    title = "Does replay predict episode success? Correlation across configurations"
    s = art.get(REPLAY_SUMMARY)
    if isinstance(s, Missing):
        return missing_table("replay_vs_episode", title, s)
    block = s["replay_vs_episode"]
    cols = ["split", "configurations", "Pearson r [95% CI]", "Spearman rho (p)", "r with write-up success",
            "replay predicts"]
    rows = []
    for r in block["rows"]:
        pearson = "—" if r["pearson"] is None else (
            f"{r['pearson']:+.2f}" + ("" if r["low"] is None else f" [{r['low']:+.2f}, {r['high']:+.2f}]"))
        rho = "—" if r["spearman"] is None else f"{r['spearman']:+.2f} (p {r['spearman_p']:.2g})"
        rows.append([r["split"], str(r["n_configs"]), pearson, rho,
                     "—" if r["pearson_writeup"] is None else f"{r['pearson_writeup']:+.2f}", r["predicts"]])
    skipped = sorted({f"{c} ({why})" for r in block["rows"] for c, why in r.get("skipped", {}).items()})
    note = block["note"] + (" Left out for want of episodes: " + "; ".join(skipped) + "." if skipped else "")
    return Table("replay_vs_episode", title, cols, rows, [REPLAY_SUMMARY], note=note)


def replay_points_table(art: Artifacts) -> Table:
    title = "Replay pass against episode success, per configuration (%, main splits pooled)"
    s = art.get(REPLAY_SUMMARY)
    if isinstance(s, Missing):
        return missing_table("replay_points", title, s)
    cols = ["config", "replay pass", "episode success (strict)", "episode success (write-up)", "tasks", "decisions"]
    rows = [[p["config"], f"{p['replay_pass']:.1f}", f"{p['episode_strict']:.1f}", f"{p['episode_writeup']:.1f}",
             str(p["tasks"]), str(p["decisions"])]
            for p in s["replay_vs_episode"]["points"] if p["split"] == "all"]
    return Table("replay_points", title, cols, rows, [REPLAY_SUMMARY],
                 note="The points behind the pooled correlation above; the per-split points are in the artifact.")


# ------------------------------------------------------------------ methods tables (data, teacher, runs)
def datasets_table(art: Artifacts) -> Table:
    title = "Datasets (v1): every task pool and training file"
    sources = [DATA_MANIFEST, VARIANTS_LISTING]
    manifest = art.get(sources[0])
    if isinstance(manifest, Missing):
        return missing_table("datasets", title, manifest)
    rows = []
    for path, d in manifest["files"].items():
        if d.get("rows") is None:
            continue  # the audit itself, listed in its own table
        size = f"{d['rows']:,} rows" + (f" / {d['assistant_turns']:,} turns" if d.get("assistant_turns") else "")
        rows.append([path, size, composition(d.get("families")), d["sha256"]])
    variants = art.get(sources[1])
    if not isinstance(variants, Missing):
        for name, v in variants["variants"].items():
            rows.append([f"variants/{v['file']}", f"{v['episodes']:,} episodes / {v['sft_rows']:,} rows",
                         composition(v["families"]), v["sha256"]])
    else:
        sources = sources[:1]
    return Table("datasets", title, ["file", "size", "composition", "sha256"], rows, sources,
                 note=f"Profile: {manifest.get('profile', '—')}. Paths under data/v1/.")


def leakage_table(art: Artifacts) -> Table:
    title = "Leakage audit: each evaluation split against the training pool"
    src = LEAKAGE
    audit = art.get(src)
    if isinstance(audit, Missing):
        return missing_table("leakage", title, audit)
    cols = ["split", "tasks", "request overlap", "dropped for overlap", "shared templates",
            "graph-shape overlap", "held-out tools seen in train"]
    rows = [[split, str(s["tasks"]), str(s["request_overlap"]), str(s["dropped_for_overlap"]),
             str(s["shared_templates"]), f"{100 * s['graph_signature_overlap']:.0f}%",
             fmt_cell(s["held_out_tools_seen_in_train"])] for split, s in audit["splits"].items()]
    return Table("leakage", title, cols, rows, [src],
                 note="Exact request overlap must be 0: candidates whose request text occurs in the training "
                      "or validation pool are dropped while a split is generated.")


def teacher_table(art: Artifacts) -> Table:
    title = "Teacher generation (configuration B's data)"
    src = TEACHER_SUMMARY
    s = art.get(src)
    if isinstance(s, Missing):
        return missing_table("teacher", title, s)
    cols = ["pass", "decoding", "episodes", "accepted", "rate", "accepted by ruler 1", "accepted by ruler 2",
            "accepted by the write-up's definition",
            "rejection reasons", "prompt / generated tokens", "wall"]
    rows = []
    for name, p in s["passes"].items():
        d = p["decoding"]
        dec = "greedy" if not d["temperature"] else f"T {d['temperature']}, top-p {d['top_p']}, seed {d['seed']}"
        rate = "—" if p["acceptance_rate"] is None else f"{100 * p['acceptance_rate']:.1f}%"
        rows.append([name, f"{dec}; {d['max_new_tokens']} tokens/turn", str(p["episodes"]), str(p["accepted"]),
                     rate, str(p.get("accepted_ruler1", "—")), str(p.get("accepted_ruler2", "—")), str(p["accepted_writeup"]), composition(p["rejection_reasons"]) or "none",
                     f"{p['prompt_tokens']:,} / {p['gen_tokens']:,}", f"{p['wall_s']:,.0f} s"])
    t = s["teacher"]
    note = (f"Teacher {t['model']} ({t['upstream']}, {t['license']}) on {t['backend']}, revision {t['revision']}. "
            f"{s['tasks_offered']} training tasks offered; {s['accepted_episodes']} accepted episodes "
            f"({100 * s['accepted_share_of_tasks']:.1f}% of tasks), by family: "
            f"{composition(s['accepted_by_family']) if s['accepted_by_family'] else 'none'}. Cost: {s['cost']}. "
            + ACCEPTANCE_NOTES[s.get("ruler", "ruler2")])
    return Table("teacher", title, cols, rows, [src], note=note)


# what "accepted" means in the teacher table, by the acceptance ruler its summary names
ACCEPTANCE_NOTES = {
    "ruler1": "Accepted: ruler 1's strict success (the pre-registered validator, params accept_teacher.ruler) and "
              "clean; ruler 2's acceptance is stage accept_teacher_ruler2's own output (data/v1/teacher/ruler2).",
    "ruler2": "Accepted: ruler 2's success (ccl/judge/ruler2.py) and clean; ruler 1 (the pre-registered validator) "
              "was the filter before issue 37.",
}


def training_table(art: Artifacts) -> Table:
    title = "Training runs"
    if not art.runs:
        return missing_table("training", title, Missing(f"{TRAIN_RUNS}/<run>/summary.json", "train", "trained adapters"))
    cols = ["run", "variant", "seed", "backend", "steps", "episodes", "supervised tokens", "trainable params",
            "val loss before → after", "last train loss", "minutes", "stability", "adapter sha256"]
    tokens = {name: sum(r.get("targets", 0) for r in art.train_logs.get(name, [])) for name in art.runs}
    rows = [[name, r["variant"], str(r["seed"]), f"{r['backend']} ({r['device']})", str(r["steps"]),
             str(r["episodes_used"]), f"{tokens[name]:,}" if tokens[name] else "—", f"{r['trainable_params']:,}",
             f"{r['val_loss_before']:.3f} → {r['val_loss']:.3f}", f"{r['final_train_loss']:.3f}",
             f"{r['train_minutes']:.1f}", r["stability"], r["adapter_sha256"]] for name, r in art.runs.items()]
    for name, a in art.archived.items():
        rows.append([name, "—", "—", "—", str(a["step"]), "—", "—", "—", "—", "—", "—",
                     f"broken: {a['reason']} (archive/{name})", "—"])
    return Table("training", title, cols, rows, [f"{TRAIN_RUNS}/{n}/summary.json" for n in art.runs]
                 + [f"{ARCHIVE}/{n}/reason.json" for n in art.archived],
                 note="Validation loss: mean assistant-token NLL on the oracle validation episodes. Supervised tokens: "
                      "the assistant tokens that carried loss, summed over the run's steps (train_log.jsonl), so runs "
                      "with the same number of steps can be compared for how much supervision they saw. Archived runs "
                      "broke the stability rule and are never used in comparisons.")


def serving_table(art: Artifacts) -> Table:
    """Student alone, teacher alone and the fallback chain, each through the server."""
    title = "Serving through the OpenAI-compatible endpoint: student, teacher and the fallback chain"
    s = art.get(SERVE_SUMMARY)
    if isinstance(s, Missing):
        return missing_table("serving", title, s)
    cols = ["setup", "model", "strict success", "write-up success", "requests", "fallback rate",
            "mean / p95 latency (s)", "prompt / generated tokens per request", "compute s per episode",
            "answered by", "fallback reasons"]

    def rate(r: dict) -> str:
        if r["rate"] is None:
            return f"— n={r['n']}"
        return f"{100 * r['rate']:.1f} [{100 * r['ci'][0]:.1f}, {100 * r['ci'][1]:.1f}] n={r['n']}"
    rows = [[setup, r["model"], rate(r["success"]), rate(r["success_writeup"]), str(r["requests"]),
             f"{100 * r['fallback_rate']:.1f}%", f"{r['mean_latency_s']:.2f} / {r['p95_latency_s']:.2f}",
             f"{r['prompt_tokens_per_request']:.0f} / {r['completion_tokens_per_request']:.1f}",
             f"{r['compute_s_per_episode']:.2f}", composition(r["answered_by"]),
             composition(r["fallback_reasons"])] for setup, r in ((k, s["setups"][k]) for k in s["order"])]
    return Table("serving", title, cols, rows, [SERVE_SUMMARY],
                 note=f"{s['tasks']} tasks of {s['split']}, greedy, {s['config']['max_new_tokens']} tokens per turn; "
                      f"the student is {s['run']}'s adapter. Each episode is driven by an OpenAI client with the task's "
                      "tools; the runtime executes the returned calls. Latency and compute are the server's generation "
                      "seconds per request (every provider tried), one request at a time on this machine; tokens "
                      "count every provider tried. Rates with Wilson 95% intervals.")


def all_tables(art: Artifacts) -> dict[str, Table]:
    """Every table the report and the site use, by marker name."""
    tables = [
        primary_table(art),
        primary_table(art, "success_writeup"),
        primary_table(art, RULER2),
        rulers_table(art),
        power_table(art),
        teacher_coverage_table(art),
        summary_table(art, "success_by_split", "Workflow success (%, strict) by split"),
        leniency_table(art),
        summary_table(art, "diagnostics", "Diagnostics, main splits pooled"),
        paired_table(art),
        summary_table(art, "post_hoc_unseen_excluding", "Post hoc: eval_unseen without flagged templates"),
        summary_table(art, "catalogue_ablation", "Catalogue-size ablation (success %)"),
        summary_table(art, "by_family", "Success (%) by task family"),
        summary_table(art, "by_depth", "Success (%) by gold workflow depth"),
        summary_table(art, "by_graph_seen", "Success (%) by whether the task's graph occurs in training"),
        summary_table(art, "by_faults", "Success (%) by fault injection"),
        summary_table(art, "pass_k", "pass^k over repeated trials"),
        summary_table(art, "efficiency_by_run", "Efficiency per evaluation run"),
        summary_table(art, "replay_by_split", "Decision-point replay: pass rate (%) by split", source=REPLAY_SUMMARY,
                      page=REPLAY_PAGE),
        summary_table(art, "replay_by_kind", "Replay pass (%) by decision kind", source=REPLAY_SUMMARY),
        summary_table(art, "replay_by_depth", "Replay pass (%) by gold workflow depth", source=REPLAY_SUMMARY),
        replay_paired_table(art),
        failure_worst_table(art),
        replay_vs_episode_table(art),
        summary_table(art, "speed", "Replay against episodes: graded units per second, per run", source=REPLAY_SUMMARY),
        replay_points_table(art),
        datasets_table(art),
        leakage_table(art),
        teacher_table(art),
        training_table(art),
        serving_table(art),
    ]
    return {t.name: t for t in tables}
