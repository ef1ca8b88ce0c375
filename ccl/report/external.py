"""The report's BFCL section (issue 42): the table and the facts its prose quotes, each from a named
artifact (results/bfcl/summary.json from stage bfcl_score; configs/bfcl_leaderboard.yaml, numbers
copied from the leaderboard's data files with their commit)."""
from __future__ import annotations

from typing import Any

from ..stats.binomial import wilson
from ..vocabulary import CONFIG_ORDER, ORACLE, STUDENT_BASE, parse_run_name
from .artifacts import BFCL_LEADERBOARD, BFCL_SUMMARY, Artifacts, Missing
from .tables import Table, missing_table

FLAGS = ("unread_json", "arguments_not_object")  # the flags of ccl.external.bfcl_check, as bfcl_score counts them

# BFCL's category names as the table heads them, in BFCL's order; "ast" pools the four call categories.
HEADS = {"simple_python": "simple", "multiple": "multiple", "parallel": "parallel",
         "parallel_multiple": "parallel multiple", "ast": "the four pooled", "irrelevance": "irrelevance"}


def _order(names: list[str]) -> list[str]:
    """The write-up's order of configurations, seeds in order within one."""
    rank = {n: i for i, n in enumerate(CONFIG_ORDER)}
    return sorted(names, key=lambda n: (rank.get(parse_run_name(n)[0], len(rank)), n))


def _rate(cell: dict) -> str:
    return f"{100 * cell['rate']:.0f}% [{100 * cell['low']:.0f}, {100 * cell['high']:.0f}]"


def bfcl_table(art: Artifacts) -> Table:
    title = "BFCL (non-live, Python): accuracy by BFCL's own checker, 95% Wilson interval"
    s = art.get(BFCL_SUMMARY)
    if isinstance(s, Missing):
        return missing_table("bfcl", title, s)
    scopes = [k for k in HEADS if k in s["scopes"]]
    turn_scopes = [k for k in ("ast", "irrelevance") if k in scopes]
    cols = ["configuration", *(HEADS[k] for k in scopes),
            *(f"{HEADS[k]}: calls / answers / unparseable / cut" for k in turn_scopes),
            "all: calls left unread / arguments not an object", "seconds"]
    rows = []
    for name in _order(list(s["configs"])):
        cells = s["configs"][name]["cells"]
        rows.append([name, *(_rate(cells[k]) for k in scopes), *(_kinds(cells[k]) for k in turn_scopes),
                     " / ".join(str(sum(cells[k][f] for k in s["scopes"] if k != "ast")) for f in FLAGS),
                     f"{s['configs'][name]['wall_s']:.0f}"])
    n = ", ".join(f"{HEADS[k]} {s['sample'][k]['n']} of {s['sample'][k]['total']}" for k in HEADS if k in s["sample"])
    return Table("bfcl", title, cols, rows, [BFCL_SUMMARY],
                 note=(f"bfcl-eval {s['bfcl_eval']}; the same questions for every configuration, drawn with seed "
                       f"{s['seed']}: {n}. The four pooled: every call question counted once. Irrelevance pays a "
                       "turn that calls nothing, so a model that never calls scores 100% there: read it beside how "
                       "its turns went. Answers: a final answer, no call; cut: the turn used the whole token cap. "
                       "Calls left unread: call-like JSON after the turn's first JSON value, which the study's action "
                       "reading ignores; arguments not an object: a call whose arguments are a JSON string, which "
                       "BFCL does not decode. Seconds: answering only (loading the model excluded)."))


def _kinds(cell: dict) -> str:
    return f"{cell['calls']} / {cell['final']} / {cell['unparseable']} / {cell['cut']}"


