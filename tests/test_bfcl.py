"""BFCL through the study's prompt path and BFCL's own checker (ccl.external): the conversion of its
functions, the prompt, the reading of a turn, the oracle, the draw, the table and the stages.

The questions are bfcl-eval's own data files (installed from the lock); nothing is downloaded."""
from __future__ import annotations

import json

import pytest
from subproc import run_py

from ccl.errors import InputError
from ccl.external import bfcl_lib
from ccl.external.bfcl import answer, prompt
from ccl.external.bfcl_check import bfcl_result, verdict
from ccl.external.bfcl_config import CATEGORIES, BfclConfig
from ccl.external.bfcl_questions import draw, gold_text, questions
from ccl.external.bfcl_table import config_cells, paired_rows
from ccl.stats.binomial import wilson


def question(category: str, qid: str):
    drawn = {"bfcl_eval": bfcl_lib.version(), "seed": 0, "per_category": 1,
             "categories": {category: {"total": 1, "ids": [qid]}}}
    return questions(drawn)[0]


def calls(*pairs) -> str:
    return json.dumps({"calls": [{"tool": t, "args": a} for t, a in pairs]})


# ---------------------------------------------------------------- what the model is shown
def test_functions_become_openai_tools_as_bfcls_openai_handler_sends_them():
    fn = [{"name": "geo.distance", "description": "Distance.",
           "parameters": {"type": "dict", "required": ["km"],
                          "properties": {"km": {"type": "float", "description": "Kilometres."},
                                         "stops": {"type": "tuple", "items": {"type": "string"}, "description": "S."}}}}]
    (tool,) = bfcl_lib.openai_tools(fn)
    assert tool["type"] == "function"
    f = tool["function"]
    assert f["name"] == "geo_distance"  # dots become underscores, as OpenAI-style APIs require
    assert f["parameters"]["type"] == "object"
    assert f["parameters"]["properties"]["km"] == {"type": "number", "format": "float",
                                                   "description": "Kilometres. This is a float type value."}
    assert f["parameters"]["properties"]["stops"]["type"] == "array"
    assert fn[0]["name"] == "geo.distance"  # BFCL's entry itself is left as it was


def test_the_prompt_is_the_servers_with_the_tools_listed_in_the_studys_notation():
    q = question("simple_python", "simple_python_1")  # math.factorial(number: integer)
    turn = prompt(q)
    system, user = turn.messages
    assert system["role"] == "system" and user == {"role": "user",
                                                   "content": "Calculate the factorial of 5 using math functions."}
    assert system["content"].startswith("You are an assistant that completes the user's request by calling tools.")
    assert system["content"].endswith(
        "Tools:\n- math_factorial(number: integer (The number for which factorial needs to be calculated.)): "
        "Calculate the factorial of a given number. Note that the provided function is in Python 3 syntax.")
    assert turn.task == {"id": "simple_python_1"} and turn.turns == []
    fewshot = prompt(q, fewshot=True).messages[0]["content"]
    assert "Example 1" in fewshot and "Example 1" not in system["content"]


# ---------------------------------------------------------------- reading a turn and checking it
def test_a_call_under_the_shown_name_passes_and_the_dotted_name_does_not():
    q = question("simple_python", "simple_python_1")
    assert verdict(q, calls(("math_factorial", {"number": 5})))["valid"]
    wrong = verdict(q, calls(("math.factorial", {"number": 5})))
    assert not wrong["valid"] and wrong["kind"] == "calls"


def test_optional_parameters_may_be_given_or_left_out_and_values_are_checked():
    q = question("simple_python", "simple_python_0")  # base 10, height 5, unit 'units' or absent
    assert verdict(q, calls(("calculate_triangle_area", {"base": 10, "height": 5})))["valid"]
    assert verdict(q, calls(("calculate_triangle_area", {"base": 10, "height": 5, "unit": "units"})))["valid"]
    v = verdict(q, calls(("calculate_triangle_area", {"base": 10, "height": 6})))
    assert not v["valid"] and v["error_type"] == "value_error:others"
    v = verdict(q, calls(("calculate_triangle_area", {"base": 10})))
    assert not v["valid"] and v["error_type"] == "simple_function_checker:missing_required"


def test_parallel_calls_match_in_any_order_and_all_must_be_there():
    q = question("parallel", "parallel_0")  # spotify.play twice: Taylor Swift 20, Maroon 5 15
    a, b = ("spotify_play", {"artist": "Taylor Swift", "duration": 20}), ("spotify_play", {"artist": "Maroon 5", "duration": 15})
    assert verdict(q, calls(a, b))["valid"] and verdict(q, calls(b, a))["valid"]
    assert not verdict(q, calls(a))["valid"]


