"""Stage bfcl_score: BFCL's own checker on every configuration's answers (stage bfcl), and the table:
one verdict per configuration and question, and per configuration and category the accuracy with its
Wilson interval, the kinds of turn, and paired comparisons with A_base (ccl.external.bfcl_table); the
accuracies alone in metrics.json, for ``dvc metrics show``. The
stage depends on requirements.lock, so a new bfcl-eval pin re-checks the stored answers; a new release
whose data changed is refused by the sample's release check until bfcl_sample (and so every answering
stage) reruns."""
from __future__ import annotations

from pathlib import Path

from ..artifacts.jsonio import write_json, write_jsonl
from ..errors import InputError
from ..external.bfcl_check import verdict
from ..external.bfcl_inputs import answering_stage, read_answers, read_sample
from ..external.bfcl_questions import Question
from ..external.bfcl_table import config_cells, error_types, paired_rows, scopes

FAMILY = ("exploratory: every configuration but the oracle (right by construction) against A_base in every "
          "scope, on the same questions; Holm-adjusted over all comparisons of this table (one family)")


def _verdicts(name: str, folder: Path, by_id: dict[str, Question], release: str) -> tuple[dict, list[dict]]:
    """One configuration's generation record and its answers' verdicts (``cut``: the answer used the
    whole token cap, so its end may be missing); answers under another release than ``release`` are refused."""
    answers_path = folder / "answers.jsonl.gz"
    gen, rows = read_answers(folder, name, release)
    got, want = sorted(r["id"] for r in rows), sorted(by_id)
    if got != want:
        extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
        raise InputError(f"{answers_path}: answers other questions than the sample (missing {missing[:3]}, "
                         f"extra {extra[:3]}); rerun the {answering_stage(name)} stage")
    cap = gen["max_new_tokens"]
    return gen, [{**verdict(by_id[r["id"]], r["text"]), "cut": r["new_tokens"] >= cap} for r in rows]


def score(names: list[str], sample_path: Path, answers: Path, out: Path) -> dict:
    """Check every named configuration's answers; write ``verdicts.jsonl.gz`` and ``summary.json``."""
    drawn, qs = read_sample(sample_path)
    by_id = {q.id: q for q in qs}
    categories = list(drawn["categories"])
    configs, by_config, verdict_rows = {}, {}, []
    for name in names:
        gen, verdicts = _verdicts(name, answers / name, by_id, drawn["bfcl_eval"])
        by_config[name] = verdicts
        configs[name] = {"model": gen["model"], "backend": gen["backend"], "adapter": gen["adapter"],
                         "wall_s": gen["wall_s"], "cells": config_cells(verdicts, categories),
                         "errors": error_types(verdicts)}
        verdict_rows += [{"config": name, **v} for v in verdicts]
    summary = {"bfcl_eval": drawn["bfcl_eval"], "seed": drawn["seed"],
               "sample": {c: {"n": len(d["ids"]), "total": d["total"]} for c, d in drawn["categories"].items()},
               "scopes": {k: list(v) for k, v in scopes(categories).items()},
               "configs": configs, "paired": paired_rows(by_config, categories), "family": FAMILY}
    write_jsonl(out / "verdicts.jsonl.gz", verdict_rows)
    write_json(out / "summary.json", summary)
    write_json(out / "metrics.json", metrics(summary))
    return summary


def metrics(summary: dict) -> dict:
    """What ``dvc metrics show`` prints: accuracy in percent per configuration and scope (the whole
    table, intervals and comparisons are in summary.json)."""
    return {name: {scope: round(100 * cell["rate"], 1) for scope, cell in c["cells"].items()}
            for name, c in summary["configs"].items()}