def bfcl_paired_table(art: Artifacts) -> Table:
    title = "BFCL: each configuration against A_base on the same questions (exploratory)"
    s = art.get(BFCL_SUMMARY)
    if isinstance(s, Missing):
        return missing_table("bfcl_paired", title, s)
    cols = ["configuration", "scope", "difference (points) [95% CI]", "exact p", "Holm p", "questions",
            "right only here / only A_base"]
    rows = [[r["config"], HEADS.get(r["scope"], r["scope"]), f"{r['diff']:+.1f} [{r['low']:.1f}, {r['high']:.1f}]",
             f"{r['p']:.3g}", f"{r['p_holm']:.3g}", str(r["n"]), f"{r['wins']} / {r['losses']}"]
            for r in s["paired"] if r["scope"] in ("ast", "irrelevance")]
    return Table("bfcl_paired", title, cols, rows, [BFCL_SUMMARY],
                 note=(f"{s['family'][0].upper()}{s['family'][1:]}; the per-category rows are in {BFCL_SUMMARY}. "
                       "Exact p: McNemar's exact test (the sign-flip test on 0/1 outcomes); CI: task bootstrap."))


def leaderboard_table(art: Artifacts) -> Table:
    title = "Published BFCL numbers for the nearest listed model, Qwen2.5-0.5B-Instruct (context)"
    ref = art.get(BFCL_LEADERBOARD)
    if isinstance(ref, Missing):
        return missing_table("bfcl_leaderboard", title, ref)
    cats = ["simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance"]
    rows = [[r["model"], r["nearest_to"], *(f"{r[c]:.2f}%" for c in cats)] for r in ref["rows"]]  # as published
    src = ref["source"]
    return Table("bfcl_leaderboard", title, ["model", "relation to our models", *(HEADS[c] for c in cats)], rows,
                 [BFCL_LEADERBOARD],
                 note=(f"{src['leaderboard']}; {src['repository']} branch {src['branch']} commit {src['commit']}, "
                       f"{', '.join(src['files'])}; {src['note']}. What differs from ours: every question of each "
                       "category rather than a sample; BFCL's own prompt (FC: the model's chat template with tools; "
                       "Prompt: BFCL's system prompt asking for Python calls) rather than the study's JSON-action "
                       "prompt, whose tool listing also leaves out nested object properties, defaults and the allowed values "
                       "of array items; an "
                       "older checker and data release than the pinned bfcl-eval."))


def external_tables(art: Artifacts) -> list[Table]:
    return [bfcl_table(art), bfcl_paired_table(art), leaderboard_table(art)]


def _widest(n: int) -> float:
    """Half the width of the widest 95% Wilson interval over ``n`` questions (at a rate of 50%), in points."""
    low, high = wilson(n // 2, n)
    return round(50 * (high - low), 1)


def bfcl_facts(art: Artifacts) -> dict[str, Any] | None:
    """What the section's prose quotes; None where the table is missing."""
    s = art.get(BFCL_SUMMARY)
    if isinstance(s, Missing):
        return None
    ast = {n: c["cells"]["ast"] for n, c in s["configs"].items() if "ast" in c["cells"]}
    best = max((n for n in ast if n not in (ORACLE,)), key=lambda n: ast[n]["rate"], default=None)
    return {
        "release": s["bfcl_eval"],
        "per_category": {HEADS[k]: s["sample"][k]["n"] for k in HEADS if k in s["sample"]},
        "ast_n": ast[best]["n"] if best else 0,
        "oracle_ast": None if ORACLE not in ast else round(100 * ast[ORACLE]["rate"], 1),
        "base_ast": None if STUDENT_BASE not in ast else round(100 * ast[STUDENT_BASE]["rate"], 1),
        "base_calls": None if STUDENT_BASE not in ast else ast[STUDENT_BASE]["calls"],
        "best": best, "best_ast": None if best is None else round(100 * ast[best]["rate"], 1),
        "max_half_ast": None if best is None else _widest(ast[best]["n"]),
        "min_per_category": min(v["n"] for v in s["sample"].values()),
        "max_half_category": _widest(min(v["n"] for v in s["sample"].values())),
        "equal_categories": len({v["n"] for k, v in s["sample"].items() if k != "irrelevance"}) == 1,
        "significant": sorted({r["config"] for r in s["paired"] if r["scope"] == "ast" and r["p_holm"] < 0.05}),
        "minutes": round(sum(c["wall_s"] for c in s["configs"].values()) / 60, 1),
    }
