"""The report's tables and facts on the learning arms (issue 40), each from a named artifact.

Exploratory by construction: the arms were designed before any of these numbers existed and nothing
here was pre-registered; the report's section says so.
"""
from __future__ import annotations

from typing import Any

from ..stats.binomial import wilson
from ..vocabulary import LEARNED, RULER2, C
from .artifacts import (
    DAGGER,
    ERR_CLUSTERS,
    ERR_STATS,
    EXPERT_COVERAGE,
    REPEAT_AUDIT,
    REPLAY_SUMMARY,
    SUMMARY,
    TRAIN_RUNS,
    Artifacts,
    Missing,
)
from .external import external_tables
from .families import p_relation
from .ruler3 import study1_ruler3_table
from .run_time import run_time_table
from .tables import Table, all_tables, composition, missing_table, summary_table


def coverage_table(art: Artifacts) -> Table:
    title = "The expert from deviated states: ruler-2 success when it takes over, per task family"
    t = art.get(EXPERT_COVERAGE)
    if isinstance(t, Missing):
        return missing_table("expert_coverage", title, t)
    cols = ["family", "deviated states", "expert succeeds", "provably lost", "lost for", "lost without a reason",
            "deviations that ended the episode"]
    rows = [[name, str(f["states"]), f"{100 * f['recovered_share']:.1f}%" if f["recovered_share"] is not None else "—",
             str(f["lost"]), composition(f["lost_for"]), str(f["lost_unexplained"]), str(f["ended"])]
            for name, f in [*t["by_family"].items(), ("all", t["all"])]]
    return Table("expert_coverage", title, cols, rows, [EXPERT_COVERAGE],
                 note=(f"Every template ({t['templates']}) in its {len(t['namings'])} namings at seeds "
                       f"{', '.join(map(str, t['seeds']))}: each scripted deviation ({', '.join(t['deviations'])}) at "
                       "each of the oracle's decisions, then the expert to the end, judged by ruler 2. A lost state "
                       "holds a failure no continuation can undo (a forbidden, declined, unrequested or repeated call, "
                       "a call before its prerequisite, a wrong side effect, an approval spent on a wrong call)."))


def dagger_table(art: Artifacts) -> Table:
    title = "DAgger iterations: states the student visited and the expert's labels"
    if not art.dagger:
        return missing_table("dagger", title, Missing(f"{DAGGER}/iter<k>/stats.json", "dagger_rollout", "DAgger data"))
    cols = ["iteration", "beta", "tasks", "rollouts succeeding (ruler 2)", "states", "off the expert's path",
            "executed by the expert", "student agrees with the label", "student's turn passes its grade",
            "unrecoverable", "new rows",
            "supervised turns", "training rows", "labels by kind"]
    rows = [[str(k), f"{s['beta']:g}", str(s["tasks"]), f"{s['episodes_ruler2_success']}/{s['tasks']}", str(s["states"]),
             str(s["states_off_expert_path"]), str(s["executed_by_expert"]), str(s["student_agrees"]),
             str(s.get("student_passes", "-")), str(s["unrecoverable"]), str(s["rows"]), str(s["supervised_turns"]), str(s["train_rows"]),
             composition(s["labels_by_kind"])] for k, s in art.dagger.items()]
    return Table("dagger", title, cols, rows, [f"{DAGGER}/iter{k}/stats.json" for k in art.dagger],
                 note=("Each iteration rolls the previous iteration's policy (C for the first) out on fresh training-"
                       "pool tasks; at every turn the expert labels the state, and with probability beta its action is "
                       "executed instead. Training rows keep the student's own turns as history (not trained on) and "
                       "supervise each labelled state once; unrecoverable states are labelled but not supervised. "
                       "A student's turn passes its grade when it ends the episode in ruler-2 success or leaves a "
                       "recoverable state closer to the end (by the expert's count of turns to go) with a call ruler 2 "
                       "gives to a gold step; from an unrecoverable state only an honest stop passes "
                       "(ccl/learn/turn_grade.py). A turn can pass without being the label. "
                       "Training rows: C's rows plus every iteration's so far."))


