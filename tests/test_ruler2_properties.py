"""Ruler 2's properties (issue 37): the oracle earns the maximum on every template and naming, and
:func:`ccl.judge.ruler2.judge` never raises, whatever the final answer says or however a call is
malformed.

The hypothesis runs are derandomised (fixed examples, no example database) so the suite is
deterministic.
"""
from __future__ import annotations

import copy
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from experiments.ruler_farming.redteam import base as R
from ccl.judge import ruler2
from ccl.records import CallOutcome
from ccl.vocabulary import CRITERIA, RULER2
from ccl.world.tasks import TEMPLATES, generate_task

NAMINGS = (None, "train", "heldout")


def pool_of(name: str) -> str:
    return "train" if TEMPLATES[name].split == "train" else "eval"


def well_formed(verdict: dict) -> bool:
    """A verdict of the documented shape whose sparse reward is the conjunction of its criteria."""
    return (verdict["ruler"] == RULER2 and tuple(verdict["criteria"]) == CRITERIA
            and all(isinstance(v, bool) for v in verdict["criteria"].values())
            and verdict["success"] == all(verdict["criteria"].values())
            and all(isinstance(r, str) for r in verdict["reasons"]))


# ---------------------------------------------------------------- the oracle earns the maximum
@pytest.mark.parametrize("name", sorted(TEMPLATES))  # 2,640 episodes, about 20 s on 2 cores: not slow
def test_the_oracle_passes_every_criterion_on_every_naming_and_seed(name):
    for rename in NAMINGS:
        for seed in range(20):
            task = generate_task(name, seed, pool_of(name), rename=rename)
            verdict = ruler2.judge(task, R.play(task, R.oracle_turns(task)))
            assert verdict["success"] and all(verdict["criteria"].values()), (task["id"], verdict["reasons"])
            assert sum(ruler2.WEIGHTS[c] for c, ok in verdict["criteria"].items() if ok) == pytest.approx(1.0)


# ---------------------------------------------------------------- never raises
# One template of each family (and each expected status), canonical and renamed.
SAMPLE = ("sel_weather", "par_orders", "ch_order_fx", "rec_weather_timeout", "rec_weather_down", "rec_order_missing",
          "appr_email_denied", "perm_refund_viewer", "args_event_solo", "term_smalltalk", "sel_cheapest_flight")


@lru_cache(maxsize=1)
def oracle_episodes() -> tuple:
    out = []
    for name in SAMPLE:
        for rename in (None, "heldout"):
            task = generate_task(name, 1, pool_of(name), rename=rename)
            out.append((task, R.play(task, R.oracle_turns(task))))
    return tuple(out)


def cfg(n: int) -> settings:
    return settings(max_examples=n, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# text of every kind: any code point (control, format, surrogate-free), digits in bulk, huge numbers
huge_numbers = st.integers(10**308, 10**400).map(str) | st.integers(-(10**400), -(10**308)).map(str)
texts = (st.text(max_size=300) | st.text(st.characters(codec="utf-8"), max_size=300) | huge_numbers
         | st.text(alphabet="0123456789.,-−°CF ", max_size=80)
         | st.lists(st.sampled_from(["not", "maybe", "°C", "ORD-1", "{", "}", ":", "\u200b", "\x00", "\n", "or",
                                     "sent", "booked", "between", "and", "-", "1e309", "nan", "inf", "|"]),
                    max_size=40).map(" ".join))


@cfg(300)
@given(index=st.integers(0, len(SAMPLE) * 2 - 1), text=texts)
@example(index=0, text="")
@example(index=0, text="\x00\x01\x02\x1b[31m\u202e\ufeff")
@example(index=0, text="9" * 400 + "°C")
@example(index=1, text="In Madrid it is 1e309°C, nan and inf.")
def test_judge_never_raises_on_any_final_answer(index, text):
    task, record = oracle_episodes()[index]
    assert well_formed(ruler2.judge(task, {**record, "final": text}))


def _broken_calls(draw_kind: str, value: object, calls: list[dict]) -> list[dict]:
    """``calls`` with every call broken the way ``draw_kind`` names."""
    out = copy.deepcopy(calls)
    for c in out:
        if draw_kind == "args":
            c["args"] = value
        elif draw_kind == "cargs":
            c["cargs"] = None
        elif draw_kind == "unknown_tool":
            c.update(tool=value if isinstance(value, str) else "no_such_tool", canonical=None,
                     outcome=CallOutcome.UNKNOWN_TOOL, executed=False)
            c.pop("result", None)
        elif draw_kind == "observation":
            obs = c.get("observation")
            if isinstance(obs, dict) and obs:
                obs.pop(sorted(obs)[len(str(value)) % len(obs)])
            c.pop("result", None)
    return out


@cfg(200)
@given(index=st.integers(0, len(SAMPLE) * 2 - 1),
       kind=st.sampled_from(["args", "cargs", "unknown_tool", "observation"]),
       value=st.none() | st.integers() | st.text(max_size=20) | st.lists(st.integers(), max_size=3)
       | st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))
@example(index=0, kind="args", value=None)
@example(index=1, kind="cargs", value=None)
@example(index=2, kind="unknown_tool", value="send_email")
@example(index=3, kind="observation", value="")
def test_judge_never_raises_on_malformed_calls(index, kind, value):
    task, record = oracle_episodes()[index]
    broken = {**record, "calls": _broken_calls(kind, value, record["calls"])}
    assert well_formed(ruler2.judge(task, broken))
