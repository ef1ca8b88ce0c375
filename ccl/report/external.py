"""The report's BFCL section (issue 42): the table and the facts its prose quotes, each from a named
artifact (results/bfcl/summary.json from stage bfcl_score; configs/bfcl_leaderboard.yaml, numbers
copied from the leaderboard's data files with their commit)."""
from __future__ import annotations

from typing import Any

from ..stats.binomial import wilson
from ..vocabulary import CONFIG_ORDER, ORACLE, STUDENT_BASE
from .artifacts import BFCL_LEADERBOARD, BFCL_SUMMARY, Artifacts, Missing
from .tables import Table, missing_table

# BFCL's category names as the table heads them, in BFCL's order; "ast" pools the four call categories.
HEADS = {"simple_python": "simple", "multiple": "multiple", "parallel": "parallel",
         "parallel_multiple": "parallel multiple", "ast": "the four pooled", "irrelevance": "irrelevance"}


def _order(names: list[str]) -> list[str]:
    rank = {n: i for i, n in enumerate(CONFIG_ORDER)}
    return sorted(names, key=lambda n: (rank.get(n.rsplit("_s", 1)[0], len(rank)), n))


def _rate(cell: dict) -> str:
    return f"{100 * cell['rate']:.0f}% [{100 * cell['low']:.0f}, {100 * cell['high']:.0f}]"


def bfcl_table(art: Artifacts) -> Table:
    title = "BFCL (non-live, Python): accuracy by BFCL's own checker, 95% Wilson interval"
    s = art.get(BFCL_SUMMARY)
    if isinstance(s, Missing):
        return missing_table("bfcl", title, s)
    scopes = [k for k in HEADS if k in s["scopes"]]
    cols = ["configuration", *(HEADS[k] for k in scopes), "AST turns: calls / answers / unparseable / cut",
            "seconds"]
    rows = []
    for name in _order(list(s["configs"])):
        c = s["configs"][name]
        ast = c["cells"].get("ast")
        kinds = "—" if ast is None else f"{ast['calls']} / {ast['final']} / {ast['unparseable']} / {ast['cut']}"
        rows.append([name, *(_rate(c["cells"][k]) for k in scopes), kinds, f"{c['wall_s']:.0f}"])
    n = ", ".join(f"{HEADS[k]} {v['n']} of {v['total']}" for k, v in s["sample"].items())
    return Table("bfcl", title, cols, rows, [BFCL_SUMMARY],
                 note=(f"bfcl-eval {s['bfcl_eval']}; the same questions for every configuration, drawn with seed "
                       f"{s['seed']}: {n}. Irrelevance pays a turn that calls nothing, so a model that never calls "
                       "scores 100% there: read it beside the AST turns that called. Cut: the turn used the whole "
                       "token cap. Seconds: the bfcl stage's generation time (load excluded)."))


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
    title = "Published BFCL numbers for the nearest listed model (context, not the same model)"
    ref = art.get(BFCL_LEADERBOARD)
    if isinstance(ref, Missing):
        return missing_table("bfcl_leaderboard", title, ref)
    cats = ["simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance"]
    rows = [[r["model"], r["nearest_to"], *(f"{r[c]:.1f}%" for c in cats)] for r in ref["rows"]]
    src = ref["source"]
    return Table("bfcl_leaderboard", title, ["model", "nearest to our", *(HEADS[c] for c in cats)], rows,
                 [BFCL_LEADERBOARD],
                 note=(f"{src['leaderboard']}; {src['repository']} branch {src['branch']} commit {src['commit']}, "
                       f"{', '.join(src['files'])}; {src['note']}. Every question of each category, BFCL's own "
                       "prompt (FC: the model's chat template with tools; Prompt: BFCL's system prompt asking for "
                       "Python calls), an older checker; ours: the study's JSON-action prompt, a sample, "
                       "bfcl-eval's current checker."))


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
        "release": s["bfcl_eval"], "per_category": {k: v["n"] for k, v in s["sample"].items()},
        "ast_n": ast[best]["n"] if best else 0,
        "oracle_ast": None if ORACLE not in ast else round(100 * ast[ORACLE]["rate"], 1),
        "base_ast": None if STUDENT_BASE not in ast else round(100 * ast[STUDENT_BASE]["rate"], 1),
        "base_calls": None if STUDENT_BASE not in ast else ast[STUDENT_BASE]["calls"],
        "best": best, "best_ast": None if best is None else round(100 * ast[best]["rate"], 1),
        "max_half_ast": None if best is None else _widest(ast[best]["n"]),
        "max_half_category": _widest(min(v["n"] for v in s["sample"].values())),
        "significant": sorted({r["config"] for r in s["paired"] if r["scope"] == "ast" and r["p_holm"] < 0.05}),
        "minutes": round(sum(c["wall_s"] for c in s["configs"].values()) / 60, 1),
    }