def dpo_table(art: Artifacts) -> Table:
    title = "DPO runs: preference training from C on C's own mistakes"
    if not art.preference:
        return missing_table("dpo", title, Missing(f"{TRAIN_RUNS}/<run>/summary.json", "dpo_train", "DPO runs"))
    cols = ["run", "from", "steps", "pairs used (too long)", "first → last loss", "reward accuracy, last step",
            "reward margin, last step", "minutes", "adapter sha256"]
    rows = []
    for name, r in art.preference.items():
        log = art.preference_logs.get(name) or [{"loss": float("nan")}]
        rows.append([name, r["init"], str(r["steps"]), f"{r['pairs_used']} ({r['pairs_too_long']})",
                     f"{log[0]['loss']:.3f} → {r['final_loss']:.3f}", f"{r['final_reward_accuracy']:.2f}",
                     f"{r['final_reward_margin']:.3f}", f"{r['train_minutes']:.1f}", r["adapter_sha256"]])
    return Table("dpo", title, cols, rows, [f"{TRAIN_RUNS}/{n}/summary.json" for n in art.preference],
                 note=("TRL's DPO loss (sigmoid, beta from params dpo) starts at ln 2 = 0.693, where the policy equals "
                       "its reference (C). A step's reward accuracy is the share of its pairs whose chosen answer "
                       "gained more log-probability over the reference than the rejected one; the margin is the "
                       "beta-scaled difference. Both describe the training pairs, not success on any task."))


def grpo_table(art: Artifacts) -> Table:
    title = "GRPO runs: episodes in the world from C, one reward design each, with the reward-hacking monitors"
    if not art.rl:
        return missing_table("grpo", title, Missing(f"{TRAIN_RUNS}/<run>/summary.json", "grpo_train", "GRPO runs"))
    cols = ["run", "reward", "steps x tasks x G", "reward, first → last step", "sample success (ruler 2), first → last",
            "groups without spread", "KL to C, last step", "validation success, before → after",
            "validation flagged, before → after (of them passed)", "minutes", "adapter sha256"]
    rows = []
    for name, r in art.rl.items():
        c = art.rl_config.get(name, {}).get("grpo", {})
        kl = "—" if r["kl_last"] is None else f"{r['kl_last']:.4f}"
        rows.append([name, r["reward"], f"{r['steps']} x {c.get('tasks_per_step', '?')} x {c.get('group_size', '?')}",
                     f"{r['reward_first']:.3f} → {r['reward_last']:.3f}",
                     f"{r['success_first']:.3f} → {r['success_last']:.3f}", f"{r['zero_spread_groups_mean']:.2f}", kl,
                     f"{r['val_success_before']:.3f} → {r['val_success_after']:.3f}",
                     f"{r['val_flagged_before']:.3f} → {r['val_flagged_after']:.3f} ({r['val_flagged_and_passed_after']})",
                     f"{r['train_minutes']:.1f}", r["adapter_sha256"]])
    return Table("grpo", title, cols, rows, [f"{TRAIN_RUNS}/{n}/{f}" for n in art.rl for f in ("summary.json", "config.json")],
                 note=("Each step samples G episodes of each of its fresh training-pool tasks at temperature 1; rewards "
                       "are normalised within a task's group, groups without spread are left out of the update, and "
                       "the loss is TRL's (token mean, clip 0.2) with a KL penalty to C (ccl/learn/grpo.py). The reward "
                       "column is the arm's own design (sparse: ruler-2 success; decomposed: ruler 2's weighted "
                       "criteria; dense: the share of turns passing their grade from a recoverable state). Validation: "
                       "greedy episodes on a fixed slice of the validation pool before the first and after the last "
                       "update; flagged: episodes resembling a red-team farm (ccl/learn/hacking.py), in brackets how "
                       "many of those ruler 2 passed (each one a candidate false positive to read)."))


