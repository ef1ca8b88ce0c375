"""The oracle solves every template at every seed, cleanly, under both success definitions
(the validator's ceiling)."""
import pytest

from ccl.episode.oracle import OraclePolicy
from ccl.episode.runtime import run_episode
from ccl.judge.validate import validate
from ccl.world.tasks import TEMPLATES, generate_task

N_SEEDS = 50


def pool_of(name: str) -> str:
    return "train" if TEMPLATES[name].split == "train" else "eval"


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_oracle_solves_template_at_50_seeds(name):
    for seed in range(N_SEEDS):
        for rename in (None, "train", "heldout"):
            task = generate_task(name, seed, pool_of(name), rename=rename)
            v = validate(task, run_episode(task, OraclePolicy()).record())
            assert v["success"] and v["success_writeup"], (task["id"], v["reasons"], v["strict_reasons"])
            assert v["tool_selection"] == 1.0 and v["arg_correct"] in (None, 1.0)
            assert v["dependency_safe"] and v["strict_schema"]
            assert v["unnecessary_calls"] == v["invalid_args"] == v["hallucinated_tools"] == 0
            assert v["parallel_ok"] in (None, True)


def test_template_table_matches_the_write_up():
    """44 templates: 24 train, 16 ood, 4 unseen, with the write-up's family counts."""
    splits = {s: sorted(n for n, t in TEMPLATES.items() if t.split == s) for s in ("train", "ood", "unseen")}
    assert (len(TEMPLATES), len(splits["train"]), len(splits["ood"]), len(splits["unseen"])) == (44, 24, 16, 4)
    train_families = {}
    for n in splits["train"]:
        train_families[TEMPLATES[n].family] = train_families.get(TEMPLATES[n].family, 0) + 1
    # paper train pool: 125 tasks per template -> select 750, chain 750, recovery 375, ...
    assert train_families == {"select": 6, "args": 2, "chain": 6, "parallel": 2, "recovery": 3,
                              "permission": 2, "approval": 1, "termination": 2}
    assert splits["unseen"] == ["un_stock_check", "un_stock_parallel", "un_stock_reserve", "un_timezone"]
    assert (TEMPLATES["ch_deep5"].depth, TEMPLATES["ch_deep4"].split, TEMPLATES["term_smalltalk"].depth) == (5, "ood", 0)


def test_oracle_retries_falls_back_and_stops():
    task = generate_task("rec_weather_timeout", 1)
    ep = run_episode(task, OraclePolicy())
    assert [c["outcome"] for c in ep.calls] == ["timeout", "ok"]
    task = generate_task("rec_weather_down", 1)
    ep = run_episode(task, OraclePolicy())
    assert [(c["canonical"], c["outcome"]) for c in ep.calls] == [
        ("get_weather", "service_unavailable"), ("get_weather_backup", "ok")]
    task = generate_task("appr_email_denied", 1)
    ep = run_episode(task, OraclePolicy())
    assert [c["outcome"] for c in ep.calls] == ["ok", "approval_denied"] and ep.status == "blocked"
    assert ep.world.state["outbox"] == []
    task = generate_task("perm_refund_viewer", 1, "eval")
    ep = run_episode(task, OraclePolicy())
    assert ep.calls == [] and ep.status == "refused"