def test_a_final_answer_or_unparseable_text_is_no_call():
    ast_q, irrelevant = question("simple_python", "simple_python_1"), question("irrelevance", "irrelevance_0")
    final = json.dumps({"final": "I cannot do that.", "status": "failed"})
    assert bfcl_result(final) == ("I cannot do that.", "final")
    assert bfcl_result("the factorial is 120") == ("the factorial is 120", "unparseable")
    for text, kind in ((final, "final"), ("the factorial is 120", "unparseable")):
        v = verdict(ast_q, text)
        assert not v["valid"] and v["kind"] == kind and v["error_type"] == "ast_decoder:decoder_failed"
        assert verdict(irrelevant, text) == {"id": "irrelevance_0", "category": "irrelevance", "valid": True,
                                             "kind": kind, "error_type": None, "unread_json": False,
                                             "arguments_not_object": False}
    v = verdict(irrelevant, calls(("determine_body_mass_index", {"weight": 70.0, "height": 1.8})))
    assert not v["valid"] and v["error_type"] == "irrelevance_error:decoder_success"


def test_calls_reach_bfcl_as_its_openai_handler_records_them():
    result, kind = bfcl_result(calls(("a_b", {"x": 1.5, "y": [1, 2]}), ("c", {})))
    assert kind == "calls"
    assert [list(r) for r in result] == [["a_b"], ["c"]]
    assert json.loads(result[0]["a_b"]) == {"x": 1.5, "y": [1, 2]} and json.loads(result[1]["c"]) == {}


def test_what_the_studys_reading_does_not_pass_on_is_flagged():
    q = question("parallel", "parallel_0")
    qwen = ('<tool_call>{"name": "spotify_play", "arguments": {"artist": "Taylor Swift", "duration": 20}}</tool_call>\n'
            '<tool_call>{"name": "spotify_play", "arguments": {"artist": "Maroon 5", "duration": 15}}</tool_call>')
    r = verdict(q, qwen)  # only the first block is the study's action: one call of two
    assert not r["valid"] and r["unread_json"] and not r["arguments_not_object"]
    as_string = json.dumps({"name": "math_factorial", "arguments": json.dumps({"number": 5})})
    r = verdict(question("simple_python", "simple_python_1"), as_string)
    assert not r["valid"] and r["arguments_not_object"] and not r["unread_json"]
    r = verdict(q, calls(("spotify_play", {"artist": "Taylor Swift", "duration": 20}),
                         ("spotify_play", {"artist": "Maroon 5", "duration": 15})) + ' then ["Maroon 5", 15]')
    assert r["valid"] and not r["unread_json"] and not r["arguments_not_object"]  # a data literal is no call


# ---------------------------------------------------------------- the oracle: the path loses no correct call
def test_the_oracle_scores_every_question_of_every_category():
    qs = questions(draw(BfclConfig()))
    assert len(qs) == 400 + 200 + 200 + 200 + 240
    failed = [(q.id, v["error_type"]) for q in qs if not (v := verdict(q, gold_text(q)))["valid"]]
    assert failed == []


def test_the_oracle_leaves_out_optional_parameters_and_uses_the_shown_names():
    q = question("simple_python", "simple_python_0")
    assert json.loads(gold_text(q)) == {"calls": [{"tool": "calculate_triangle_area", "args": {"base": 10, "height": 5}}]}
    assert json.loads(gold_text(question("simple_python", "simple_python_1")))["calls"][0]["tool"] == "math_factorial"
    assert json.loads(gold_text(question("irrelevance", "irrelevance_0")))["status"] == "failed"


class GoldPolicy:
    """A scripted policy that answers each question with the oracle's text, through the rollout
    engine's lock-step path (it has no continuous decoder)."""

    def __init__(self, qs):
        self.texts = {q.id: gold_text(q) for q in qs}
        self.seen = []

    def act_batch(self, eps, memories):
        self.seen += [ep.messages for ep in eps]
        return [self.texts[ep.task["id"]] for ep in eps]


