"""Numbers the report's prose states, each computed from an artifact.

The prose template reads only this dictionary (rendered with Jinja's StrictUndefined),
so a sentence cannot quote a number no artifact holds.
"""
from __future__ import annotations

from typing import Any

from ..vocabulary import BASELINES, LEARNED, RULER1, RULER2, STUDENT_BASE, STUDENT_FEWSHOT, B, C
from .artifacts import (
    POWER,
    REPLAY_SUMMARY,
    SUMMARY,
    SUMMARY_WITHOUT_PRIMARY,
    TEACHER_SUMMARY,
    VARIANTS_LISTING,
    Artifacts,
    Missing,
)
from .external import bfcl_facts
from .families import p_relation
from .learning import learning_facts
from .run_time import run_time_facts


def _interval(cell: dict | None) -> dict | None:
    if not cell:
        return None
    return {"mean": round(cell["mean"], 1), "low": round(cell["low"], 1), "high": round(cell["high"], 1),
            "n": cell["n"], "text": f"{cell['mean']:.1f}% [{cell['low']:.1f}, {cell['high']:.1f}]"}


def results_facts(summary: dict) -> dict[str, Any]:
    rows = {r["config"]: r for r in summary["success_by_split"]["rows"]}
    splits = [c for c in summary["success_by_split"]["columns"] if c.startswith("eval_")]
    pooled = {c: _interval(r.get("all")) for c, r in rows.items()}
    # the study's trained configurations; the learning arms (exploratory) have a section of their own
    trained = [c for c in summary["configs"] if c not in BASELINES and c not in LEARNED]
    paired = summary["paired"]["rows"]
    sig = [r for r in paired if r["significant"]]

    def wins(a: str, b: str) -> dict:
        rs = [r for r in paired if r["a"] == a and r["b"] == b]
        return {"splits": len(rs), "significant_better": sum(r["significant"] and r["diff"] > 0 for r in rs),
                "significant_worse": sum(r["significant"] and r["diff"] < 0 for r in rs),
                "diffs": {r["split"]: round(r["diff"], 1) for r in rs}}

    lenient = {r["config"]: r for r in summary["leniency"]["rows"] if r["split"] == "all"}
    stats = summary["stats"]
    top = max((pooled[c]["mean"] for c in trained if pooled.get(c)), default=None)
    best = [c for c in trained if pooled.get(c) and pooled[c]["mean"] == top]  # ties are all named
    first = next(iter(rows.values()))
    tasks_per_split = {s: first[s]["n"] for s in splits if first.get(s)}
    n_split = next(iter(tasks_per_split.values()), None)
    return {
        "profile": summary["profile"], "trained": trained, "splits": splits, "best_trained": best,
        "pooled_text": {c: pooled[c]["text"] if pooled.get(c) else "— (not evaluated)"
                        for c in [*BASELINES, *trained]},
        "writeup_text": {c: _interval(r["writeup"])["text"] for c, r in lenient.items() if r["writeup"]},
        "gap_episodes": {c: r["episodes_gap"] for c, r in lenient.items()},
        "seeds": summary["seeds_per_config"], "tasks_per_split": tasks_per_split,
        "tasks_pooled": sum(tasks_per_split.values()), "n_split": n_split,
        # half-width of a 95% normal interval for a 50% success rate on one split, in points
        "halfwidth_50": round(196 * (0.25 / n_split) ** 0.5) if n_split else None,
        "n_tests": summary["paired"]["n_tests"], "n_significant": len(sig),
        "vs_base": {c: wins(c, STUDENT_BASE) for c in trained},
        "vs_fewshot": {c: wins(c, STUDENT_FEWSHOT) for c in trained},
        "c_vs_b": wins(C, B) if {B, C} <= set(trained) else None,
        "n_resamples": stats["n_resamples"], "n_flips": stats["n_flips"], "alpha": stats["alpha"],
        "min_p": round(1 / (stats["n_flips"] + 1), 4),
        "min_p_holm": round(min(1.0, summary["paired"]["n_tests"] / (stats["n_flips"] + 1)), 4),
    }


def primary_facts(summary: dict, power: dict) -> dict[str, Any]:
    """The primary contrasts as the summary states them: estimate, CI, Holm p and pre-registered MDE."""
    mdes = {r["contrast"]: r["mde"] for r in power["contrasts"]}
    rows = [_contrast_fact(r, mdes.get(r["contrast"])) for r in summary["primary"]["success"]["rows"]]
    n = {r["n"] for r in summary["primary"]["success"]["rows"]}
    return {"rows": rows, "splits": summary["primary"]["splits"], "n": n.pop() if len(n) == 1 else power["n"],
            "complete": summary["primary"]["success"]["complete"], "family_size": power["family_size"],
            "n_significant": sum(r["significant"] for r in rows), "all_meet_target": power["all_meet_target"],
            "mde_target": round(100 * power["mde_target"]), "power": round(100 * power["power"]),
            "mde_text": ", ".join(f"{r['contrast']} {100 * r['mde']:.1f}" if r["mde"] is not None else
                                  f"{r['contrast']} none" for r in power["contrasts"]),
            "planned_q": round(100 * power["reverse_share"], 1)}