def repeat_table(art: Artifacts) -> Table:
    title = "Post hoc: ruler-2 successes that repeat an answered call, and success without them"
    r = art.get(REPEAT_AUDIT)
    if isinstance(r, Missing):
        return missing_table("repeat_audit", title, r)
    cols = ["configuration", "episodes", "ruler-2 successes", "of them repeating an answered call",
            "ruler-2 success", "success without such repeats"]
    rows = [[name, str(c["episodes"]), str(c["ruler2_successes"]), str(c["successes_repeating_an_answered_call"]),
             f"{c['ruler2_pct']:.1f}%", f"{c['without_repeats_pct']:.1f}%"]
            for name, c in r["configs"].items() if c["episodes"]]
    return Table("repeat_audit", title, cols, rows, [REPEAT_AUDIT],
                 note=("Main splits pooled, one row per evaluated run. A repeat: a call identical in tool and arguments "
                       "to one of an earlier turn whose outcome was not a timeout (after a timeout, asking again is "
                       "right). Ruler 2 fails such a repeat only within one turn. Defined after reading the GRPO "
                       "samples (experiments/grpo_cpu), so post hoc; ruler 2's numbers stand as they are."))


def err_table(art: Artifacts) -> Table:
    title = "The error-driven round's data"
    s = art.get(ERR_STATS)
    if isinstance(s, Missing):
        return missing_table("err_round", title, s)
    cols = ["C's map-half replay pass", "targeted tasks", "templates (tasks)", "skipped for overlap",
            "C rows kept", "training rows", "request overlap with evaluation splits"]
    overlap = sum(v["request_overlap"] for v in s["leakage_audit"].values())
    rows = [[f"{s['map_passed']}/{s['map_decisions']}", str(s["targeted_tasks"]), composition(s["templates"]),
             str(s["skipped_for_overlap"]), str(s["replay_slice"]), str(s["train_rows"]), str(overlap)]]
    return Table("err_round", title, cols, rows, [ERR_STATS],
                 note=("Targets: coordinates (decision kind x gold tool) with enough failed decisions of C on the map "
                       "half of the validation replay set; tasks from the training templates that visit them, half "
                       "of a target's share from templates where a tool C confused it with is right (contrastive "
                       "pairs); seeds no pool uses; overlap counted against every evaluation split."))


def clusters_table(art: Artifacts) -> Table:
    title = "Validation replay set by coordinate: C against each learning arm, map half and held-out half"
    r = art.get(ERR_CLUSTERS)
    if isinstance(r, Missing):
        return missing_table("err_clusters", title, r)
    names = list(r["by_coordinate"])
    cols = ["coordinate", "target", *[f"{n}: map" for n in names], *[f"{n}: held-out" for n in names]]

    def cell(c: dict | None) -> str:
        return "—" if not c or not c["n"] else f"{c['passed_before']} → {c['passed_after']} of {c['n']}"
    coords = sorted({c for n in names for c in r["by_coordinate"][n]})
    rows = [[c, "yes" if c in r["targets"] else "no",
             *[cell(r["by_coordinate"][n].get(c, {}).get("map")) for n in names],
             *[cell(r["by_coordinate"][n].get(c, {}).get("heldout")) for n in names]] for c in coords]
    rows.append(["all", "—", *[f"{r['overall'][r['reference']]['map']['passed']} → {r['overall'][n]['map']['passed']} "
                              f"of {r['overall'][n]['map']['decisions']}" for n in names],
                 *[f"{r['overall'][r['reference']]['heldout']['passed']} → {r['overall'][n]['heldout']['passed']} "
                   f"of {r['overall'][n]['heldout']['decisions']}" for n in names]])
    return Table("err_clusters", title, cols, rows, [ERR_CLUSTERS],
                 note=(f"Decisions passed by {r['reference']} → by the arm, of n. The map half chose the error round's "
                       "targets; the held-out half chose nothing. A target still failing on the held-out half is a "
                       "capacity limit rather than a missing convention."))