def test_a_scripted_gold_policy_scores_100_percent_through_prompt_engine_and_checker():
    qs = questions(draw(BfclConfig(per_category=6, seed=3)))
    policy = GoldPolicy(qs)
    rows = answer(policy, qs, batch_size=4)
    assert [r["id"] for r in rows] == [q.id for q in qs] and len(policy.seen) == 30
    for q, messages in zip(qs, policy.seen):  # every name the oracle calls is listed to the model
        for call in json.loads(gold_text(q)).get("calls", []):
            assert f"\n- {call['tool']}(" in messages[0]["content"], (q.id, call["tool"])
    by_id = {q.id: q for q in qs}
    assert all(verdict(by_id[r["id"]], r["text"])["valid"] for r in rows)


# ---------------------------------------------------------------- the draw
def test_the_draw_is_seeded_in_file_order_and_the_same_for_everyone():
    a, b = draw(BfclConfig(per_category=5, seed=1)), draw(BfclConfig(per_category=5, seed=1))
    assert a == b and list(a["categories"]) == list(CATEGORIES)
    ids = a["categories"]["multiple"]["ids"]
    assert len(ids) == 5 and ids == sorted(ids, key=lambda i: int(i.rsplit("_", 1)[1]))
    assert draw(BfclConfig(per_category=5, seed=2))["categories"]["multiple"]["ids"] != ids
    assert a["categories"]["irrelevance"]["total"] == 240
    assert len(draw(BfclConfig(categories=("parallel",), per_category=999))["categories"]["parallel"]["ids"]) == 200


def test_a_sample_from_another_release_or_with_an_unknown_id_is_refused():
    drawn = draw(BfclConfig(categories=("parallel",), per_category=2))
    with pytest.raises(InputError, match="drawn from bfcl-eval 1999.1.1.*rerun stage bfcl_sample"):
        questions({**drawn, "bfcl_eval": "1999.1.1"}, "sample.json")
    drawn["categories"]["parallel"]["ids"].append("parallel_9999")
    with pytest.raises(InputError, match="sample.json: parallel has no question 'parallel_9999'"):
        questions(drawn, "sample.json")


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="not supported"):
        BfclConfig(categories=("simple_java",))
    with pytest.raises(ValueError, match="per_category"):
        BfclConfig(per_category=0)


# ---------------------------------------------------------------- the table
def v(qid, category, valid, kind="calls", cut=False, unread=False):
    return {"id": qid, "category": category, "valid": valid, "kind": kind, "error_type": None, "cut": cut,
            "unread_json": unread, "arguments_not_object": False}


def test_cells_count_turn_kinds_and_pool_the_call_categories():
    verdicts = [v("s1", "simple_python", True), v("s2", "simple_python", False, "final"),
                v("m1", "multiple", False, "unparseable", cut=True), v("m2", "multiple", True, unread=True),
                v("m3", "multiple", True), v("i1", "irrelevance", True, "final")]
    cells = config_cells(verdicts, ["simple_python", "multiple", "irrelevance"])
    assert set(cells) == {"simple_python", "multiple", "irrelevance", "ast"}
    ast = cells["ast"]
    assert (ast["n"], ast["correct"], ast["rate"]) == (5, 3, 0.6)
    assert ast["category_mean"] == pytest.approx((1 / 2 + 2 / 3) / 2)  # BFCL's unweighted mean of the categories
    assert (ast["calls"], ast["final"], ast["unparseable"], ast["cut"], ast["unread_json"]) == (3, 1, 1, 1, 1)
    assert (ast["low"], ast["high"]) == pytest.approx(wilson(3, 5))
    assert cells["irrelevance"]["rate"] == 1.0


def test_paired_rows_compare_with_a_base_on_the_same_questions():
    cats = ["simple_python", "irrelevance"]
    base = [v(f"s{i}", "simple_python", i < 2) for i in range(6)] + [v("i0", "irrelevance", True)]  # 2 of 6
    other = [v(f"s{i}", "simple_python", i >= 1) for i in range(6)] + [v("i0", "irrelevance", False)]  # 5 of 6
    oracle = [dict(r, valid=True) for r in base]
    rows = paired_rows({"A_base": base, "C_s0": other, "oracle": oracle}, cats)
    assert [(r["config"], r["scope"]) for r in rows] == [("C_s0", "simple_python"), ("C_s0", "irrelevance"),
                                                         ("C_s0", "ast")]  # the oracle is no comparison
    simple, irrelevance, _ = rows
    assert simple["diff"] == pytest.approx(50.0) and irrelevance["diff"] == pytest.approx(-100.0)
    assert (simple["wins"], simple["losses"], simple["n"]) == (4, 1, 6)
    # McNemar's exact test on 5 discordant pairs split 4:1: P(|X - 2.5| >= 1.5) for X ~ Bin(5, 1/2) = 12/32;
    # on one discordant pair: p = 1
    assert simple["p"] == pytest.approx(12 / 32) and irrelevance["p"] == pytest.approx(1.0)
    # Holm over the three: the smallest p (12/32, twice) times 3, then the running maximum, capped at 1
    assert [r["p_holm"] for r in rows] == pytest.approx([min(1.0, 3 * 12 / 32), 1.0, min(1.0, 3 * 12 / 32)])
    with pytest.raises(ValueError, match="other questions"):
        paired_rows({"A_base": base, "C_s0": other[:5]}, cats)