def _contrast_fact(r: dict, mde: float | None = None) -> dict[str, Any]:
    """One primary contrast row as the prose states it."""
    test = "Holm p" if len(r["components"]) == 1 else "intersection-union Holm p"
    return {"contrast": r["contrast"], "a": r["a"], "vs": r["vs"], "significant": r["significant"],
            "observed_q": " / ".join(f"{100 * c['reverse_share']:.1f}%" for c in r["components"]),
            "text": (f"{r['a']} − {r['vs']} = {r['diff']:+.1f} points [{r['low']:+.1f}, {r['high']:+.1f}], "
                     f"{test} {p_relation(r['p_holm'])}"
                     + ("" if mde is None else f" (pre-registered MDE {100 * mde:.1f} points)"))}


def ruler_facts(summary: dict) -> dict[str, Any] | None:
    """Pooled success under ruler 1 and ruler 2 per configuration, and the primary contrasts under
    ruler 2; None when the summary predates ruler 2."""
    block = summary.get("rulers")
    family = summary.get("primary", {}).get(RULER2)
    if not block or not block["rows"] or not family:
        return None
    pooled = {r["config"]: r for r in block["rows"] if r["split"] == "all"}
    return {"configs": list(pooled),
            "ruler1_text": {c: _interval(r[RULER1])["text"] for c, r in pooled.items()},
            "ruler2_text": {c: _interval(r[RULER2])["text"] for c, r in pooled.items()},
            "ruler1_only": sum(r["ruler1_only"] for r in pooled.values()),
            "ruler2_only": sum(r["ruler2_only"] for r in pooled.values()),
            "contrasts": [_contrast_fact(r) for r in family["rows"]]}


def replay_facts(s: dict) -> dict[str, Any]:
    """The replay paragraph's numbers: decisions, pooled pass per configuration, the pooled correlation."""
    rows = {r["config"]: r for r in s["replay_by_split"]["rows"]}
    pooled = {c: _interval(r.get("all")) for c, r in rows.items()}
    corr = next((r for r in s["replay_vs_episode"]["rows"] if r["split"] == "all"), None)
    tests = s["replay_paired"]
    first = next(iter(rows.values()), {})
    return {"configs": list(rows), "decisions": first.get("decisions"),
            "tasks": first["all"]["n"] if first.get("all") else None,
            "pass_text": {c: p["text"] if p else "—" for c, p in pooled.items()},
            "pearson": None if not corr or corr["pearson"] is None else f"{corr['pearson']:+.2f}",
            "n_configs": corr["n_configs"] if corr else 0, "predicts": corr["predicts"] if corr else "—",
            "n_tests": tests["n_tests"], "n_significant": sum(r["significant"] for r in tests["rows"])}


def _ruler_change(s: dict) -> dict[str, Any] | None:
    """What accepting by ruler 2 instead of ruler 1 changed (None: the summary predates ruler 2)."""
    change = s.get("ruler_change")
    if change is None:
        return None
    return {"ruler1": change["accepted_ruler1"], "ruler2": change["accepted_ruler2"],
            "removed": len(change["removed"]), "added": len(change["added"]),
            "removed_text": ", ".join(f"{n} {t}" for t, n in change["removed_by_template"].items()) or "none"}


def teacher_facts(s: dict) -> dict[str, Any]:
    return {"model": s["teacher"]["model"], "offered": s["tasks_offered"], "accepted": s["accepted_episodes"],
            "ruler": s.get("ruler", "ruler2"),  # summaries written before the ruler was a parameter used ruler 2
            "rulers": _ruler_change(s),
            "accepted_writeup": s["accepted_tasks_writeup"],
            "share": round(100 * s["accepted_share_of_tasks"], 1),
            "absent_families": sorted(set(s["offered_by_family"]) - set(s["accepted_by_family"])),
            "wall_min": round(s["wall_s_total"] / 60, 1)}


def training_facts(art: Artifacts) -> dict[str, Any]:
    runs = art.runs
    return {"runs": sorted(runs), "n_runs": len(runs), "archived": sorted(art.archived),
            "steps": sorted({r["steps"] for r in runs.values()}),
            "minutes_total": round(sum(r["train_minutes"] for r in runs.values()), 1),
            "trainable_params": sorted({r["trainable_params"] for r in runs.values()}),
            "base_model": sorted({r["base_model"] for r in runs.values()})}


def all_facts(art: Artifacts) -> dict[str, Any]:
    """Facts by artifact; an absent artifact gives None, and the template says so."""
    summary = art.get(SUMMARY)
    replay = art.get(REPLAY_SUMMARY)
    teacher = art.get(TEACHER_SUMMARY)
    variants = art.get(VARIANTS_LISTING)
    power = art.get(POWER)
    return {
        "primary": (None if isinstance(summary, Missing) or isinstance(power, Missing) or "primary" not in summary
                    else primary_facts(summary, power)),
        "primary_missing": (power.message() if isinstance(power, Missing) else
                            None if isinstance(summary, Missing) or "primary" in summary else
                            SUMMARY_WITHOUT_PRIMARY),
        "preregistration_sha256": art.preregistration_sha256,
        "results": None if isinstance(summary, Missing) else results_facts(summary),
        "rulers": None if isinstance(summary, Missing) else ruler_facts(summary),
        "replay": None if isinstance(replay, Missing) else replay_facts(replay),
        "teacher": None if isinstance(teacher, Missing) else teacher_facts(teacher),
        "variants": None if isinstance(variants, Missing) else variants,
        "training": training_facts(art),
        "learning": learning_facts(art),
        "bfcl": bfcl_facts(art),
        "run": run_time_facts(art),
        "missing": {p: v.message() for p, v in art.files.items() if isinstance(v, Missing)},
    }