def replay_kind_table(art: Artifacts) -> Table:
    """Replay pass by decision kind for C and the learning arms, with Wilson intervals."""
    title = "Decision-point replay by decision kind: C and the learning arms (pass %, 95% Wilson interval, n)"
    r = art.get(REPLAY_SUMMARY)
    if isinstance(r, Missing):
        return missing_table("learned_replay_kind", title, r)
    block = r["replay_by_kind"]
    rows_by = {row["config"]: row for row in block["rows"]}
    configs = [c for c in (C, *LEARNED) if c in rows_by]
    kinds = [k for k in block["columns"] if k != "config"]

    def cell(v: dict | None) -> str:
        if not v or not v["n"]:
            return "—"
        k = round(v["mean"] * v["n"] / 100)
        lo, hi = wilson(k, v["n"])
        return f"{v['mean']:.1f} [{100 * lo:.1f}, {100 * hi:.1f}] n={v['n']}"
    rows = [[kind, *[cell(rows_by[c].get(kind)) for c in configs]] for kind in kinds]
    return Table("learned_replay_kind", title, ["decision kind", *configs], rows, [REPLAY_SUMMARY],
                 note=("Main splits pooled; one seed of each configuration replayed. Wilson intervals treat decisions "
                       "as independent, which they are not within a task, so they are narrower than the task-"
                       "clustered intervals of the replay tables in section 7."))


def learning_tables(art: Artifacts) -> list[Table]:
    summary = art.get(SUMMARY)
    learned = (summary_table(art, "learned", "Learning arms against C and A_base (exploratory)")
               if isinstance(summary, Missing) or "learned" in summary else
               missing_table("learned", "Learning arms against C and A_base (exploratory)",
                             Missing(SUMMARY, "analyze", "rerun: it predates the learning arms' table")))
    return [learned, replay_kind_table(art), coverage_table(art), dagger_table(art), dpo_table(art), grpo_table(art),
            repeat_table(art), err_table(art), clusters_table(art)]


def every_table(art: Artifacts) -> dict[str, Table]:
    """The study's tables (``tables.all_tables``), ruler 3's beside rulers 1 and 2, the learning arms', the external
    benchmark's and the run's time, by marker name."""
    return all_tables(art) | {t.name: t for t in [study1_ruler3_table(art), *learning_tables(art),
                                                  *external_tables(art), run_time_table(art)]}


def learning_facts(art: Artifacts) -> dict[str, Any]:
    """What the section's prose quotes; None where an artifact is missing."""
    summary = art.get(SUMMARY)
    rows = [] if isinstance(summary, Missing) else summary.get("learned", {}).get("rows", [])
    vs_c = {r["a"]: r for r in rows if r["b"] == C and r["ruler"] == RULER2}
    cov = art.get(EXPERT_COVERAGE)
    return {
        "arms": [a for a in LEARNED if a in vs_c],
        "vs_c": {a: {"a": round(r["a_success"], 1), "c": round(r["b_success"], 1), "diff": round(r["diff"], 1),
                     "low": round(r["low"], 1), "high": round(r["high"], 1), "p_holm": p_relation(r["p_holm"], 3),
                     "n": r["n"], "seeds_a": r["seeds_a"], "seeds_c": r["seeds_b"]} for a, r in vs_c.items()},
        "significant_vs_c": sum(r["significant"] for r in vs_c.values()),
        "coverage": None if isinstance(cov, Missing) else cov["all"],
        "iterations": len(art.dagger),
        "grpo": [{"run": n, "steps": r["steps"], "minutes": r["train_minutes"],
                  "val_before": f"{r['val_success_before']:.3f}", "val_after": f"{r['val_success_after']:.3f}",
                  "val_n": len(art.rl_config.get(n, {}).get("val_tasks", [])),
                  "flagged_passed": r["val_flagged_and_passed_after"]} for n, r in art.rl.items()],
    }