# ---------------------------------------------------------------- the stages
def test_stages_write_the_sample_answers_and_table(tmp_path):
    sample, answers, out = tmp_path / "sample.json", tmp_path / "answers", tmp_path / "table"
    run_py("-m", "scripts.bfcl_sample", "--profile", "smoke", "--out", str(sample))
    drawn = json.loads(sample.read_text())
    assert {c: len(d["ids"]) for c, d in drawn["categories"].items()} == {c: 2 for c in CATEGORIES}
    for name in ("oracle",):
        run_py("-m", "scripts.bfcl", "--profile", "smoke", "--name", name, "--sample", str(sample), "--out", str(answers))
    r = run_py("-m", "scripts.bfcl_score", "--names", "oracle", "--sample", str(sample), "--answers", str(answers),
               "--out", str(out))
    summary = json.loads((out / "summary.json").read_text())
    assert all(cell["rate"] == 1.0 for cell in summary["configs"]["oracle"]["cells"].values())
    assert "bfcl_score oracle:" in r.stdout and summary["bfcl_eval"] == bfcl_lib.version()
    assert json.loads((out / "metrics.json").read_text()) == {"oracle": {s: 100.0 for s in [*CATEGORIES, "ast"]}}
    bad = run_py("-m", "scripts.bfcl_score", "--names", "A_base", "--sample", str(sample), "--answers", str(answers),
                 "--out", str(out), ok=False)
    assert bad.returncode == 2 and "missing; run the bfcl@A_base stage first" in bad.stderr


def test_the_reports_facts_and_table_read_the_summary(tmp_path):
    from ccl.report.artifacts import load_artifacts
    from ccl.report.external import bfcl_facts, bfcl_table

    cats = ["simple_python", "multiple", "irrelevance"]
    sizes = {"simple_python": 40, "multiple": 20, "irrelevance": 20}  # unequal, as with every question

    def verdicts(right: int) -> list[dict]:  # the first `right` questions of each category right
        return [v(f"{c}_{i}", c, i < right) for c in cats for i in range(sizes[c])]

    by = {"A_base": verdicts(0), "C_s0": verdicts(18), "oracle": verdicts(40)}
    summary = {"bfcl_eval": "x", "seed": 0, "sample": {c: {"n": n, "total": 2 * n} for c, n in sizes.items()},
               "scopes": {"simple_python": ["simple_python"], "multiple": ["multiple"], "irrelevance": ["irrelevance"],
                          "ast": ["simple_python", "multiple"]},
               "configs": {n: {"model": "m", "backend": "b", "adapter": None, "wall_s": 60.0,
                               "cells": config_cells(vs, cats), "errors": {}} for n, vs in by.items()},
               "paired": paired_rows(by, cats), "family": "exploratory"}
    (tmp_path / "results" / "bfcl").mkdir(parents=True)
    (tmp_path / "results" / "bfcl" / "summary.json").write_text(json.dumps(summary))
    art = load_artifacts(tmp_path)
    facts = bfcl_facts(art)
    assert facts["significant"] == ["C_s0"]  # 36 of 60 against 0: never the oracle
    assert (facts["best"], facts["best_ast"], facts["oracle_ast"]) == ("C_s0", 60.0, 100.0)
    assert (facts["min_per_category"], facts["equal_categories"], facts["minutes"]) == (20, False, 3.0)
    assert facts["max_half_category"] == pytest.approx(50 * (wilson(10, 20)[1] - wilson(10, 20)[0]), abs=0.05)
    table = bfcl_table(art)
    assert [r[0] for r in table.rows] == ["A_base", "C_s0", "oracle"]
    # Wilson, 18 of 40: centre (18 + 1.92) / 43.84 = .454, half-width 1.96 * sqrt(18 * 22 / 40 + .96) / 43.84 = .147
    assert table.rows[1][1:3] == ["45% [31, 60]", "90% [70, 97]"]
